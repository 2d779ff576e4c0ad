"""The two MMC solvers of Xing et al. (2002): full M by projections, diagonal M by L-BFGS-B.

Both solve the equivalent scaled problem of the paper and return an M that the caller
rescales onto the textbook constraint ``sum_{D} d_M(x_i, x_j) = 1``:

* full M: maximise ``g(M) = sum_D sqrt(v^T M v)`` subject to ``f(M) = sum_S v^T M v <= t``
  and ``M`` PSD, by gradient ascent on g, each step followed by alternating projections onto
  the half-space ``f(M) <= t`` and the PSD cone (``eigh``, clip; never Cholesky);
* diagonal M = diag(w): minimise the convex ``h(w) = f(w) - c log g(w)`` over ``w >= 0`` by
  scipy's L-BFGS-B.

``f`` is linear in M, so it is the inner product with the must-link scatter
``S = sum_S v v^T``; ``g`` and its gradient are sums over cannot-link pairs from the numba
kernels in ``fastdr._kernels.learners.mmc``.
"""

import contextlib
import contextvars

import numpy as np

from .. import _config as config
from .._kernels.learners import mmc as mmc_kernels
from .._runtime.threads import parallel_section
from ._base import project_psd

_PROJECTION_EPS = 0.01  # relative violation of f(M) <= t accepted without a projection
_MULTIPLIER_RTOL = 1e-3  # a projection lands within this share of the level t


# the n_jobs of the MMC fit running in this thread (or context); see kernel_threads
_N_JOBS = contextvars.ContextVar("fastdr_mmc_n_jobs", default=None)


@contextlib.contextmanager
def kernel_threads(n_jobs):
    """Run the pair kernels called inside the block on ``n_jobs`` threads (the fit's own)."""
    token = _N_JOBS.set(n_jobs)
    try:
        yield
    finally:
        _N_JOBS.reset(token)


#: Serial twins of the parallel pair kernels: the same sums, bit for bit, with no launch.
_SERIAL = {mmc_kernels.pair_outer_sum: mmc_kernels.pair_outer_sum_serial,
           mmc_kernels.pair_quadratic_forms: mmc_kernels.pair_quadratic_forms_serial}


def run_kernel(kernel, X, a, *args):
    """Call a pair kernel on the fit's ``n_jobs`` threads, BLAS single-threaded.

    Below ``MMC_SERIAL_MAX_WORK`` (pairs x d^2) the kernel's serial twin runs instead: a
    numba launch on the workqueue layer costs more than such a sum, and an
    MMC fit makes a few hundred of them. The result is the same either way.
    """
    if kernel in _SERIAL and a.shape[0] * X.shape[1] ** 2 <= config.MMC_SERIAL_MAX_WORK:
        kernel = _SERIAL[kernel]
    with parallel_section(_N_JOBS.get()):
        return kernel(X, a, *args)


def distance_sum(X, a, b, M):
    """``sum_k sqrt(v_k^T M v_k)`` over pairs, negative round-off clipped; and the distances."""
    q = run_kernel(mmc_kernels.pair_quadratic_forms, X, a, b, M)
    dist = np.sqrt(np.maximum(q, 0.0))
    return float(dist.sum()), dist


def distance_sum_gradient(X, a, b, dist):
    """Gradient of ``sum_k sqrt(v_k^T M v_k)`` w.r.t. M: ``sum_k v_k v_k^T / (2 d_k)``.

    Distances are floored at 1e-6 of their mean, where the square root's slope blows up.
    """
    floor = max(1e-6 * float(dist.mean()), np.finfo(np.float64).tiny)
    weights = 0.5 / np.maximum(dist, floor)
    return run_kernel(mmc_kernels.pair_outer_sum, X, a, b, weights)


def _ascent_direction(grad_g, scatter_unit):
    """The gradient of g made orthogonal to the constraint normal, unit length (or None)."""
    norm = np.linalg.norm(grad_g)
    if norm == 0:
        return None
    g = grad_g / norm
    direction = g - np.sum(g * scatter_unit) * scatter_unit
    length = np.linalg.norm(direction)
    if length <= 1e-12:
        return None
    return direction / length


