"""fastdr benchmarks: pytest-benchmark suites (``pytest bench``) and the comparison report
(``python -m bench.report``). Not part of the installed package."""
