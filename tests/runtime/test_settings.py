"""fastdr.set_config / get_config / config_context: process-wide choices, made explicitly."""

import os
import subprocess
import sys

import numpy as np
import pytest

import fastdr
from fastdr._config import memory_budget


@pytest.fixture(autouse=True)
def _restore():
    saved = fastdr.get_config()
    yield
    from fastdr._runtime import settings

    settings._CONFIG.update(saved)


def test_memory_budget_precedence_and_context(monkeypatch):
    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", "3G")
    assert memory_budget() == 3 * 2**30
    fastdr.set_config(memory_budget="1G")
    assert memory_budget() == 2**30  # the explicit choice wins over the variable
    with fastdr.config_context(memory_budget=1000):
        assert memory_budget() == 1000
        with pytest.raises(fastdr.MemoryBudgetError, match="needs 80,000 bytes"):
            fastdr.pairwise_distances(np.zeros((100, 2)))
    assert fastdr.get_config()["memory_budget"] == "1G"
    fastdr.set_config(memory_budget="auto")
    assert memory_budget() == 3 * 2**30


@pytest.mark.parametrize("bad", ["lots", "-1", "inf"])
def test_bad_memory_budget_names_the_setting(bad):
    with pytest.raises(ValueError, match=rf"memory_budget='{bad}'\) is not a usable memory "
                                         "budget"):
        fastdr.set_config(memory_budget=bad)


def test_bad_values_are_refused_with_the_choices():
    with pytest.raises(ValueError, match="threading_layer must be one of"):
        fastdr.set_config(threading_layer="gpu")
    with pytest.raises(ValueError, match="int from 4 to 30"):
        fastdr.set_config(openblas_thread_timeout=99)
    with pytest.raises(TypeError, match="config_context takes memory_budget only"):
        with fastdr.config_context(threading_layer="tbb"):
            pass


@pytest.mark.jit_only  # the layer exists only when numba runs compiled parallel code
def test_threading_layer_applies_at_the_first_launch_and_is_fixed_after():
    code = """
import numba, numpy as np, fastdr
fastdr.set_config(threading_layer="workqueue")
fastdr.pairwise_distances(np.random.rand(300, 20))
print(numba.threading_layer())
try:
    fastdr.set_config(threading_layer="omp")
except RuntimeError as exc:
    print("refused:", "already 'workqueue'" in str(exc))
"""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["workqueue", "refused:", "True"]