class FeasibleProjection:
    """Euclidean projection onto ``{A PSD, <S, A> <= level}`` (S the must-link scatter).

    By duality the projection of a symmetric B is ``A(mu) = P_psd(B - mu S)`` for the
    multiplier ``mu >= 0`` at which ``phi(mu) = <S, A(mu)>`` meets the level (``mu = 0`` when
    ``P_psd(B)`` is already feasible); ``phi`` is non-increasing, so a bracketed
    regula-falsi search (Illinois variant) finds mu in a few eigendecompositions. This is the
    point the alternating projections of the paper approach, reached without their slow
    zig-zag. The previous multiplier warm-starts the bracket.

    Parameters
    ----------
    scatter : ndarray of shape (d, d)
    level : float
        The bound t of ``<S, A> <= t``.
    max_evals : int
        Most projections onto the PSD cone per call.
    """

    def __init__(self, scatter, level, max_evals):
        self.scatter = scatter
        self.level = level
        self.max_evals = max_evals
        self.scale = np.linalg.norm(scatter)
        self.multiplier = None

    def _phi(self, B, mu):
        A = project_psd(B - mu * self.scatter)
        return A, float(np.sum(self.scatter * A))

    def __call__(self, B):
        """Return ``(A, feasible)``: the projection of B, and whether it meets the level."""
        level = self.level
        A, value = self._phi(B, 0.0)
        evals = 1
        if value <= level * (1.0 + _PROJECTION_EPS):
            return A, True
        lo, f_lo = 0.0, value - level
        hi = self.multiplier if self.multiplier else np.linalg.norm(B) / self.scale
        hi = max(hi, np.finfo(np.float64).tiny)
        while evals < self.max_evals:
            A_hi, value = self._phi(B, hi)
            evals += 1
            if value <= level:
                break
            lo, f_lo = hi, value - level
            hi *= 2.0
        else:
            return A, False
        f_hi = value - level
        side = 0
        while evals < self.max_evals and f_hi < -_MULTIPLIER_RTOL * level:
            mu = hi - f_hi * (hi - lo) / (f_hi - f_lo)
            if not lo < mu < hi:
                mu = 0.5 * (lo + hi)
            A_mu, value = self._phi(B, mu)
            evals += 1
            f_mu = value - level
            if f_mu <= 0:
                hi, f_hi, A_hi = mu, f_mu, A_mu
                if side == -1:
                    f_lo *= 0.5
                side = -1
            else:
                lo, f_lo = mu, f_mu
                if side == 1:
                    f_hi *= 0.5
                side = 1
        self.multiplier = hi
        return A_hi, True


def fit_full(X, must_link, cannot_link, A0, *, max_iter, max_proj, tol, report):
    """Full-matrix MMC; returns ``(M, n_iter, converged)`` with M PSD.

    Projected gradient ascent on ``g``: each step follows the gradient of g made orthogonal
    to the constraint normal S, then projects onto ``{A PSD, <S, A> <= t}``; a step that
    does not increase g is retried from the last accepted iterate with half the step size
    (accepted steps grow it by 5%). Converged when the step size relative to ``|A|_F`` falls
    below ``tol``. ``report(n_iter, M)`` is called after every iteration.
    """
    ml_a, ml_b = must_link
    cl_a, cl_b = cannot_link
    scatter = run_kernel(mmc_kernels.pair_outer_sum, X, ml_a, ml_b, np.ones(ml_a.shape[0]))
    scatter_unit = scatter / np.linalg.norm(scatter)
    level = float(np.sum(scatter * A0)) / 100.0
    if level <= 0:
        level = float(np.trace(scatter)) / 100.0
    project = FeasibleProjection(scatter, level, max_proj)

    A_old = None
    g_old = -np.inf
    alpha = None
    direction = None
    trial = A0
    n_iter = 0
    converged = False
    for cycle in range(max_iter):
        A, feasible = project(trial)
        n_iter = cycle + 1
        if feasible:
            g_new, dist = distance_sum(X, cl_a, cl_b, A)
        if feasible and (A_old is None or g_new > g_old):
            A_old, g_old = A, g_new
            alpha = 0.1 * np.linalg.norm(A) if alpha is None else alpha * 1.05
            direction = _ascent_direction(distance_sum_gradient(X, cl_a, cl_b, dist),
                                          scatter_unit)
            if direction is None:
                converged = True
                report(n_iter, A_old)
                break
        elif A_old is None:
            # not even the start could be made feasible within max_proj: retry from there
            trial = A
            report(n_iter, A)
            continue
        else:
            alpha *= 0.5
        trial = A_old + alpha * direction
        report(n_iter, A_old)
        if alpha / max(np.linalg.norm(A_old), np.finfo(np.float64).tiny) < tol:
            converged = True
            break
    if A_old is None:
        A_old = project_psd(trial)
    return A_old, n_iter, converged


