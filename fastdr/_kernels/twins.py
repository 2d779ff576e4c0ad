"""Serial twins: a parallel kernel's own body compiled a second time without ``parallel``.

Small inputs are cheaper on the calling thread than through a parallel launch, so some
callers pick a kernel's serial twin below a size threshold. The twin is not a second copy of
the code: :func:`serial_twin` compiles the same Python function with ``parallel=False``,
where ``prange`` runs as ``range`` (same iterations, same order within each, same values bit
for bit). Its numba options are the parallel kernel's, ``parallel`` aside.

numba's on-disk cache names a function's index file after its module, qualified name and
first line, and does not key its entries on the ``parallel`` flag: a second dispatcher of the
same function would read and overwrite the parallel kernel's entries. So the twin compiles a
copy of the function under its own qualified name, ``<name>_serial``, which gets its own
cache file.
"""

import types

from numba import jit


def serial_twin(kernel):
    """Return ``kernel`` (an ``njit(cache=True, parallel=True)`` dispatcher) compiled serially.

    Parameters
    ----------
    kernel : numba dispatcher
        A parallel kernel of this package (every one is compiled with ``cache=True``).

    Returns
    -------
    numba dispatcher
        The same function, named ``<name>_serial``, compiled with ``parallel=False`` and
        ``cache=True``: it launches no parallel region and returns the same values.
    """
    body = getattr(kernel, "py_func", kernel)  # a plain function under NUMBA_DISABLE_JIT
    name = body.__name__ + "_serial"
    copy = types.FunctionType(body.__code__, body.__globals__, name, body.__defaults__,
                              body.__closure__)
    copy.__qualname__ = body.__qualname__ + "_serial"
    copy.__kwdefaults__ = body.__kwdefaults__
    copy.__doc__ = (f":func:`{body.__name__}` on the calling thread (the same body compiled "
                    "without ``parallel``: the same values, no launch).")
    options = dict(getattr(kernel, "targetoptions", {}))
    options["parallel"] = False
    return jit(cache=True, **options)(copy)
