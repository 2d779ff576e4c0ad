"""The metric-learn worker that runs the MMC and LMNN anchors in a separate Python environment.

A stand-in ``metric_learn`` package (written to a temporary directory) plays metric-learn, so
the protocol, the data hand-over and the error paths are tested without installing it.
"""

import sys
import textwrap

import numpy as np
import pytest

from bench import external
from bench.workloads import metric_learning

pytestmark = pytest.mark.slow  # tests bench/ (installed with the [bench] extras), not fastdr

STAND_IN = textwrap.dedent('''
    import numpy as np

    __version__ = "0.0-stand-in"


    class MMC_Supervised:
        def __init__(self, random_state=None):
            self.random_state = random_state

        def fit(self, X, y):
            if len(np.unique(y)) < 2:
                raise ValueError("needs two classes")
            self.components_ = np.diag(np.arange(1.0, X.shape[1] + 1))
            self.n_iter_ = 7
            return self

        def get_mahalanobis_matrix(self):
            return self.components_.T @ self.components_
''')


@pytest.fixture
def stand_in(tmp_path):
    package = tmp_path / "metric_learn"
    package.mkdir()
    (package / "__init__.py").write_text(STAND_IN)
    sklearn_stub = tmp_path / "sklearn"
    sklearn_stub.mkdir()
    (sklearn_stub / "__init__.py").write_text('__version__ = "0.0-stub"\n')
    worker = external.Worker(sys.executable, pythonpath=tmp_path)
    yield worker
    worker.close()


def test_worker_fits_on_data_loaded_once_and_returns_the_metric(stand_in):
    assert stand_in.versions["metric_learn"] == "0.0-stand-in"
    X = np.random.default_rng(0).standard_normal((30, 3))
    y = np.arange(30) % 2
    stand_in.load("key", X, y)
    stand_in.load("key", X, y)  # a second load of the same key sends nothing
    assert stand_in.loaded == {"key"}
    fitted = external.FittedMetric(stand_in.call("fit", ("key", "MMC_Supervised",
                                                         {"random_state": 0})))
    np.testing.assert_array_equal(fitted.get_mahalanobis_matrix(), np.diag([1.0, 4.0, 9.0]))
    assert fitted.n_iter_ == 7 and fitted.fit_s >= 0


def test_worker_reports_errors_and_stays_usable(stand_in):
    X = np.ones((4, 2))
    stand_in.load("one-class", X, np.zeros(4))
    with pytest.raises(RuntimeError, match="metric-learn worker: ValueError: needs two classes"):
        stand_in.call("fit", ("one-class", "MMC_Supervised", {}))
    with pytest.raises(RuntimeError, match="unknown command 'nope'"):
        stand_in.call("nope", None)
    assert stand_in.call("hello", None)["metric_learn"] == "0.0-stand-in"


def test_worker_exit_is_an_error_not_a_hang(stand_in):
    stand_in.close()
    with pytest.raises((RuntimeError, OSError)):
        stand_in.call("hello", None)


def test_find_python_names_the_problem(monkeypatch, tmp_path):
    monkeypatch.setenv(external.PYTHON_ENV, "off")
    python, reason = external.find_python()
    assert python is None and "=off" in reason
    monkeypatch.setenv(external.PYTHON_ENV, sys.executable)
    if not external._works(sys.executable):
        python, reason = external.find_python()
        assert python is None and "cannot import metric_learn" in reason
    monkeypatch.delenv(external.PYTHON_ENV)
    monkeypatch.setenv("FASTDR_CACHE_DIR", str(tmp_path))
    python, reason = external.find_python(create=False)
    if python is None:
        assert "no environment with metric-learn" in reason
    assert external.venv_dir() == tmp_path / "metric-learn-0.7"


def test_mmc_anchor_runs_through_the_worker(stand_in, monkeypatch):
    from bench.data import make_data

    monkeypatch.setattr(metric_learning, "_metric_learn_here", lambda: False)
    monkeypatch.setattr(external, "worker", lambda: (stand_in, ""))
    data = make_data("blobs10", 60, 4)
    assert metric_learning._metric_learn_available() == (True, "")
    state = metric_learning._metric_learn_prepare(data)
    fitted = metric_learning._metric_learn_fit("MMC_Supervised", {"random_state": 0})(data,
                                                                                       state)
    np.testing.assert_array_equal(fitted.components_, np.diag([1.0, 2.0, 3.0, 4.0]))
    monkeypatch.setattr(external, "worker", lambda: (None, "no environment"))
    ok, reason = metric_learning._metric_learn_available()
    assert not ok and "no environment" in reason and "not installed" in reason


def test_worker_takes_a_large_payload(stand_in):
    X = np.random.default_rng(1).standard_normal((20000, 64))  # 10 MB
    y = np.arange(20000) % 3
    stand_in.load("big", X, y)
    fitted = external.FittedMetric(stand_in.call("fit", ("big", "MMC_Supervised", {})))
    assert fitted.get_mahalanobis_matrix().shape == (64, 64)


class _Metric:
    def __init__(self, components):
        self.components_ = np.asarray(components, dtype=float)

    def get_mahalanobis_matrix(self):
        return self.components_.T @ self.components_


def test_mmc_agreement_needs_the_objective_and_the_accuracy():
    from bench.data import make_data

    data = make_data("blobs10", 400, 4)
    euclid = _Metric(np.eye(4))
    same = metric_learning._mmc_agreement(euclid, _Metric(np.eye(4)), data)
    assert same.ok and "two standard errors" in same.detail
    # a metric that drops three of the four features: worse objective and accuracy
    crushed = _Metric(np.diag([1.0, 1e-6, 1e-6, 1e-6]))
    assert not metric_learning._mmc_agreement(crushed, euclid, data).ok


def test_lmnn_objective_is_fastdrs_loss_and_drives_the_agreement():
    from bench import agreement
    from bench.data import make_data
    from fastdr.metric_learning._lmnn import target_neighbours
    from fastdr.metric_learning._lmnn_loss import LMNNLoss

    data = make_data("blobs10", 300, 4)
    L = np.random.default_rng(0).standard_normal((4, 4))
    Xc = np.ascontiguousarray(data.X - data.X.mean(axis=0))
    codes = np.unique(data.y, return_inverse=True)[1].astype(np.int64)
    loss = LMNNLoss(Xc, codes, target_neighbours(Xc, codes, 3), 0.5)(L)[1]
    np.testing.assert_allclose(agreement.lmnn_objective(data.X, data.y, L), loss, rtol=1e-10)
    euclid = _Metric(np.eye(4))
    assert metric_learning._lmnn_agreement(euclid, _Metric(np.eye(4)), data).ok
    # a map that blurs the classes: a higher loss and a lower accuracy than the identity
    crushed = _Metric(np.diag([1.0, 1e-3, 1e-3, 1e-3]))
    assert not metric_learning._lmnn_agreement(crushed, euclid, data).ok


def test_machine_section_does_not_start_the_worker(monkeypatch, stand_in):
    from bench.report import machine

    def must_not_start():
        raise AssertionError("machine_info started the metric-learn worker")

    monkeypatch.setattr(external, "worker", must_not_start)
    monkeypatch.setattr(external, "find_python", lambda create=False: must_not_start())
    monkeypatch.setitem(external._STATE, "worker", None)
    info = machine.machine_info()
    assert "metric_learn_version" in info
    assert machine.external_metric_learn_version() is None  # no MMC row ran: nothing started
    monkeypatch.setitem(external._STATE, "worker", stand_in)  # an MMC row started it
    assert machine.external_metric_learn_version().startswith("0.0-stand-in (separate")
