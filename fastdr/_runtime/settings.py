"""Process-wide choices, in scikit-learn's manner: :func:`set_config`, :func:`get_config` and
:func:`config_context`. ``import fastdr`` writes nothing to ``os.environ``; each choice is
made here, explicitly.

- ``memory_budget``: bytes (or ``"2G"``) one dense allocation may use. Default None: the
  ``FASTDR_MEMORY_BUDGET`` environment variable if set, else 80% of the memory available to
  the process (cgroup limits included), because the m x m methods must refuse before the
  operating system kills the process.
- ``threading_layer``: numba's threading layer for fastdr's first launch. Default None:
  ``NUMBA_THREADING_LAYER`` if set, else ``"forksafe"``, because numba's default GNU OpenMP
  layer terminates a child forked after a launch (``multiprocessing`` pools). numba fixes
  its layer at the first parallel launch in the process; changing it later raises.
- ``openblas_thread_timeout``: how long idle OpenBLAS workers spin (2^N cycles) in the
  OpenBLAS copies loaded *after* the call. Default None: OpenBLAS's own (spin up to 2^28
  cycles), because only the user may change the process's environment.
  Setting 12 makes them sleep sooner, so they do not starve numba's threads on a small
  machine (``docs/guide/runtime.md``); OpenBLAS reads the variable once, when it loads.
"""

import os
from contextlib import contextmanager

_CONFIG = {"memory_budget": None, "threading_layer": None, "openblas_thread_timeout": None}
_LAYERS = ("default", "forksafe", "threadsafe", "safe", "workqueue", "omp", "tbb")


def get_config():
    """The current values of :func:`set_config`'s choices.

    Returns
    -------
    dict
    """
    return dict(_CONFIG)


def set_config(*, memory_budget=None, threading_layer=None, openblas_thread_timeout=None):
    """Set fastdr's process-wide choices (a None argument leaves its choice unchanged).

    Parameters
    ----------
    memory_budget : int or str or None
        Bytes one dense allocation may use, as an int or with a K/M/G/T suffix (``"2G"``).
        Takes precedence over ``FASTDR_MEMORY_BUDGET``; ``"auto"`` returns to the default:
        80% of the memory available to the process (cgroup limits included), so that an
        m x m method refuses with MemoryBudgetError before the system kills the process.
    threading_layer : str or None
        numba's threading layer (``"forksafe"``, ``"workqueue"``, ``"omp"``, ``"tbb"``, ...)
        for the first parallel launch in the process; after it, numba's layer is fixed and a
        different choice raises ``RuntimeError``. Default: ``NUMBA_THREADING_LAYER`` if set,
        else ``"forksafe"``, because numba's GNU OpenMP layer terminates a child forked after
        a launch (``multiprocessing`` pools).
    openblas_thread_timeout : int or None
        Sets ``OPENBLAS_THREAD_TIMEOUT`` (4 to 30: idle workers spin 2^N cycles) for
        OpenBLAS libraries loaded after this call; one already loaded keeps its setting.
        Default: OpenBLAS's own (2^28 cycles), because only you may change
        your process's environment; 12 keeps idle workers from starving numba's threads on
        a small machine.

    Examples
    --------
    >>> import fastdr
    >>> fastdr.set_config(memory_budget="4G")
    >>> fastdr.get_config()["memory_budget"]
    '4G'
    >>> fastdr.set_config(memory_budget="auto")
    """
    if memory_budget is not None:
        if memory_budget == "auto":
            _CONFIG["memory_budget"] = None
        else:
            from .._config import parse_bytes

            parse_bytes(str(memory_budget),
                        source=f"fastdr.set_config(memory_budget={memory_budget!r})")
            _CONFIG["memory_budget"] = memory_budget
    if threading_layer is not None:
        _set_layer(threading_layer)
    if openblas_thread_timeout is not None:
        if not isinstance(openblas_thread_timeout, int) or not 4 <= openblas_thread_timeout <= 30:
            raise ValueError(f"openblas_thread_timeout must be an int from 4 to 30 (OpenBLAS "
                             f"spins 2^N cycles); got {openblas_thread_timeout!r}.")
        os.environ["OPENBLAS_THREAD_TIMEOUT"] = str(openblas_thread_timeout)
        _CONFIG["openblas_thread_timeout"] = openblas_thread_timeout


def _set_layer(layer):
    import numba

    if layer not in _LAYERS:
        raise ValueError(f"threading_layer must be one of {', '.join(map(repr, _LAYERS))}; "
                         f"got {layer!r}.")
    try:
        running = numba.threading_layer()
    except ValueError:  # no launch yet: the choice applies at the first one
        numba.config.THREADING_LAYER = layer
        _CONFIG["threading_layer"] = layer
        return
    if layer != running and layer not in ("default", "forksafe", "threadsafe", "safe"):
        raise RuntimeError(f"numba's threading layer is already {running!r} (fixed at the "
                           f"first parallel launch in this process); choose {layer!r} "
                           "before anything runs in parallel, e.g. first thing after import.")
    _CONFIG["threading_layer"] = layer


@contextmanager
def config_context(**choices):
    """Apply :func:`set_config`'s ``memory_budget`` for the length of a ``with`` block.

    Only the memory budget can change and change back; the threading layer and the OpenBLAS
    timeout are fixed once used, so they are refused here.

    Parameters
    ----------
    **choices
        ``memory_budget=...``.

    Yields
    ------
    None
        The block runs with the budget in force; the previous one is restored after it.

    Examples
    --------
    >>> import fastdr
    >>> with fastdr.config_context(memory_budget="1G"):
    ...     pass
    """
    unknown = set(choices) - {"memory_budget"}
    if unknown:
        raise TypeError(f"config_context takes memory_budget only (the others cannot be "
                        f"undone once used); got {', '.join(sorted(unknown))}. Use "
                        "fastdr.set_config for them.")
    saved = dict(_CONFIG)
    try:
        set_config(**choices)
        yield
    finally:
        _CONFIG.update(saved)
