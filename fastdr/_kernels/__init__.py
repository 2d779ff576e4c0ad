"""Numba kernels. No validation, no Python objects, no user-facing errors live here.

Every function is compiled lazily on first call (importing compiles nothing) and cached on
disk (``cache=True``) where it takes no function arguments. The first kernel that misses
the cache in a process is announced once (:mod:`fastdr._runtime.compile_notice`).
"""

from .._runtime.compile_notice import install as _install_compile_notice

# one notice per process when a kernel first misses numba's cache (compiles nothing)
_install_compile_notice()
