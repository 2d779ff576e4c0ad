"""Threads, processes, determinism and compilation, across every public estimator."""

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import threading
import time

import numba
import numpy as np
import pytest

from ..estimators import accepts, fit_output, make_estimator, public_estimators, small_data

ESTIMATORS = public_estimators()
NAMES = [name for name, _ in ESTIMATORS]


def _close(a, b):
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)
    else:
        np.testing.assert_array_equal(a, b)


def test_concurrent_threads_match_serial_results():
    X, y = small_data()
    serial = {name: fit_output(make_estimator(name), X, y) for name in NAMES}
    errors = []

    def worker(names):
        try:
            for _ in range(3):
                for name in names:
                    _close(fit_output(make_estimator(name), X, y), serial[name])
        except Exception as exc:  # reported in the main thread
            errors.append(exc)

    groups = [NAMES[i::4] for i in range(4)]
    threads = [threading.Thread(target=worker, args=(g,)) for g in groups]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, errors


def _child_output(name):
    X, y = small_data()
    return fit_output(make_estimator(name), X, y)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_process_pool_after_parallel_kernels_ran_in_parent(method):
    X, y = small_data()
    names = NAMES[:4]
    expected = [fit_output(make_estimator(n), X, y) for n in names]  # parent runs kernels
    ctx = mp.get_context(method)
    with ctx.Pool(2) as pool:
        result = pool.map_async(_child_output, names)
        got = result.get(timeout=240)
    for a, b in zip(got, expected, strict=True):
        _close(a, b)


# estimators whose kernels keep thread pools, BLAS and per-thread state alive in the parent
FORK_AFTER = ("Isomap", "KernelPCA", "NeighborhoodComponentsAnalysis")


def _wait_or_kill(pid, timeout):
    """The child's exit status, or None (after killing it) when it outlives ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # fork in a multi-threaded process
def test_bare_fork_after_isomap_kernel_pca_and_nca_ran_in_parent():
    X, y = small_data()
    # the parent runs the parallel kernels (two threads) before it forks
    expected = {name: fit_output(make_estimator(name, n_jobs=2), X, y) for name in FORK_AFTER}
    pid = os.fork()
    if pid == 0:  # child: the same fits must finish and agree; exit without pytest's teardown
        code = 1
        try:
            for name in FORK_AFTER:
                _close(fit_output(make_estimator(name, n_jobs=2), X, y), expected[name])
            code = 0
        finally:
            os._exit(code)
    status = _wait_or_kill(pid, timeout=240)
    assert status is not None, "the forked child hung"
    assert status == 0, f"the forked child failed (exit status {status})"


@pytest.mark.parametrize("name", [n for n, cls in ESTIMATORS if accepts(cls, "n_jobs")])
def test_results_identical_for_any_thread_count(name):
    X, y = small_data(m=150)
    outs = [fit_output(make_estimator(name, n_jobs=j), X, y) for j in (1, 2, None)]
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])


@pytest.mark.jit_only  # interpreted, prange is range: one thread, nothing to compare
@pytest.mark.parametrize("name", ["NearestNeighbors", "Isomap", "LocallyLinearEmbedding"])
def test_screened_self_query_identical_for_any_thread_count(name, monkeypatch):
    """float64 data with d >= GEMM_MIN_DIM take the certified float32 screen
    (fastdr/_kernels/knn_screen.py) for the fit's neighbour self-query."""
    from fastdr._kernels.knn import screen as knn_screen

    real = knn_screen.knn_screen
    calls = []

    def spy(*args):
        calls.append(args[-1].size)
        return real(*args)

    monkeypatch.setattr(knn_screen, "knn_screen", spy)
    X, y = small_data(m=300, d=16)
    outs = []
    for j in (1, 2, None):
        before = len(calls)
        outs.append(fit_output(make_estimator(name, n_jobs=j), X, y))
        assert len(calls) > before, "the fit did not reach the screened kernel"
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])


def _kernel_signature_count():
    import fastdr._kernels as kernels_pkg

    total = 0
    for mod_name in list(sys.modules):
        if mod_name.startswith(kernels_pkg.__name__ + "."):
            for obj in vars(sys.modules[mod_name]).values():
                if isinstance(obj, numba.core.registry.CPUDispatcher):
                    total += len(obj.signatures)
    return total


NO_JIT = pytest.mark.skipif(numba.config.DISABLE_JIT,
                            reason="compilation is switched off (NUMBA_DISABLE_JIT=1)")


@NO_JIT
def test_repeated_fits_do_not_recompile():
    X, y = small_data()
    for name in NAMES:
        fit_output(make_estimator(name), X, y)
    before = _kernel_signature_count()
    assert before > 0
    for name in NAMES:
        fit_output(make_estimator(name), X, y)
    X2, y2 = small_data(seed=3, m=120)
    for name in NAMES:
        fit_output(make_estimator(name), X2, y2)
    assert _kernel_signature_count() == before


@NO_JIT
def test_import_compiles_nothing_and_is_fast():
    code = (
        "import time, sys\n"
        "t = time.perf_counter()\n"
        "import fastdr\n"
        "elapsed = time.perf_counter() - t\n"
        "for name in fastdr.__all__:\n"
        "    getattr(fastdr, name)\n"
        "import numba\n"
        "n = 0\n"
        "for name, mod in list(sys.modules.items()):\n"
        "    if name.startswith('fastdr.'):\n"
        "        for obj in vars(mod).values():\n"
        "            if isinstance(obj, numba.core.registry.CPUDispatcher):\n"
        "                n += len(obj.signatures)\n"
        "print(elapsed, n)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    elapsed, compiled = float(out[0]), int(out[1])
    assert compiled == 0
    assert elapsed < 1.0, f"import fastdr took {elapsed:.2f} s"


def test_n_jobs_applies_only_for_the_call():
    from fastdr import NearestNeighbors

    before = numba.get_num_threads()
    X, _ = small_data()
    NearestNeighbors(n_neighbors=3, n_jobs=1).fit(X).kneighbors()
    assert numba.get_num_threads() == before


def test_bad_n_jobs():
    from fastdr import NearestNeighbors

    X, _ = small_data()
    with pytest.raises(ValueError, match=r"The 'n_jobs' parameter of NearestNeighbors must be "
                                         r"a non-zero int or None\. Got 0 instead\."):
        NearestNeighbors(n_neighbors=3, n_jobs=0).fit(X).kneighbors()
