"""The ``nndescent`` benchmark row: self-column removal, recall agreement, optional anchor."""

import importlib.util

import numpy as np

from bench.data import Data, make_data
from bench.workloads import BY_NAME
from bench.workloads import approximate_neighbors as row


def test_drop_self_removes_each_point_once_or_the_last_column():
    ind = np.array([[0, 4, 2], [3, 0, 2], [2, 2, 0]])  # row 1 lacks itself; row 2 twice
    dist = ind * 10.0
    d, i = row.drop_self(dist, ind, k=2)
    np.testing.assert_array_equal(i, [[4, 2], [3, 0], [2, 0]])
    np.testing.assert_array_equal(d, i * 10.0)


def test_recall_and_agreement_against_exact_neighbours():
    rng = np.random.default_rng(0)
    data = Data(rng.normal(size=(120, 4)).astype(np.float32))
    X = data.X.astype(np.float64)
    sq = ((X[:, None] - X[None]) ** 2).sum(-1)
    np.fill_diagonal(sq, np.inf)
    exact = np.argsort(sq, axis=1)[:, :row.K]
    assert row.recall((None, exact), data) == 1.0
    wrong = exact.copy()
    wrong[:, :3] = np.argsort(sq, axis=1)[:, row.K:row.K + 3]  # 3 of 15 replaced
    assert abs(row.recall((None, wrong), data) - 12 / 15) < 1e-12
    worse = row._against_anchor((None, wrong), (None, exact), data)
    assert worse.metric == "recall" and not worse.ok
    assert "anchor recall 1.000" in worse.detail
    assert row._against_anchor((None, exact), (None, wrong), data).ok
    one_miss = exact.copy()
    one_miss[0, 0] = np.argsort(sq[0])[row.K]  # 1 of 1,800 neighbours: within the slack
    assert row._against_anchor((None, one_miss), (None, exact), data).ok
    assert not row._alone((None, wrong), data).ok  # 0.8 < 0.95


def test_fastdr_row_runs_and_anchor_skips_cleanly_without_pynndescent(monkeypatch):
    workload = BY_NAME["nndescent"]
    data = make_data(workload.data_kind, 200, 10, workload.dtype)
    result = workload.fastdr.run(data, None)
    assert result[1].shape == (200, row.K)
    assert workload.truth_agreement(result, data).ok
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pynndescent" else real(name, *a))
    (anchor,) = workload.anchors
    ok, reason = anchor.runnable(200)
    assert not ok and reason == ("skipped: pynndescent is not installed "
                                 "(pip install pynndescent)")
