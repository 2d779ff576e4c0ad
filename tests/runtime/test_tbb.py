"""numba's TBB layer from the ``tbb`` wheel: found, loaded once, and launching without the lock."""

import os
import platform
import subprocess
import sys
import textwrap
from importlib import metadata

import pytest

from fastdr._runtime import tbb

# the platforms where pyproject.toml declares the dependency
WHEEL_PLATFORM = sys.platform.startswith("linux") and platform.machine() == "x86_64"
needs_wheel = pytest.mark.skipif(not WHEEL_PLATFORM,
                                 reason="the tbb wheel is a dependency on Linux x86_64 only")


def _run(code):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_THREADING_LAYER", "LD_LIBRARY_PATH", "LD_PRELOAD")}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.fixture
def fresh(monkeypatch):
    """load_wheel_tbb as if not called yet, with numba unable to find a TBB by itself."""
    monkeypatch.setattr(tbb, "_LOADED", None)
    monkeypatch.setattr(tbb.sys, "platform", "linux")
    monkeypatch.setattr(tbb, "_numba_tbb_loads", lambda: False)
    loaded = []
    monkeypatch.setattr(tbb.ctypes, "CDLL", lambda path, mode=0: loaded.append(path))
    return loaded


@pytest.mark.jit_only  # a launch starts numba's layer; interpreted kernels launch nothing
@needs_wheel
def test_a_fresh_process_launches_on_tbb():
    # the first launch goes through parallel_section, as every fastdr launch does
    layer, lock_needed = _run("""
        import numba, numpy as np
        from numba import njit, prange
        from fastdr._runtime import threads

        @njit(parallel=True)
        def total(a):
            s = 0.0
            for i in prange(a.shape[0]):
                s += a[i]
            return s

        with threads.parallel_section(None):
            total(np.ones(100))
        print(numba.threading_layer(), threads._launch_lock_needed())
    """)
    assert layer == "tbb"
    assert lock_needed == "False"


@pytest.mark.jit_only  # until a launch names the layer, the lock is taken
@needs_wheel
def test_kneighbors_in_another_thread_does_not_wait_for_the_launch_lock():
    # the main thread holds the lock workqueue launches would wait for; on TBB the other
    # thread's n_jobs=1 search must finish anyway, with the one-thread answer
    finished, same = _run("""
        import threading
        import numpy as np
        from fastdr import NearestNeighbors
        from fastdr._runtime import threads

        X = np.random.default_rng(0).standard_normal((3000, 40))
        index = NearestNeighbors(n_neighbors=5, n_jobs=1).fit(X)
        expected = index.kneighbors()
        out = []
        with threads._LAUNCH_LOCK:
            worker = threading.Thread(target=lambda: out.append(index.kneighbors()))
            worker.start()
            worker.join(120)
        print(not worker.is_alive(), bool(out) and all(
            np.array_equal(a, b) for a, b in zip(out[0], expected)))
    """)
    assert finished == "True"
    assert same == "True"


@needs_wheel
def test_the_wheel_library_is_found():
    path = tbb.wheel_library()
    assert path is not None and path.name == tbb.LIBRARY and path.exists()


def test_loads_the_wheel_library_once(fresh, monkeypatch, tmp_path):
    library = tmp_path / tbb.LIBRARY
    library.write_bytes(b"")
    monkeypatch.setattr(tbb, "wheel_library", lambda: library)
    assert tbb.load_wheel_tbb() == str(library)
    assert tbb.load_wheel_tbb() == str(library)
    assert fresh == [str(library)]


def test_leaves_a_tbb_numba_finds_by_itself(fresh, monkeypatch):
    monkeypatch.setattr(tbb, "_numba_tbb_loads", lambda: True)
    assert tbb.load_wheel_tbb() == ""
    assert fresh == []


def test_nothing_to_load_off_linux(fresh, monkeypatch):
    monkeypatch.setattr(tbb.sys, "platform", "darwin")
    assert tbb.load_wheel_tbb() == ""
    assert fresh == []


def test_nothing_to_load_without_the_wheel(fresh, monkeypatch):
    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(tbb.metadata, "distribution", missing)
    assert tbb.wheel_library() is None
    assert tbb.load_wheel_tbb() == ""
    assert fresh == []


def test_a_library_that_will_not_load_leaves_numba_its_next_layer(fresh, monkeypatch,
                                                                  tmp_path):
    def refuse(path, mode=0):
        raise OSError("wrong ELF class")

    monkeypatch.setattr(tbb, "wheel_library", lambda: tmp_path / tbb.LIBRARY)
    monkeypatch.setattr(tbb.ctypes, "CDLL", refuse)
    assert tbb.load_wheel_tbb() == ""
