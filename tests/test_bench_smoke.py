"""The benchmark suite and the report builder run end to end on tiny sizes, so neither rots.

Both run as the README writes them, in fresh processes from the repository root. Timings are
not checked (no timed tests); what is checked is that every benchmark runs, that fastdr agrees
with its anchors, and that the report has its sections, figures and raw results.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _run(args, timeout):
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)


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

    results = json.loads((out / "results.json").read_text())
    assert set(RESULT_KEYS) <= set(results)
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
    assert knn["agreement"]["sklearn"]["metric"] == "index agreement"
    mmc_anchor = rows["mmc"][0].get("impls", {}).get("metric-learn", {})
    if rows["mmc"][0]["status"] != "not available":
        assert "skipped" in mmc_anchor or "median_s" in mmc_anchor
    assert results["compile"] and "first_s" in results["compile"][0]
    assert results["experiments"]["nn_vs_bayes"]["supports_claim"]
    assert results["experiments"]["distance_concentration"]["supports_claim"]
