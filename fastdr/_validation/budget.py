"""Input and parameter checks shared by every public estimator and function.

All user-facing errors live in the public tier; kernels assume validated input. Every message
says what was expected, what was received, and what to do instead.
"""


import numpy as np

from .._config import budget_applies, memory_budget
from ..exceptions import MemoryBudgetError


def check_dense_allocation(shape, dtype, *, what, alternative):
    """Announce a dense allocation and refuse it when it would not fit.

    Parameters
    ----------
    shape : tuple of int
        Shape of the array about to be allocated.
    dtype : numpy dtype
        Its dtype.
    what : str
        What the array is, for the message (e.g. "the m x m geodesic distance matrix").
    alternative : str
        What the user can do instead (landmarks, float32, a smaller m, blocks).

    Returns
    -------
    int
        The number of bytes that will be allocated.

    Raises
    ------
    MemoryBudgetError
        When the bytes exceed :func:`fastdr._config.memory_budget`.
    """
    n_bytes = int(np.prod([int(s) for s in shape], dtype=np.float64)) * np.dtype(dtype).itemsize
    if not budget_applies(n_bytes):
        return n_bytes
    budget = memory_budget()
    if n_bytes > budget:
        dims = " x ".join(str(int(s)) for s in shape)
        raise MemoryBudgetError(
            f"{what} needs {n_bytes:,} bytes ({n_bytes / 2**30:.2f} GiB, shape {dims}, "
            f"{np.dtype(dtype).name}), more than the memory budget of {budget:,} bytes "
            f"({budget / 2**30:.2f} GiB). {alternative} The budget is 80% of available "
            "memory, or the FASTDR_MEMORY_BUDGET environment variable."
        )
    return n_bytes

