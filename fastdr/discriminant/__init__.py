"""Linear discriminant analysis, as a projection and as a classifier.

The entry is :mod:`._lda` (the estimator); :mod:`._solvers` holds scikit-learn's three
solvers, :mod:`._class_scatter` the within- and between-class scatter, and :mod:`._scores`
the decision function, predictions and probabilities.
"""

from ._lda import LinearDiscriminantAnalysis

__all__ = ["LinearDiscriminantAnalysis"]
