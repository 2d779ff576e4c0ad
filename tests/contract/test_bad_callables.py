"""User callables (metrics and kernels) are input too: their output is checked.

Before the checks in :mod:`fastdr._validation.callables`: an exception inside a jitted metric
left the parallel kernel's output unwritten (values like 4.7e-310 came back); negative and
NaN distances reached Dijkstra and the heaps; an array return gave numpy's "setting an array
element with a sequence" and a wrong signature numba's typing dump.
"""

import numba
import numpy as np
import pytest

import fastdr

X = np.random.default_rng(0).normal(size=(30, 4))


@numba.njit
def _raises_late(a, b):
    if a[0] > 1.5:  # not on the first pair (X[0, 0] < 1.5): only the parallel loop meets it
        raise ValueError("metric failed inside numba")
    return np.sqrt(((a - b) ** 2).sum())


@numba.njit
def _three_args(a, b, c):
    return 1.0


@numba.njit
def _returns_array(a, b):
    return a - b


def _negative(a, b):
    return -float(np.abs(a - b).sum())


def _nan_off_diagonal(a, b):
    return np.nan if a[1] > 1.0 else float(np.abs(a - b).sum())


ROUTES = {
    "kneighbors": lambda m: fastdr.NearestNeighbors(n_neighbors=3, metric=m).fit(X).kneighbors(),
    "radius": lambda m: fastdr.NearestNeighbors(radius=1.0, metric=m).fit(X)
    .radius_neighbors(),
    "pairwise": lambda m: fastdr.pairwise_distances(X, metric=m),
    "isomap": lambda m: fastdr.Isomap(n_neighbors=5, metric=m).fit(X),
    "classifier": lambda m: fastdr.KNeighborsClassifier(3, metric=m).fit(X, np.arange(30) % 2)
    .predict(X),
}


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_an_exception_inside_a_jitted_metric_reaches_the_caller(route):
    assert X[0, 0] < 1.5 and (X[:, 0] > 1.5).any()
    with pytest.raises(ValueError, match="metric failed inside numba"):
        ROUTES[route](_raises_late)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_negative_distances_are_refused(route):
    with pytest.raises(ValueError, match="negative distance"):
        ROUTES[route](_negative)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_nan_distances_are_refused_with_the_pair_named(route):
    with pytest.raises(ValueError, match=r"returned nan for rows \d+ and \d+"):
        ROUTES[route](_nan_off_diagonal)


@pytest.mark.parametrize("metric, message", [
    (_three_args, r"could not be called as func\(x, y\)"),
    (_returns_array, r"returned ndarray of shape \(4,\), not a number"),
    (lambda a, b: a - b, r"returned ndarray of shape \(4,\), not a number"),
    (lambda a, b: "far", r"returned str, not a number"),
])
def test_a_callable_of_the_wrong_shape_gets_a_message_that_says_so(metric, message):
    with pytest.raises(TypeError, match=message):
        fastdr.NearestNeighbors(n_neighbors=3, metric=metric).fit(X).kneighbors()


def test_callable_kernels_are_checked_the_same_way():
    with pytest.raises(TypeError, match="not a number"):
        fastdr.KernelPCA(2, kernel=lambda a, b: a * b).fit(X)
    with pytest.raises(ValueError, match="returned nan"):
        fastdr.KernelPCA(2, kernel=lambda a, b: np.nan if a[1] > 1.0 else float(a @ b)).fit(X)
    with pytest.raises(ValueError, match="returned inf"):
        fastdr.KernelPCA(2, kernel=lambda a, b: np.inf).fit(X)


def test_a_valid_jitted_metric_matches_the_python_one():
    @numba.njit
    def manhattan(a, b):
        return np.abs(a - b).sum()

    got = fastdr.pairwise_distances(X, metric=manhattan)
    want = fastdr.pairwise_distances(X, metric=lambda a, b: float(np.abs(a - b).sum()))
    np.testing.assert_array_equal(got, want)
