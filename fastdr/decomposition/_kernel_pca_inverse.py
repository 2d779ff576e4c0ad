"""The learned pre-image of :class:`~fastdr.decomposition.KernelPCA` (Bakir et al., 2004).

``fit_inverse_transform=True`` fits a kernel ridge regression from the embedding of the
training samples back to the samples themselves: with ``Z`` the (m, k) training embedding
and ``K_Z`` the kernel between its rows (the estimator's own kernel and parameters),

    dual_coef_ = (K_Z + alpha I)^(-1) X,

and ``inverse_transform(Z_new) = k(Z_new, Z) @ dual_coef_``. The centred kernel carries no
information about the mean of the features, so the pre-image does not restore it (as in
scikit-learn). Time O(m^2 k + m^3 / 3 + m^2 d) at fit; memory one m x m array.
"""

import numpy as np
import scipy.linalg

from .._validation.arrays import check_array
from .._validation.budget import check_dense_allocation


def fit_preimage(estimator, X_transformed, X):
    """Return ``dual_coef_`` of shape (m, n_features) for the training embedding.

    Raises ``numpy.linalg.LinAlgError`` (scipy's) when ``K_Z + alpha I`` is not positive
    definite, as scikit-learn does: with ``alpha=0`` and repeated embedding rows, for one.
    """
    m = X_transformed.shape[0]
    check_dense_allocation((m, m), X_transformed.dtype,
                           what=f"The {m} x {m} kernel of the pre-image regression",
                           alternative="Set fit_inverse_transform=False, or fit on fewer "
                                       "samples.")
    K = estimator._kernel(X_transformed, X_transformed)
    K.flat[:: m + 1] += estimator.alpha
    return scipy.linalg.solve(K, np.asarray(X, dtype=K.dtype), assume_a="pos",
                              overwrite_a=True, overwrite_b=False)


def apply_preimage(estimator, Z):
    """``k(Z, X_transformed_fit_) @ dual_coef_``: samples in the input space."""
    fitted = estimator.X_transformed_fit_
    Z = check_array(Z, name="X", dtype=fitted.dtype)
    if Z.shape[1] != fitted.shape[1]:
        raise ValueError(
            f"X has {Z.shape[1]} columns, but KernelPCA.inverse_transform expects "
            f"{fitted.shape[1]} (n_components_). Pass the output of transform."
        )
    K = estimator._kernel(Z, fitted)
    return K @ estimator.dual_coef_
