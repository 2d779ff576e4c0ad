"""Numba kernels. No validation, no Python objects, no user-facing errors live here.

Every function is compiled lazily on first call (importing compiles nothing) and cached on
disk (``cache=True``) where it takes no function arguments.
"""