def fit_diagonal(X, must_link, cannot_link, w0, *, max_iter, tol, report, weight=1.0):
    """Diagonal MMC: minimise ``h(w) = s.w - c log(sum_D sqrt(v^T diag(w) v))`` (s the
    must-link squared differences summed, c the ``weight``) over ``w >= 0`` by L-BFGS-B;
    returns ``(w, n_iter, converged)``.

    h is convex (``g`` is concave) but its optimum is often sparse, and where a pair's
    distance reaches 0 its curvature is unbounded: a Newton method with clipping stalls or
    crawls there, short of the optimum, where a quasi-Newton method with bounds does not.
    ``tol`` is L-BFGS-B's relative reduction of h per iteration (``ftol``).
    """
    import scipy.optimize

    ml_a, ml_b = must_link
    cl_a, cl_b = cannot_link
    s_sum = run_kernel(mmc_kernels.pair_squared_sum, X, ml_a, ml_b, np.ones(ml_a.shape[0]))
    tiny = np.finfo(np.float64).tiny

    def on_best_scale(w):
        # h(t w) = t s_sum.w - c log g(w) - (c / 2) log t (g is homogeneous of degree 1/2),
        # least at t = c / (2 s_sum.w): the start is moved there, so that h is O(1) and the
        # variables below (w over that scale) are too
        total = float(s_sum @ w)
        return w * (weight / (2.0 * total)) if total > 0 else w

    w = on_best_scale(np.maximum(np.asarray(w0, dtype=np.float64), 0.0))
    if not run_kernel(mmc_kernels.pair_diagonal_forms, X, cl_a, cl_b, w).max() > 0:
        raise ValueError(
            "The start of MMC's diagonal solver (the diagonal of init) gives every cannot-link "
            "pair distance 0, where the objective is infinite. Pass an init with a positive "
            "diagonal on the features that separate them, such as the identity.")
    scale = float(w.max())

    def value_and_gradient(u):
        w = u * scale
        dist = np.sqrt(np.maximum(run_kernel(mmc_kernels.pair_diagonal_forms, X, cl_a, cl_b,
                                             w), 0.0))
        total = max(float(dist.sum()), tiny)
        # a pair at distance 0 has an infinite slope in the weights that would separate it:
        # floored, as in the full solver
        dist = np.maximum(dist, max(1e-12 * total / dist.shape[0], tiny))
        grad = s_sum - weight * run_kernel(mmc_kernels.pair_squared_sum, X, cl_a, cl_b,
                                           0.5 / dist) / total
        return float(s_sum @ w) - weight * np.log(total), grad * scale

    count = [0]

    def step(u):
        count[0] += 1
        report(count[0], u * scale)

    result = scipy.optimize.minimize(
        value_and_gradient, w / scale, jac=True, method="L-BFGS-B",
        bounds=[(0.0, None)] * w.shape[0], callback=step,
        options={"maxiter": max_iter, "ftol": tol, "gtol": 0.0})
    if not (np.isfinite(result.fun) and np.isfinite(result.x).all()):
        raise ValueError(
            f"MMC's diagonal solver left the float64 range ({result.message}). Rescale X (for "
            "example with StandardScaler), or pass another init.")
    # status 0: converged; 2: a line search that can no longer decrease h in float64, at the
    # optimum found; 1: the iteration or evaluation limit
    return result.x * scale, int(result.nit), result.status != 1
