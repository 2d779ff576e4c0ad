"""fastdr benchmarks: the pytest-benchmark suite (``pytest bench``) and the comparison report
(``python -m bench.report``), both reading one workload registry (``bench.workloads``) and
timing through one engine (``bench.engine``). Not part of the installed package.

Before numpy loads, the benchmarks set ``OPENBLAS_THREAD_TIMEOUT=12`` unless it is set (as
``import fastdr`` does for any OpenBLAS loaded after it): idle OpenBLAS workers then sleep
instead of spinning for about 0.1 s, which on a 2-core box starves whatever runs next, the
other library's BLAS copy included. It applies to fastdr and every anchor alike.
"""

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "12")
