"""The compile notice: once per process, on a cache miss only, on stdout for a verbose fit."""

import logging
import os
import subprocess
import sys

import pytest

from fastdr._runtime import compile_notice

SCRIPT = """
import logging, sys
import numpy as np
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
import fastdr
X = np.random.default_rng(0).random((40, 3))
fastdr.NearestNeighbors(n_neighbors=3, algorithm="brute", verbose=1).fit(X).kneighbors()
fastdr.pairwise_distances(np.random.default_rng(1).random((40, 20)))  # more kernels compile
"""


def _run(cache):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    env.pop("NUMBA_DISABLE_JIT", None)
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, done.stderr


@pytest.mark.jit_only  # compile events exist only when numba compiles
def test_notice_once_per_process_and_only_when_kernels_compile(tmp_path):
    out, err = _run(tmp_path / "cache")
    assert out.count("[fastdr] compiling kernels for first use") == 1  # the fit is verbose
    assert err.count("fastdr: compiling kernels for first use") == 1  # the log, once
    assert str(tmp_path / "cache") in err
    out, err = _run(tmp_path / "cache")  # a second process loads everything from the cache
    assert "compiling kernels" not in out + err


def test_announce_logs_once_and_prints_only_for_a_verbose_fit(monkeypatch, caplog, capsys):
    monkeypatch.setitem(compile_notice._STATE, "said", False)
    compile_notice.set_thread_verbose(0)
    with caplog.at_level(logging.INFO, logger="fastdr"):
        compile_notice._announce("fastdr._kernels.knn.brute.knn_direct")
        compile_notice._announce("fastdr._kernels.knn.brute.other")
    assert [r.getMessage().count("knn_direct") for r in caplog.records] == [1]
    assert capsys.readouterr().out == ""
    monkeypatch.setitem(compile_notice._STATE, "said", False)
    compile_notice.set_thread_verbose(1)
    try:
        compile_notice._announce("fastdr._kernels.x.y")
    finally:
        compile_notice.set_thread_verbose(0)
    assert capsys.readouterr().out.startswith("[fastdr] compiling kernels for first use")
