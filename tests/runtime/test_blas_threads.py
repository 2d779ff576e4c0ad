"""OpenBLAS thread counts around kernel launches, and the launch lock (issues 12 and 13)."""

import os
import subprocess
import sys
import textwrap
import threading
import time

import numba
import numpy as np
import pytest

import fastdr
from fastdr._runtime import blas as _blas
from fastdr._runtime import threads as _parallel


def _launch_loop(stop, errors):
    # compiled, large enough that a launch lasts milliseconds so the main thread can catch
    # one; interpreted (NUMBA_DISABLE_JIT coverage pass), a tiny launch is already that slow,
    # and must stay short: the caller mode waits out the launch in progress, so its entries
    # per minute are bounded by the launch time (m=200 took 0.4 s under coverage)
    m = 40 if numba.config.DISABLE_JIT else 3000
    X = np.random.default_rng(0).standard_normal((m, 20))
    nn = fastdr.NearestNeighbors(n_neighbors=3, algorithm="brute").fit(X)
    try:
        while not stop.is_set():
            nn.kneighbors()
    except Exception as exc:  # reported in the main thread
        errors.append(exc)


def test_only_the_blas_numba_calls_is_limited():
    import numpy

    numpy_dir = os.path.realpath(os.path.dirname(numpy.__file__) + ".libs")
    paths = _blas._numba_blas_paths()
    assert paths, "no OpenBLAS found: this test environment needs the numpy/scipy wheels"
    if any(not p.startswith(numpy_dir) for p, _ in _blas._blas_libraries()):
        # numpy ships its own OpenBLAS: fastdr must leave it alone
        assert not any(p.startswith(numpy_dir) for p in paths)


def test_launches_leave_numpy_own_blas_alone():
    numpy_own = _blas._controls(numpy_own=True)
    assert numpy_own, "numpy ships its own OpenBLAS in the wheels this test environment uses"
    baseline = _blas.controlled_thread_counts(numpy_own=True)
    stop = threading.Event()
    errors = []
    thread = threading.Thread(target=_launch_loop, args=(stop, errors))
    thread.start()
    seen_numba, seen_numpy = set(), set()
    try:
        deadline = time.monotonic() + 60
        reads = 0
        while time.monotonic() < deadline and (1 not in seen_numba or reads < 2000):
            seen_numba.add(_blas.controlled_thread_counts()[0])
            seen_numpy.add(tuple(_blas.controlled_thread_counts(numpy_own=True)))
            reads += 1
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not errors, errors
    assert 1 in seen_numba  # the other thread's launches did limit numba's OpenBLAS
    assert seen_numpy == {tuple(baseline)}  # and never numpy's


def test_single_threaded_blas_limits_numpy_own_blas_too():
    with _blas.single_threaded_blas():
        assert set(_blas.controlled_thread_counts(numpy_own=True)) <= {1}
        assert set(_blas.controlled_thread_counts()) <= {1}
    assert _blas._OTHERS_DEPTH == 0 and _blas._ACTIVE == [0, 0]


def test_caller_mode_never_sees_the_launch_limit():
    controls = _blas._controls()
    assert controls, "no OpenBLAS found: this test environment needs the numpy/scipy wheels"
    before = _blas.controlled_thread_counts()
    for _, setter in controls:  # a count above 1, so the launch limit is visible
        setter(max(2, before[0]))
    baseline = _blas.controlled_thread_counts()
    stop = threading.Event()
    errors = []
    # two launching threads: one is always queued on the launch lock (workqueue), so only
    # the caller mode's priority lets it in at all
    threads = [threading.Thread(target=_launch_loop, args=(stop, errors)) for _ in range(2)]
    for thread in threads:
        thread.start()
    seen_outside, seen_inside = set(), set()
    try:
        deadline = time.monotonic() + 60
        bodies = 0
        while time.monotonic() < deadline and (1 not in seen_outside or bodies < 200):
            for _ in range(20):  # look for a launch in progress for up to about 2 ms
                seen_outside.add(_blas.controlled_thread_counts()[0])
                if 1 in seen_outside:
                    break
                time.sleep(0.0001)
            with _blas.caller_blas_threads():
                seen_inside.add(tuple(_blas.controlled_thread_counts()))
                time.sleep(0.0005)  # give a launch the chance to start (it must not)
                seen_inside.add(tuple(_blas.controlled_thread_counts()))
            bodies += 1
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        for (_, setter), count in zip(controls, before, strict=True):
            setter(count)
    assert not errors, errors
    assert bodies >= 200, f"the caller mode was entered only {bodies} times in 60 s"
    assert seen_inside == {tuple(baseline)}
    # the other thread's launches did limit OpenBLAS outside the caller mode: not vacuous
    assert 1 in seen_outside
    assert _blas._ACTIVE == [0, 0]


def test_launch_inside_caller_mode_on_the_same_thread():
    with _blas.caller_blas_threads():
        X = np.random.default_rng(0).standard_normal((50, 20))
        got = fastdr.pairwise_distances(X)
        assert _blas._ACTIVE == [0, 1]
    np.testing.assert_allclose(got, fastdr.pairwise_distances(X), rtol=0, atol=0)
    assert _blas._ACTIVE == [0, 0]


