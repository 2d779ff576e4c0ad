"""The benchmark suite and the report builder run end to end on tiny sizes, so neither rots,
and the engine both use times what it claims.

Both runners run as the README writes them, in fresh processes from the repository root (the
``slow`` tests). Timings are not checked; what is checked is that every benchmark runs, that
fastdr agrees with its anchors, and that the report has its sections, figures and raw results.
"""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]



def _run(args, timeout):
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.slow
def test_benchmark_modules_run_in_smoke_mode():
    from bench.workloads import WORKLOADS

    proc = _run(["-m", "pytest", "bench", "--profile", "smoke", "--benchmark-disable", "-q",
                 "-p", "no:cacheprovider"], timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    # every implementation that can run here did run (smoke: one size per workload), and
    # every skip names a missing estimator or optional anchor
    expected = sum(impl.available()[0] for w in WORKLOADS for impl in w.impls())
    passed = re.search(r"(\d+) passed", proc.stdout)
    assert passed and int(passed.group(1)) == expected, proc.stdout[-3000:]
    for line in proc.stdout.splitlines():
        if line.startswith("SKIPPED"):
            assert "not available" in line or "not installed" in line, line


@pytest.mark.slow
def test_report_builder_writes_report_figures_and_json(tmp_path):
    from bench.report.build import RESULT_KEYS
    from bench.workloads import WORKLOADS

    out = tmp_path / "report"
    proc = _run(["-m", "bench.report", "--profile", "smoke", "--out", str(out),
                 "--no-progress", "--metric-learn-env", "off"], timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]

    report = (out / "report.md").read_text()
    for section in ("## Machine", "## Speed", "## Scaling", "## Memory", "## Compile time",
                    "## Embeddings", "## Textbook experiments"):
        assert section in report
    assert list(out.glob("*.png"))
    assert (out / "scaling_neighbors.png").exists()
    assert (out / "experiment_nn_vs_bayes.png").exists()
    assert (out / "experiment_distance_concentration.png").exists()
    page = (out / "report.html").read_text()
    figures = re.findall(r"!\[[^\]]*\]\([^)]+\.png\)", report)  # images, not links
    assert figures and page.count("data:image/png;base64,") == len(figures)
    assert not re.search(r'<img[^>]*src="(?!data:)', page)  # every figure inlined
    assert {row["dtype"] for row in results_roofline(out)} == {"float32", "float64"}

    results = json.loads((out / "results.json").read_text())
    assert set(RESULT_KEYS) <= set(results)
    assert results["provenance"]["command"].startswith("python -m bench.report --profile smoke")
    assert results["profile"] == "smoke"
    assert results["machine"]["numba_threading_layer"]
    assert results["notes"] == []

    rows = {}
    for row in results["speed"]:
        rows.setdefault(row["workload"], []).append(row)
    assert set(rows) == {w.name for w in WORKLOADS}
    for workload in WORKLOADS:
        available, _ = workload.available()
        for row in rows[workload.name]:
            if not available:  # a method still being written: a note, never a crash
                assert row["status"] == "not available"
                continue
            assert row["status"] == "ok", row["impls"]["fastdr"]
            assert row["agreement"], f"{workload.name}: no agreement figure"
            for label, agreement in row["agreement"].items():
                assert agreement["ok"], f"{workload.name} vs {label}: {agreement}"
    knn = rows["knn_f64"][0]
    assert knn["ratios"]["sklearn"] > 0
    for name in ("pairwise", "knn_f64", "knn_classifier", "kernel_pca"):
        roof = rows[name][0]["roofline"]  # GEMM of the distance step's shape, this run
        assert roof["gemm_gflops"] > 0 and roof["fastdr_gflops"] > 0, roof
    assert "roofline" not in rows["pca"][0]
    assert "GEMM roofline" in report and "GFLOP/s" in report
    assert knn["agreement"]["sklearn"]["metric"] == "index agreement"
    mmc_anchor = rows["mmc"][0].get("impls", {}).get("metric-learn", {})
    if rows["mmc"][0]["status"] != "not available":
        assert "skipped" in mmc_anchor or "median_s" in mmc_anchor
    assert results["compile"] and "first_s" in results["compile"][0]
    assert results["experiments"]["nn_vs_bayes"]["supports_claim"]
    assert results["experiments"]["distance_concentration"]["supports_claim"]


class _Impl:
    """A stand-in workload implementation that records each call."""

    def __init__(self, seconds=0.0, result=1.0):
        self.calls, self.seconds, self.result, self.prepare = [], seconds, result, None
        self.label, self.call = "fake", "fake()"

    def run(self, data, state):
        self.calls.append(time.perf_counter())
        time.sleep(self.seconds)
        return self.result


def test_engine_checks_the_cold_result_before_timing_repeats():
    from bench.agreement import Agreement
    from bench.engine import measure

    impl, seen = _Impl(), []

    def check(result):
        seen.append(len(impl.calls))  # calls made when the check ran
        return Agreement("same", result, result == 1.0)

    found, kept = measure(impl, None, min_repeats=3, max_repeats=3, check=check,
                          keep_result=True)
    assert seen == [1] and len(impl.calls) == 4 and kept == 1.0
    assert len(found.times) == 3 and found.agreement.ok and found.cold_s >= 0
    wrong = _Impl(result=2.0)
    found, _ = measure(wrong, None, min_repeats=3, max_repeats=3, check=check,
                       stop_on_disagreement=True)
    assert not found.agreement.ok and found.times == [] and len(wrong.calls) == 1


def test_engine_repeats_stop_at_the_cap_and_use_the_runner():
    from bench.engine import measure, planned_rounds

    slow = _Impl(seconds=0.02)
    found, _ = measure(slow, None, min_repeats=5, max_repeats=5, cap_s=0.03)
    assert len(found.times) == 1  # cold + one repeat already exceed the cap
    assert planned_rounds(10.0, 5, 25.0) == 2 and planned_rounds(0.0, 5, float("inf")) == 5
    rounds_seen = []
    found, _ = measure(_Impl(), None, min_repeats=1, max_repeats=4, rss=True,
                       rounds_runner=lambda call, rounds: rounds_seen.append(rounds) or [0.5])
    assert rounds_seen == [4] and found.median == 0.5
    assert found.rss["peak_rss_bytes"] >= found.rss["rss_increase_bytes"] >= 0


def test_engine_check_that_raises_is_a_failed_agreement():
    from bench.engine import measure

    def broken(result):
        raise ValueError("shapes differ")

    found, _ = measure(_Impl(), None, min_repeats=1, max_repeats=1, check=broken)
    assert not found.agreement.ok and "ValueError: shapes differ" in found.agreement.detail


def test_engine_times_with_the_setup_objects_frozen_and_unfreezes_after():
    import gc

    from bench.engine import measure

    assert gc.get_freeze_count() == 0
    frozen = []

    class Recording(_Impl):
        def run(self, data, state):
            frozen.append(gc.get_freeze_count())
            return super().run(data, state)

    measure(Recording(), None, min_repeats=2, max_repeats=2)
    assert len(frozen) == 3 and min(frozen) > 0 and gc.get_freeze_count() == 0

    class Failing(_Impl):
        def run(self, data, state):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        measure(Failing(), None, min_repeats=1, max_repeats=1)
    assert gc.get_freeze_count() == 0


def test_gemm_roofline_times_the_same_shape_blocked_when_large():
    from bench.engine import gemm_seconds
    from bench.report.build import _roofline

    seconds, blocked = gemm_seconds(300, 200, 8, "float32", repeats=1)
    assert seconds > 0 and not blocked
    _, blocked = gemm_seconds(300, 200, 8, "float64", repeats=1, max_out_bytes=200 * 8 * 64)
    assert blocked
    roof = _roofline((300, 200, 8), "float64", 0.001)
    assert roof["flops"] == 2 * 300 * 200 * 8
    assert roof["fastdr_gflops"] == pytest.approx(roof["flops"] / 0.001 / 1e9)
    assert roof["fraction"] == pytest.approx(roof["gemm_s"] / 0.001)


@pytest.mark.slow
def test_dask_scaling_runs_and_both_cluster_sizes_agree(tmp_path):
    out = tmp_path / "scaling.json"
    proc = _run(["-m", "bench.dask_scaling", "--m", "1200", "--d", "8", "--chunks", "300",
                 "--landmarks", "40", "--repeats", "1", "--json", str(out)], timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert [s["workload"] for s in result["summary"]] == ["knn_pairs", "landmark_isomap"]
    assert all(s["same_result"] for s in result["summary"])
    assert {(r["workload"], r["workers"]) for r in result["rows"]} == {
        (w, n) for w in ("knn_pairs", "landmark_isomap") for n in (1, 2)}
    assert "efficiency T1/(2 T2)" in proc.stdout


@pytest.mark.slow
def test_report_times_fastdr_on_the_threading_layer_users_get():
    """The machine table must not start numba's default layer before fastdr picks its own:
    every timing after it would measure a layer a user's process does not run."""
    alone = _run(["-c", "import numba, numpy as np, fastdr; "
                  "fastdr.pairwise_distances(np.zeros((4, 2))); print(numba.threading_layer())"],
                 timeout=300)
    report = _run(["-c", "import numba; from bench.report.machine import machine_info; "
                   "info = machine_info(); "
                   "print(info['numba_threading_layer'], numba.threading_layer())"],
                  timeout=300)
    assert alone.returncode == 0 and report.returncode == 0, alone.stderr + report.stderr
    layer = alone.stdout.split()[-1]
    assert report.stdout.split()[-2:] == [layer, layer]


def results_roofline(out):
    """The roofline entries of a report's speed rows."""
    results = json.loads((out / "results.json").read_text())
    return [row["roofline"] for row in results["speed"]
            if row.get("roofline") and "fraction" in row["roofline"]]
