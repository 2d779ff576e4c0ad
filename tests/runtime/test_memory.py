"""The memory budget under cgroup limits: fake v1 and v2 trees, read as a container would."""

import numpy as np
import pytest

import fastdr
from fastdr._runtime import memory

GIB = 2**30


def _fake_host(monkeypatch, tmp_path, cgroup_lines, available=64 * GIB):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(f"MemTotal: {128 * GIB // 1024} kB\n"
                       f"MemAvailable: {available // 1024} kB\n")
    self_cgroup = tmp_path / "self_cgroup"
    self_cgroup.write_text("".join(line + "\n" for line in cgroup_lines))
    root = tmp_path / "cgroup"
    root.mkdir()
    monkeypatch.setattr(memory, "PROC_MEMINFO", str(meminfo))
    monkeypatch.setattr(memory, "PROC_SELF_CGROUP", str(self_cgroup))
    monkeypatch.setattr(memory, "CGROUP_ROOT", str(root))
    monkeypatch.delenv("FASTDR_MEMORY_BUDGET", raising=False)
    return root


def _write(directory, **files):
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name.replace("_", ".", 1)).write_text(text + "\n")


def test_no_cgroup_limit_leaves_the_host_figure(monkeypatch, tmp_path):
    root = _fake_host(monkeypatch, tmp_path, ["0::/"])
    _write(root, memory_max="max", memory_current=str(GIB))
    assert memory.available_memory() == 64 * GIB


def test_cgroup_v2_limit_below_the_host_wins(monkeypatch, tmp_path):
    root = _fake_host(monkeypatch, tmp_path, ["0::/job/step"])
    # the process's own cgroup has no limit, its parent has 4 GiB with 1 GiB in use
    _write(root / "job" / "step", memory_max="max", memory_current=str(GIB // 2))
    _write(root / "job", memory_max=str(4 * GIB), memory_current=str(GIB))
    assert memory.available_memory() == 3 * GIB
    assert fastdr._config.memory_budget() == int(0.8 * 3 * GIB)


def test_cgroup_v1_limit_below_the_host_wins(monkeypatch, tmp_path):
    root = _fake_host(monkeypatch, tmp_path,
                      ["4:memory:/docker/abc", "3:cpu,cpuacct:/docker/abc", "0::/"])
    _write(root / "memory" / "docker" / "abc", memory_limit_in_bytes=str(2 * GIB),
           memory_usage_in_bytes=str(GIB // 2))
    # v1's root writes "no limit" as the largest page-aligned int64
    _write(root / "memory", memory_limit_in_bytes="9223372036854771712",
           memory_usage_in_bytes=str(10 * GIB))
    assert memory.available_memory() == 2 * GIB - GIB // 2


def test_host_below_the_cgroup_limit_wins(monkeypatch, tmp_path):
    root = _fake_host(monkeypatch, tmp_path, ["0::/"], available=GIB)
    _write(root, memory_max=str(16 * GIB), memory_current="0")
    assert memory.available_memory() == GIB


def test_unreadable_cgroup_files_fall_back_to_the_host(monkeypatch, tmp_path):
    _fake_host(monkeypatch, tmp_path, ["0::/gone", "garbage line"])
    assert memory.available_memory() == 64 * GIB
    monkeypatch.setattr(memory, "PROC_SELF_CGROUP", str(tmp_path / "missing"))
    assert memory.available_memory() == 64 * GIB


def test_a_faked_container_limit_raises_the_budget_error(monkeypatch, tmp_path):
    """A 2,000 x 2,000 float64 distance matrix (32 MB) does not fit a 32 MiB container with
    half of it in use: fastdr refuses with its own error instead of being OOM-killed."""
    root = _fake_host(monkeypatch, tmp_path, ["0::/"])
    _write(root, memory_max=str(32 * 2**20), memory_current=str(16 * 2**20))
    with pytest.raises(fastdr.MemoryBudgetError, match="needs 32,000,000 bytes"):
        fastdr.pairwise_distances(np.zeros((2000, 2)))