def test_workqueue_keeps_the_launch_lock():
    X = np.random.default_rng(0).standard_normal((50, 20))
    fastdr.pairwise_distances(X)
    import numba

    assert _parallel._launch_lock_needed() == (
        numba.threading_layer() not in _parallel.THREAD_SAFE_LAYERS)


@pytest.mark.jit_only  # interpreted (coverage pass) it takes most of a minute or more
def test_concurrent_unlocked_launches_on_a_thread_safe_layer():
    # on omp the lock is lifted: many threads launching at once must still give the serial
    # results, and launches must really overlap
    code = textwrap.dedent("""
        import threading
        import numba
        import numpy as np
        import fastdr
        from fastdr._runtime import threads as _parallel

        rng = np.random.default_rng(0)
        X = rng.standard_normal((400, 24))
        ref_d, ref_i = fastdr.NearestNeighbors(n_neighbors=5, algorithm="brute").fit(
            X).kneighbors()
        ref_p = fastdr.pairwise_distances(X[:100], X)
        assert numba.threading_layer() == "omp", numba.threading_layer()
        assert not _parallel._launch_lock_needed()
        inside = [0]
        most = [0]
        guard = threading.Lock()

        class Counting:  # how many threads are inside a section at once
            def __enter__(self):
                with guard:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
            def __exit__(self, *exc):
                with guard:
                    inside[0] -= 1

        errors = []

        def work(j):
            try:
                for r in range(15):
                    n_jobs = 1 + (j + r) % 2
                    with _parallel.parallel_section(n_jobs), Counting():
                        d, i = fastdr.NearestNeighbors(n_neighbors=5, algorithm="brute",
                                                       n_jobs=n_jobs).fit(X).kneighbors()
                        p = fastdr.pairwise_distances(X[:100], X, n_jobs=n_jobs)
                    assert np.array_equal(d, ref_d) and np.array_equal(i, ref_i)
                    assert np.array_equal(p, ref_p)
            except Exception as exc:
                errors.append(repr(exc))

        threads = [threading.Thread(target=work, args=(j,)) for j in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        assert not errors, errors
        assert most[0] > 1, "no two launches overlapped"
        print("OK", most[0])
    """)
    env = dict(os.environ, NUMBA_THREADING_LAYER="omp")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("OK")


def test_caller_mode_inside_a_launch_keeps_the_limit_and_waits_for_nothing():
    with _parallel.parallel_section(1):
        with _blas.caller_blas_threads():
            assert set(_blas.controlled_thread_counts()) <= {1}
            assert _blas._ACTIVE == [1, 0]
    assert _blas._ACTIVE == [0, 0]


@pytest.mark.jit_only  # interpreted (coverage pass) it takes most of a minute or more
def test_isomap_and_lle_bit_identical_while_another_thread_launches():
    # their eigensolver runs in the caller mode: another thread's launches (which limit
    # OpenBLAS to one thread) cannot change its thread count mid-solve, nor the result
    rng = np.random.default_rng(0)
    # interpreted (the coverage pass), 1,000 points took over 200 s; 300 still solve a dense
    # eigenproblem large enough for OpenBLAS to use its threads
    X = rng.standard_normal((300 if numba.config.DISABLE_JIT else 1000, 20))

    def isomap():
        return fastdr.Isomap(n_neighbors=10, n_components=3,
                             eigen_solver="dense").fit_transform(X)

    def lle():
        return fastdr.LocallyLinearEmbedding(n_neighbors=12, n_components=3,
                                             eigen_solver="dense").fit_transform(X)

    reference = {"isomap": isomap(), "lle": lle()}
    stop = threading.Event()
    errors = []
    launcher = threading.Thread(target=_launch_loop, args=(stop, errors))
    diffs = {"isomap": [], "lle": []}

    def worker(name, fit):
        try:
            for _ in range(3):
                diffs[name].append(float(np.abs(fit() - reference[name]).max()))
        except Exception as exc:  # reported in the main thread
            errors.append(exc)

    workers = [threading.Thread(target=worker, args=("isomap", isomap)),
               threading.Thread(target=worker, args=("lle", lle))]
    launcher.start()
    for t in workers:
        t.start()
    for t in workers:
        t.join(timeout=600)
    stop.set()
    launcher.join(timeout=60)
    assert not errors, errors
    assert diffs == {"isomap": [0.0] * 3, "lle": [0.0] * 3}


def test_import_writes_nothing_to_the_environment():
    code = ("import os; before = dict(os.environ); import fastdr, fastdr.neighbors; "
            "print(dict(os.environ) == before)")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "True"


def test_set_config_sets_the_openblas_timeout_for_libraries_loaded_later():
    code = ("import os, fastdr; fastdr.set_config(openblas_thread_timeout=12); "
            "print(os.environ['OPENBLAS_THREAD_TIMEOUT'], fastdr.get_config()"
            "['openblas_thread_timeout'])")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "12 12"
