"""The prior metric of the learners that start from (and are pulled towards) one."""

import numpy as np

from .._validation.arrays import check_array
from ._covariance import data_covariance


def prior_metric(prior, points, d, rng):
    """The prior metric of ITML, SDML and LSML, strictly positive definite.

    Parameters
    ----------
    prior : {"identity", "covariance", "random"} or ndarray of shape (d, d)
        The identity; the inverse covariance of the distinct points; a random SPD matrix
        (scikit-learn's ``make_spd_matrix``); or a given matrix, checked symmetric and
        strictly positive definite.
    points : ndarray of shape (n, d)
        The points of the constraints.
    d : int
    rng : RandomState

    Returns
    -------
    ndarray of shape (d, d)

    Raises
    ------
    numpy.linalg.LinAlgError
        When the covariance or the given matrix is not strictly positive definite.
    """
    from numpy.linalg import LinAlgError

    if isinstance(prior, np.ndarray):
        A = check_array(prior, name="prior", dtype=np.float64)
        if A.shape != (d, d):
            raise ValueError(f"The input dimensionality {A.shape} of the given mahalanobis "
                             f"matrix `prior` must match the dimensionality of the given "
                             f"inputs ({d}).")
        if not np.allclose(A, A.T):
            raise ValueError("`prior` is not symmetric.")
        what = "`prior`"
    elif prior == "identity":
        return np.eye(d)
    elif prior == "random":
        from sklearn.datasets import make_spd_matrix

        return make_spd_matrix(d, random_state=rng)
    else:
        cov = data_covariance(np.unique(points, axis=0))
        values, vectors = np.linalg.eigh(cov)
        if values.min() <= values.max() * d * np.finfo(np.float64).eps:
            # metric-learn's messages, word for word (its tests compare them by equality);
            # fastdr's remedy as a PEP 678 note (shown in the traceback)
            error = LinAlgError(
                "Unable to get a true inverse of the covariance matrix since it is not "
                "definite. Try another `prior`, or an algorithm that does not require the "
                "`prior` to be strictly positive definite."
            )
            error.add_note("The covariance has a zero eigenvalue: a constant or linearly "
                           "dependent feature. Remove such features first (for example with "
                           "PCA), or pass prior='identity'.")
            raise error
        return (vectors / values) @ vectors.T
    values = np.linalg.eigvalsh(0.5 * (A + A.T))
    if values.min() <= max(values.max(), 0.0) * d * np.finfo(np.float64).eps:
        error = LinAlgError(f"You should provide a strictly positive definite matrix as "
                            f"{what}. This one is not definite. Try another prior, or an "
                            "algorithm that does not require the prior to be strictly "
                            "positive definite.")
        error.add_note(f"Its smallest eigenvalue is {values.min():.3g} (largest "
                       f"{values.max():.3g}); pass a matrix with all eigenvalues above 0, "
                       "or prior='identity'.")
        raise error
    return 0.5 * (A + A.T)
