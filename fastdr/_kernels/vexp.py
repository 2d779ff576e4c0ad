"""One vectorised exponential for the kernels that take many ``exp`` of non-positive values.

numba has no vectorised libm here, so a loop calling ``np.exp`` runs one element at a time.
:func:`exp_shifted` is written so that LLVM vectorises it; the rbf kernel matrix
(:mod:`fastdr._kernels.spectral.kernel_matrix`) and the NCA softmax
(:mod:`fastdr._kernels.learners.nca`) both use it.

Method: Cody-Waite reduction ``x = k ln2 + t`` with ``|t| <= ln2 / 2`` (``k`` rounded to the
nearest integer by adding and subtracting ``1.5 * 2^52``), the degree-13 Taylor polynomial of
``exp(t)`` in Estrin's scheme (short dependency chains) with the leading ``1 + t`` added
last, and ``2^k`` built in the exponent bits of a scratch buffer. Relative error under
1.6e-16 (below one ulp) for ``x >= -708``; below
``-708`` (``exp(-708) = 3.3e-308``) the result is exactly 0, never a subnormal. ``exp(0)`` is
exactly 1.

Compiled without fast-math on purpose: the rounding shift must not be re-associated away.
"""

import numpy as np
from numba import njit

_INV_LN2 = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_ROUND_SHIFT = 6755399441055744.0  # 1.5 * 2**52: adding it rounds a double to an integer
#: Arguments below this give exactly 0 (``exp(-708)`` is 3.3e-308, just above the smallest
#: normal double).
EXP_FLOOR = -708.0
# Taylor coefficients 1 / k! of exp
_C2, _C3, _C4, _C5, _C6 = 0.5, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0
_C7, _C8, _C9 = 1.0 / 5040.0, 1.0 / 40320.0, 1.0 / 362880.0
_C10, _C11, _C12, _C13 = 1.0 / 3628800.0, 1.0 / 39916800.0, 1.0 / 479001600.0, 1.0 / 6227020800.0


@njit(cache=True)
def exp_shifted(values, shift, out, scratch):
    """``out[j] = exp(shift - values[j])`` for ``values[j] >= shift``, vectorisable. O(n).

    Parameters
    ----------
    values : (n,) float64
    shift : float
        ``shift - values[j]`` must be <= 0 (the result is only accurate there).
    out, scratch : (n,) float64
        Buffers of the same length, distinct from ``values`` and from each other (an in-place
        call would defeat vectorisation: the overlap check would pick the scalar loop).
    """
    n = values.shape[0]
    for j in range(n):
        v = shift - values[j]
        underflow = v < EXP_FLOOR
        v = EXP_FLOOR if underflow else v
        shifted = v * _INV_LN2 + _ROUND_SHIFT
        k = shifted - _ROUND_SHIFT
        scratch[j] = shifted
        t = (v - k * _LN2_HI) - k * _LN2_LO
        t2 = t * t
        t4 = t2 * t2
        t8 = t4 * t4
        # 1 + (t + t^2 q(t)): the large term is added last, so the sum rounds once
        a = (_C2 + _C3 * t) + t2 * (_C4 + _C5 * t)
        b = (_C6 + _C7 * t) + t2 * (_C8 + _C9 * t)
        c = (_C10 + _C11 * t) + t2 * (_C12 + _C13 * t)
        poly = 1.0 + (t + t2 * ((a + t4 * b) + t8 * c))
        out[j] = 0.0 if underflow else poly
    bits = scratch.view(np.int64)
    for j in range(n):
        # the low mantissa bits of ``shifted`` hold k (two's complement); move them into
        # the exponent field of a double equal to 2^k
        bits[j] = (bits[j] + 1023) << 52
    for j in range(n):
        out[j] *= scratch[j]
