"""Serial twins: their own cache entries, no parallel launch, the parallel kernel's values."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import fastdr

_MODULE = '''
import numpy as np
from numba import njit, prange

from fastdr._kernels.twins import serial_twin


@njit(cache=True, parallel=True)
def doubled(x):
    out = np.empty_like(x)
    for i in prange(x.shape[0]):
        out[i] = 2.0 * x[i]
    return out


doubled_serial = serial_twin(doubled)
'''

_PROBE = '''
import json

import numba
import numpy as np

import twin_probe as m

x = np.arange(5.0)
serial = m.doubled_serial(x)
try:
    numba.threading_layer()
    launched = True
except ValueError:  # no parallel region has run in this process
    launched = False
parallel = m.doubled(x)
print(json.dumps({
    "launched_by_serial": launched,
    "equal": bool((serial == parallel).all()),
    "qualnames": [m.doubled.py_func.__qualname__, m.doubled_serial.py_func.__qualname__],
    "hits": [sum(k.stats.cache_hits.values()) for k in (m.doubled, m.doubled_serial)],
    "misses": [sum(k.stats.cache_misses.values()) for k in (m.doubled, m.doubled_serial)],
}))
'''


@pytest.mark.jit_only  # the on-disk cache and the threading layer exist only when compiled
def test_serial_twin_has_its_own_cache_entry_and_launches_nothing(tmp_path):
    (tmp_path / "twin_probe.py").write_text(textwrap.dedent(_MODULE))
    root = str(Path(fastdr.__file__).resolve().parents[1])
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(tmp_path), root]))
    env.pop("NUMBA_DISABLE_JIT", None)
    runs = []
    for _ in range(2):  # the first process compiles and saves, the second loads
        done = subprocess.run([sys.executable, "-c", _PROBE], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=600, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["qualnames"] == ["doubled", "doubled_serial"]
    for run in runs:
        assert run["equal"] and not run["launched_by_serial"], run
    assert first["misses"] == [1, 1] and first["hits"] == [0, 0], first
    assert second["misses"] == [0, 0] and second["hits"] == [1, 1], second
    indexes = sorted(p.name.split("-")[0] for p in (tmp_path / "cache").rglob("*.nbi"))
    assert indexes == ["twin_probe.doubled", "twin_probe.doubled_serial"]


def test_serial_twin_keeps_the_parallel_options():
    from fastdr._kernels.distances import euclidean

    twin = euclidean.pack_targets_serial
    if not hasattr(twin, "targetoptions"):  # NUMBA_DISABLE_JIT: plain functions
        assert twin.__code__ is euclidean.pack_targets.__code__
        return
    assert twin.py_func.__code__ is euclidean.pack_targets.py_func.__code__
    assert twin.py_func.__qualname__ == "pack_targets_serial"
    assert twin.targetoptions["parallel"] is False
    assert euclidean.pack_targets.targetoptions["parallel"] is True
