"""The one vectorised exponential shared by the rbf kernel matrix and NCA."""

import numpy as np

from fastdr._kernels.learners import nca
from fastdr._kernels.spectral import kernel_matrix
from fastdr._kernels.vexp import EXP_FLOOR, exp_shifted


def _exp(values, shift=0.0):
    out = np.full_like(values, np.nan)
    scratch = np.empty_like(values)
    exp_shifted(values, shift, out, scratch)
    return out


def test_matches_numpy_on_minus_750_to_0_within_an_ulp(rng):
    x = np.concatenate([np.linspace(-750.0, 0.0, 300_001), -rng.random(20_000) * 1e-3,
                        -rng.random(20_000) * 750.0, [-708.0, -707.9999999, -1e-300, -0.0]])
    got = _exp(-x)
    expected = np.exp(x)
    kept = x >= EXP_FLOOR
    # np.exp itself is within about half an ulp: together below 3e-16 relative
    np.testing.assert_allclose(got[kept], expected[kept], rtol=3e-16, atol=0)
    # below the floor: exactly 0, never a subnormal or garbage from the exponent bits
    assert got[~kept].size > 1000
    assert (got[~kept] == 0.0).all()


def test_exact_values_at_the_ends():
    got = _exp(np.array([0.0, -0.0, 708.0, 708.0001, 745.2, 1e4, 1e300, np.inf]))
    assert got[0] == 1.0 and got[1] == 1.0
    assert abs(got[2] / np.exp(-708.0) - 1) < 3e-16
    np.testing.assert_array_equal(got[3:], 0.0)


def test_shift_is_subtracted_first(rng):
    values = rng.random(1000) * 700.0
    np.testing.assert_allclose(_exp(values + 5.0, 5.0), np.exp(-values), rtol=1e-12, atol=0)
    np.testing.assert_array_equal(_exp(np.array([3.5]), 3.5), [1.0])


def test_non_contiguous_views_and_lengths(rng):
    # every remainder of the vector width, and strided views as the kernels pass them
    for n in range(0, 19):
        values = rng.random(n) * 50.0
        np.testing.assert_allclose(_exp(values), np.exp(-values), rtol=3e-16, atol=0)
    base = rng.random(64) * 50.0
    out = np.empty(32)
    scratch = np.empty(64)
    exp_shifted(base[::2], 0.0, out, scratch[::2])
    np.testing.assert_allclose(out, np.exp(-base[::2]), rtol=3e-16, atol=0)


def test_both_callers_use_this_exponential():
    assert nca.exp_shifted is exp_shifted
    assert kernel_matrix.exp_shifted is exp_shifted
    assert not hasattr(kernel_matrix, "exp_nonpositive_inplace")
