"""fork while fastdr is busy in another thread, and fork after fastdr ran (issue 13).

Every child exits with ``os._exit`` and the parent waits with a deadline, so a child that
hangs (a lock copied in its held state) fails the test instead of hanging the run.
"""

import os
import threading
import time

import numpy as np
import pytest

import fastdr
from fastdr._runtime import blas as _blas
from fastdr._runtime import threads as _parallel

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

CHILD_DEADLINE = 120.0  # seconds; a healthy child needs well under a second


def _run_in_child(work):
    """Fork; the child runs ``work()`` (True for success) and exits. Returns the child's pid."""
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        code = 1
        try:
            code = 0 if work() else 1
        except BaseException:  # noqa: BLE001 - any failure is reported as the exit code
            code = 1
        finally:
            os._exit(code)
    return pid


def _wait(pid, deadline=CHILD_DEADLINE):
    """Exit status of child ``pid``; kills it and fails the test when it outlives the deadline."""
    stop = time.monotonic() + deadline
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > stop:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail(f"forked child {pid} hung for {deadline} s (a lock held at fork?)")
        time.sleep(0.01)


def _tiny_call():
    X = np.random.default_rng(1).standard_normal((60, 20))
    dist, _ = fastdr.NearestNeighbors(n_neighbors=3, algorithm="brute").fit(X).kneighbors()
    expected = np.sort(fastdr.pairwise_distances(X) + np.diag(np.full(60, np.inf)), axis=1)
    ok = np.allclose(dist, expected[:, :3], rtol=1e-12)
    # the child forgot the parent's running launches: nothing counted, nothing pinned
    return ok and _blas._ACTIVE == [0, 0] and _blas._OTHERS_DEPTH == 0


def test_fork_while_another_thread_runs_isomap():
    X = np.random.default_rng(0).standard_normal((300, 20))
    fastdr.Isomap(n_neighbors=8, n_components=2).fit(X)  # compile before the stress
    stop = threading.Event()
    errors = []

    def busy():
        try:
            while not stop.is_set():
                fastdr.Isomap(n_neighbors=8, n_components=2).fit(X)
        except Exception as exc:  # reported in the main thread
            errors.append(exc)

    thread = threading.Thread(target=busy)
    thread.start()
    try:
        codes = []
        for i in range(30):
            time.sleep(0.002 * (i % 7))  # fork at varied points of the other thread's fit
            codes.append(_wait(_run_in_child(_tiny_call)))
    finally:
        stop.set()
        thread.join(timeout=300)
    assert not thread.is_alive()
    assert not errors, errors
    assert codes == [0] * 30


def test_fork_while_locks_are_held_does_not_deadlock_the_child():
    # hold every fastdr lock and mode in another thread at the moment of the fork
    entered = threading.Event()
    release = threading.Event()

    def hold():
        with _blas.single_threaded_blas(), _parallel.parallel_section(1):
            with _parallel._LAUNCH_LOCK, _blas._COND:
                entered.set()
                release.wait(60)

    thread = threading.Thread(target=hold)
    thread.start()
    assert entered.wait(60)
    try:
        pid = _run_in_child(_tiny_call)
    finally:
        release.set()
        thread.join(timeout=60)
    assert _wait(pid) == 0


@pytest.mark.filterwarnings("ignore::fastdr.ConvergenceWarning")
def test_child_computes_after_isomap_kernel_pca_and_nca_ran_in_parent():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((120, 20))
    y = np.repeat(np.arange(3), 40)
    expected = {
        "isomap": fastdr.Isomap(n_neighbors=8, n_components=2).fit_transform(X),
        "kpca": fastdr.KernelPCA(n_components=2, kernel="rbf").fit_transform(X),
        "nca": fastdr.NeighborhoodComponentsAnalysis(n_components=2, max_iter=5,
                                                     random_state=0).fit_transform(X, y),
    }

    def again():
        got = {
            "isomap": fastdr.Isomap(n_neighbors=8, n_components=2).fit_transform(X),
            "kpca": fastdr.KernelPCA(n_components=2, kernel="rbf").fit_transform(X),
            "nca": fastdr.NeighborhoodComponentsAnalysis(n_components=2, max_iter=5,
                                                         random_state=0).fit_transform(X, y),
        }
        return all(np.allclose(got[k], expected[k], rtol=1e-9, atol=1e-12) for k in expected)

    assert _wait(_run_in_child(again)) == 0
