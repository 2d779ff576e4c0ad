"""The GEMM-roofline column: judged in the precision fastdr's distance step runs in, with a
one-triangle self-product charged half the work."""

import numpy as np

from bench.data import Data
from bench.report import build
from bench.report.markdown import _roofline_text
from bench.workloads import BY_NAME


def test_screened_knn_rows_are_judged_against_the_float32_gemm():
    from fastdr._config import GEMM_MIN_DIM

    wide = Data(np.zeros((10, GEMM_MIN_DIM), dtype=np.float64))
    narrow = Data(np.zeros((10, GEMM_MIN_DIM - 1), dtype=np.float64))
    for name in ("knn_f64", "knn_f64_queries", "knn_f32", "knn_classifier"):
        workload = BY_NAME[name]
        assert workload.distance_dtype(wide) == "float32", name
    assert BY_NAME["knn_f64"].distance_dtype(narrow) == "float64"
    assert BY_NAME["pairwise"].distance_dtype is None  # float64 GEMM, the input's dtype
    assert BY_NAME["pairwise"].distance_triangle


def test_roofline_uses_the_given_precision_and_halves_a_triangle(monkeypatch):
    calls = []

    def fake_gemm(queries, keys, d, dtype):
        calls.append(dtype)
        return 2.0, False

    monkeypatch.setattr(build, "gemm_seconds", fake_gemm)
    full = build._roofline((100, 200, 10), "float32", 4.0)
    assert calls == ["float32"]
    assert full["flops"] == 2.0 * 100 * 200 * 10
    assert full["fraction"] == 0.5 and full["gemm_s"] == 2.0
    half = build._roofline((100, 100, 10), "float64", 1.0, triangle=True)
    assert half["flops"] == 100 * 100 * 10
    assert half["gemm_s"] == 1.0 and half["fraction"] == 1.0
    assert half["gemm_gflops"] == half["flops"] / 1.0 / 1e9
    assert "float64 (1e+02%)" in _roofline_text(half)
