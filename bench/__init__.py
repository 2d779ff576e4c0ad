"""fastdr benchmarks: the pytest-benchmark suite (``pytest bench``) and the comparison report
(``python -m bench.report``), both reading one workload registry (``bench.workloads``) and
timing through one engine (``bench.engine``). Not part of the installed package."""
