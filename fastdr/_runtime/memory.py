"""How much memory this process may still use: the host's available memory, lowered by any
cgroup memory limit the process runs under (a container, a batch job, systemd slice).

A container sees the host's ``/proc/meminfo``: a 4 GiB container on a 256 GiB host would
plan for 200 GiB and be killed by the kernel's OOM killer instead of getting fastdr's
:class:`~fastdr.exceptions.MemoryBudgetError`. So the limit of every cgroup from the
process's own up to the root counts, minus what that cgroup already uses:

- cgroup v2: ``memory.max`` (``max`` means none) and ``memory.current``, in
  ``/sys/fs/cgroup/<path>`` for the path on the ``0::`` line of ``/proc/self/cgroup``;
- cgroup v1: ``memory.limit_in_bytes`` (a value near 2^63 means none) and
  ``memory.usage_in_bytes``, in ``/sys/fs/cgroup/memory/<path>`` for the ``memory``
  controller's line.

Inside a container's cgroup namespace the path is ``/`` and the root files are the
container's own, so both layouts are read the same way.
"""

import os

#: Where the cgroup file systems are mounted, and the file naming this process's cgroups
#: (module attributes so that tests can point them at fake trees).
CGROUP_ROOT = "/sys/fs/cgroup"
PROC_SELF_CGROUP = "/proc/self/cgroup"
PROC_MEMINFO = "/proc/meminfo"

#: cgroup v1 writes "no limit" as the largest page-aligned int64; anything above 2^60 bytes
#: is no limit on any real machine.
_NO_LIMIT = 2**60
#: Returned when neither /proc/meminfo nor sysconf answers.
_FALLBACK_BYTES = 8 * 2**30


def available_memory():
    """Bytes this process may still allocate: the host's available memory, or less under a
    cgroup limit.

    Returns
    -------
    int
    """
    host = _host_available()
    limited = _cgroup_headroom()
    return host if limited is None else min(host, limited)


def _host_available():
    try:
        with open(PROC_MEMINFO) as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return _FALLBACK_BYTES


def _cgroup_headroom():
    """Smallest (limit - usage) over this process's cgroups and their ancestors, or None
    when no cgroup sets a memory limit (or the files cannot be read)."""
    try:
        with open(PROC_SELF_CGROUP) as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    best = None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            base, limit_file, usage_file = CGROUP_ROOT, "memory.max", "memory.current"
        elif "memory" in controllers.split(","):
            base = os.path.join(CGROUP_ROOT, "memory")
            limit_file, usage_file = "memory.limit_in_bytes", "memory.usage_in_bytes"
        else:
            continue
        for directory in _self_and_ancestors(base, path):
            limit = _read_bytes(os.path.join(directory, limit_file))
            if limit is None or limit >= _NO_LIMIT:
                continue
            used = _read_bytes(os.path.join(directory, usage_file)) or 0
            headroom = max(0, limit - used)
            best = headroom if best is None else min(best, headroom)
    return best


def _self_and_ancestors(base, path):
    """The cgroup directory of ``path`` under ``base`` and each parent up to ``base``."""
    parts = [p for p in path.strip("/").split("/") if p and p not in (".", "..")]
    for n in range(len(parts), -1, -1):
        yield os.path.join(base, *parts[:n])


def _read_bytes(name):
    """The integer in a cgroup file; None when absent, unreadable or "max"."""
    try:
        with open(name) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    try:
        return int(text)
    except ValueError:
        return None
