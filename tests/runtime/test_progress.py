"""Verbose output of the long fits: stage lines, the chunked progress bar, and that chunking
changes no result."""

import inspect
import io
import sys
import types

import numpy as np
import pytest
from sklearn.base import clone

from fastdr import Isomap, NearestNeighbors
from fastdr._kernels.graph import shortest_paths as graph_kernels
from fastdr._runtime.progress import StageLog, run_in_chunks

from ..estimators import fit_output, make_estimator, small_data


def _recorder(calls, out):
    def run(lo, hi):
        calls.append((lo, hi))
        out[lo:hi] += 1
    return run


def test_quiet_log_runs_the_work_in_one_call(capsys):
    calls, out = [], np.zeros(1000, dtype=np.int64)
    run_in_chunks(StageLog("Est", 0), 1000, _recorder(calls, out), what="items", threads=2)
    run_in_chunks(None, 1000, _recorder(calls, out), what="items", threads=2)
    assert calls == [(0, 1000), (0, 1000)]
    assert capsys.readouterr() == ("", "")


def test_short_verbose_run_times_two_probe_chunks_then_finishes_in_one_call(capsys):
    calls, out = [], np.zeros(1000, dtype=np.int64)
    run_in_chunks(StageLog("Est", 1), 1000, _recorder(calls, out), what="items", threads=2)
    assert calls == [(0, 16), (16, 32), (32, 1000)]  # probe = ceil(1000 / 64)
    assert (out == 1).all()
    assert capsys.readouterr().err == ""


def test_probe_chunks_hold_one_item_per_thread_and_tiny_work_is_not_split():
    calls, out = [], np.zeros(100, dtype=np.int64)
    run_in_chunks(StageLog("Est", 1), 100, _recorder(calls, out), what="items", threads=8)
    assert calls[:2] == [(0, 8), (8, 16)]
    calls.clear()
    run_in_chunks(StageLog("Est", 1), 10, _recorder(calls, out), what="items", threads=8)
    assert calls == [(0, 10)]


def test_long_run_draws_the_plain_bar_when_tqdm_is_missing(monkeypatch):
    monkeypatch.setattr(StageLog, "long_run_s", 0.0)
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    err = io.StringIO()
    calls, out = [], np.zeros(1000, dtype=np.int64)
    log = StageLog("Est", 1, out=io.StringIO(), err=err)
    run_in_chunks(log, 1000, _recorder(calls, out), what="things", threads=2)
    assert (out == 1).all()
    starts = [lo for lo, _ in calls]
    assert starts == sorted(starts) and len(calls) > 50  # about 100 bar steps
    text = err.getvalue()
    assert "[Est] things |" in text and "1000/1000" in text
    assert text.endswith("\r")  # the bar's line is erased at the end


def test_long_run_uses_tqdm_when_installed_and_imports_it_only_then(monkeypatch):
    made = []

    class FakeBar:
        def __init__(self, total, desc, file, leave):
            self.total, self.desc, self.n, self.closed = total, desc, 0, False
            made.append(self)

        def update(self, n):
            self.n += n

        def close(self):
            self.closed = True

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=FakeBar))
    calls, out = [], np.zeros(1000, dtype=np.int64)
    log = StageLog("Est", 1, out=io.StringIO(), err=io.StringIO())
    run_in_chunks(log, 1000, _recorder(calls, out), what="things", threads=2)
    assert made == []  # a short run shows no bar
    monkeypatch.setattr(StageLog, "long_run_s", 0.0)
    run_in_chunks(log, 1000, _recorder(calls, out), what="things", threads=2)
    assert len(made) == 1
    assert (made[0].desc, made[0].total, made[0].n, made[0].closed) == (
        "[Est] things", 1000, 1000, True)


def test_stage_lines_report_the_time_since_the_previous_stage():
    out = io.StringIO()
    log = StageLog("Est", 1, out=out)
    first = log.done("first stage")
    second = log.done("second stage")
    whole = log.total()
    assert whole >= first + second
    lines = out.getvalue().splitlines()
    assert lines[0] == f"[Est] first stage: {first:.2f} s"
    assert lines[1] == f"[Est] second stage: {second:.2f} s"
    assert lines[2].startswith("[Est] fit: ") and lines[2].endswith(" s in all")



# ---------------------------------------------------------------- estimators

VERBOSE_ESTIMATORS = {
    "Isomap": ["[NearestNeighbors] k-NN search", "[Isomap] neighbour graph",
               "[Isomap] short-circuit check", "[Isomap] connected components",
               "[Isomap] shortest paths (dijkstra", "[Isomap] double centring and eigensolver",
               "[Isomap] distances restored", "[Isomap] fit:"],
    "LocallyLinearEmbedding": ["[LocallyLinearEmbedding] neighbours (k=8)",
                               "[LocallyLinearEmbedding] barycentre weights",
                               "[LocallyLinearEmbedding] matrix M",
                               "[LocallyLinearEmbedding] eigensolver",
                               "[LocallyLinearEmbedding] fit:"],
    "KernelPCA": ["[KernelPCA] kernel matrix (rbf, 90 x 90)",
                  "[KernelPCA] centring and eigensolver", "[KernelPCA] fit:"],
    "ClassicalMDS": ["[ClassicalMDS] centred scatter (5 x 5) and eigensolver",
                     "[ClassicalMDS] fit:"],
    "NearestNeighbors": ["[NearestNeighbors] fit (kd_tree)",
                         "[NearestNeighbors] k-NN search (kd_tree, k=4)"],
    "KNeighborsClassifier": ["[KNeighborsClassifier] k-NN search (kd_tree, k=4)",
                             "[KNeighborsClassifier] vote"],
    "KNeighborsRegressor": ["[KNeighborsRegressor] k-NN search (kd_tree, k=4)",
                            "[KNeighborsRegressor] weighted mean"],
}


