"""fastdr.show_versions() and ``python -m fastdr``: what a bug report and an image build need."""

import subprocess
import sys

import numba
import numpy as np
import pytest
import scipy
import sklearn

import fastdr
from fastdr import __main__ as cli
from fastdr._kernels._numba_ext import host_cpu
from fastdr._runtime import versions


def test_show_versions_names_every_fact_a_bug_report_needs(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    fastdr.show_versions()
    out = capsys.readouterr().out
    for text in (f"fastdr: {fastdr.__version__}", f"numba: {numba.__version__}",
                 f"numpy: {np.__version__}", f"scipy: {scipy.__version__}",
                 f"sklearn: {sklearn.__version__}", "threading layer:",
                 f"numba threads: {numba.config.NUMBA_NUM_THREADS}",
                 f"numba cache: {tmp_path / 'cache'}", "BLAS:", "cpu:"):
        assert text in out, text
    blas = versions.versions()["BLAS"]
    assert blas and all("threads" in text for text in blas.values())


def test_host_cpu_reports_the_compile_target(monkeypatch):
    name, features = host_cpu()
    assert name and features.startswith(("+", "-"))
    monkeypatch.setattr(numba.config, "CPU_NAME", "generic")
    assert host_cpu()[0] == "generic"


def test_cli_warmup_compiles_and_says_where_the_cache_went(capsys, monkeypatch, tmp_path):
    from fastdr._runtime import warmup

    calls = []
    monkeypatch.setattr(warmup, "warmup", lambda verbose: calls.append(verbose) or {"a": 1.5})
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    assert cli.main(["warmup"]) == 0
    out = capsys.readouterr().out
    assert calls == [True]
    assert f"into {tmp_path}" in out and "done in 1.5 s" in out


def test_cli_runs_as_a_module_and_refuses_an_unknown_task():
    done = subprocess.run([sys.executable, "-m", "fastdr", "show-versions"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"fastdr: {fastdr.__version__}" in done.stdout
    with pytest.raises(SystemExit):
        cli.main(["compile-everything"])
