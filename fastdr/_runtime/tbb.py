"""Make the ``tbb`` wheel's library visible to numba, so its TBB threading layer loads.

fastdr prefers numba's TBB layer: a launch costs a few microseconds there against about
50 to 80 on ``workqueue``, and Python threads launch side by side instead of taking turns
behind :mod:`fastdr._runtime.threads`'s lock (``bench/DECISIONS.md``, "threading layer").
On Linux x86_64, where the ``tbb`` wheel exists, it is a dependency.

Why this module exists. numba's TBB layer is an extension module that needs
``libtbb.so.12``, and the ``tbb`` wheel installs that library into ``<prefix>/lib``, a
folder the dynamic loader does not search (numba/numba#7148, #9740): ``pip install tbb``
alone leaves numba on ``workqueue``. The loader does match a library already in the process
by its name, so loading the wheel's ``libtbb.so.12`` first, by its full path, lets numba's
extension load. This is done once, before fastdr's first parallel launch, and only when
numba cannot load its TBB layer by itself (a system or conda TBB is left to win).
"""

import ctypes
import sys
from importlib import metadata

#: the wheel's library, by the name numba's TBB extension asks the loader for
LIBRARY = "libtbb.so.12"

_LOADED = None  # the path loaded, "" when nothing was, None before the first attempt


def _numba_tbb_loads():
    try:
        import numba.np.ufunc.tbbpool  # noqa: F401
    except ImportError:
        return False
    return True


def wheel_library():
    """The path of the ``tbb`` wheel's ``libtbb.so.12``, or None without the wheel.

    Returns
    -------
    pathlib.Path or None
    """
    try:
        dist = metadata.distribution("tbb")
    except metadata.PackageNotFoundError:
        return None
    for entry in dist.files or ():
        if entry.name == LIBRARY:
            path = dist.locate_file(entry)
            if path.exists():
                return path
    return None


def load_wheel_tbb():
    """Load the ``tbb`` wheel's library where numba cannot find TBB by itself (Linux).

    Called before the first parallel launch; later calls return the first answer.

    Returns
    -------
    str
        The library's path when it was loaded here, else ``""`` (not Linux, no wheel,
        numba finds a TBB by itself, or the library would not load).
    """
    global _LOADED
    if _LOADED is not None:
        return _LOADED
    _LOADED = ""
    if not sys.platform.startswith("linux") or _numba_tbb_loads():
        return _LOADED
    path = wheel_library()
    if path is None:
        return _LOADED
    try:
        ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    except OSError:  # a broken or foreign wheel: numba falls back to its next layer
        return _LOADED
    _LOADED = str(path)
    return _LOADED
