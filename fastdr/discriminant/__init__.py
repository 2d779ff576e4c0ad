"""Linear discriminant analysis, as a projection and as a classifier.

The entry is :mod:`._lda` (the estimator, and :func:`fit_from_statistics`, the eigen solver
after the class statistics); :mod:`._checks` holds the checks of the class counts, the
priors and ``S_w``, :mod:`._solvers` scikit-learn's three solvers, :mod:`._class_scatter`
the within- and between-class scatter, and :mod:`._scores` the decision function,
predictions and probabilities. The module-level functions of :mod:`._lda` and :mod:`._checks`
are the seam that :mod:`fastdr.dask` builds on: it computes the class statistics over a
cluster and calls them.
"""

from ._lda import LinearDiscriminantAnalysis

__all__ = ["LinearDiscriminantAnalysis"]