@pytest.mark.parametrize("name", sorted(VERBOSE_ESTIMATORS))
def test_verbose_zero_prints_nothing_and_one_prints_every_stage(name, capsys):
    X, y = small_data()
    fit_output(make_estimator(name), X, y)
    assert capsys.readouterr() == ("", "")
    fit_output(make_estimator(name, verbose=1), X, y)
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    for stage in VERBOSE_ESTIMATORS[name]:
        assert any(line.startswith(stage) for line in lines), (stage, lines)
    assert all(line.endswith(" s") or line.endswith(" s in all") for line in lines), lines
    assert captured.err == ""  # a short run draws no bar


@pytest.mark.parametrize("name", sorted(VERBOSE_ESTIMATORS))
def test_verbose_is_a_plain_parameter(name):
    est = make_estimator(name, verbose=2)
    assert est.get_params()["verbose"] == 2
    twin = clone(est)
    assert twin.verbose == 2 and twin is not est
    assert inspect.signature(type(est)).parameters["verbose"].default == 0


def _recording(monkeypatch, module, name):
    """Wrap a kernel so that each launch's range arguments (its last two) are recorded."""
    calls = []
    kernel = getattr(module, name)

    def wrapper(*args):
        calls.append(args[-2:])
        return kernel(*args)

    monkeypatch.setattr(module, name, wrapper)
    return calls


def test_isomap_dijkstra_in_chunks_under_a_bar_is_bit_identical(rng, monkeypatch, capsys):
    X = rng.standard_normal((300, 3))
    calls = _recording(monkeypatch, graph_kernels, "all_pairs_upper")
    quiet = Isomap(n_neighbors=8, random_state=0, n_jobs=2).fit(X)
    assert calls == [(0, 19)]  # one launch over all ceil(300 / 16) source blocks
    capsys.readouterr()
    monkeypatch.setattr(StageLog, "long_run_s", 0.0)
    monkeypatch.setitem(sys.modules, "tqdm", None)
    calls.clear()
    loud = Isomap(n_neighbors=8, random_state=0, n_jobs=2, verbose=1).fit(X)
    assert len(calls) > 2 and calls[0] == (0, 2) and calls[-1][1] == 19
    assert all(calls[i][1] == calls[i + 1][0] for i in range(len(calls) - 1))  # no gap
    assert "[Isomap] Dijkstra (16 sources per step) |" in capsys.readouterr().err
    np.testing.assert_array_equal(loud.dist_matrix_, quiet.dist_matrix_)
    np.testing.assert_array_equal(loud.embedding_, quiet.embedding_)


def test_landmark_dijkstra_in_chunks_under_a_bar_is_bit_identical(rng, monkeypatch, capsys):
    X = rng.standard_normal((300, 3))
    calls = _recording(monkeypatch, graph_kernels, "dijkstra_columns")
    quiet = Isomap(n_neighbors=8, n_landmarks=64, random_state=0, n_jobs=2).fit(X)
    assert calls == [(0, 8)]  # one launch over all 64 / 8 landmark groups
    capsys.readouterr()
    monkeypatch.setattr(StageLog, "long_run_s", 0.0)
    monkeypatch.setitem(sys.modules, "tqdm", None)
    calls.clear()
    loud = Isomap(n_neighbors=8, n_landmarks=64, random_state=0, n_jobs=2, verbose=1).fit(X)
    assert len(calls) > 2 and calls[-1][1] == 8
    captured = capsys.readouterr()
    assert "[Isomap] landmark Dijkstra (8 sources per step) |" in captured.err
    assert "[Isomap] landmark shortest paths (random, L=64)" in captured.out
    np.testing.assert_array_equal(loud.landmarks_, quiet.landmarks_)
    np.testing.assert_array_equal(loud.embedding_, quiet.embedding_)


@pytest.mark.parametrize("algorithm, d, self_query", [
    ("brute", 20, False),  # knn_screen over query blocks
    ("brute", 20, True),  # (m <= 1024: not the self-query kernel) offset moved per chunk
    ("brute", 4, True),  # knn_direct over query rows
    ("kd_tree", 4, True),  # scipy's tree over query rows
])
def test_knn_search_in_chunks_under_a_bar_is_bit_identical(rng, monkeypatch, capsys,
                                                           algorithm, d, self_query):
    T = rng.standard_normal((400, d))
    Q = None if self_query else rng.standard_normal((500, d))
    quiet = NearestNeighbors(n_neighbors=5, algorithm=algorithm, n_jobs=2).fit(T)
    expected = quiet.kneighbors(Q)
    capsys.readouterr()
    monkeypatch.setattr(StageLog, "long_run_s", 0.0)
    monkeypatch.setitem(sys.modules, "tqdm", None)
    loud = NearestNeighbors(n_neighbors=5, algorithm=algorithm, n_jobs=2, verbose=1).fit(T)
    got = loud.kneighbors(Q)
    assert "[NearestNeighbors] k-NN queries" in capsys.readouterr().err
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
