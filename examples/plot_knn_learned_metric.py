"""
k-NN decision regions in a learned metric
=========================================

Two informative features and a third that is pure noise with a large scale. With the
Euclidean metric the noise dominates every distance, and the k-nearest-neighbour classifier
is barely better than chance. Neighbourhood components analysis learns a linear map that
shrinks the noise feature; the same classifier in that metric (``metric=nca``) recovers the
class boundary. The plots show the decision regions on the informative plane (the noise
feature held at zero) and the accuracy on held-out points.

To cross-validate a learned metric, put both steps in a pipeline
(``make_pipeline(NeighborhoodComponentsAnalysis(), KNeighborsClassifier())``) or freeze the
fitted learner (``metric=sklearn.frozen.FrozenEstimator(nca)``), so that ``clone`` does not
hand the classifier an unfitted metric.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split

import fastdr

rng = np.random.default_rng(0)
X2, y = make_moons(n_samples=600, noise=0.2, random_state=0)
X = np.column_stack([X2, 4.0 * rng.standard_normal(len(y))])
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

nca = fastdr.NeighborhoodComponentsAnalysis(random_state=0).fit(X_train, y_train)
classifiers = {
    "Euclidean": fastdr.KNeighborsClassifier(n_neighbors=15).fit(X_train, y_train),
    "NCA metric": fastdr.KNeighborsClassifier(n_neighbors=15, metric=nca).fit(
        X_train, y_train),
}

u, v = np.meshgrid(np.linspace(-1.8, 2.8, 200), np.linspace(-1.3, 1.8, 160))
grid = np.column_stack([u.ravel(), v.ravel(), np.zeros(u.size)])
fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
for ax, (name, knn) in zip(axes, classifiers.items(), strict=True):
    regions = knn.predict_proba(grid)[:, 1].reshape(u.shape)
    ax.contourf(u, v, regions, levels=20, cmap="RdBu", alpha=0.6)
    ax.scatter(X_test[:, 0], X_test[:, 1], c=y_test, cmap="RdBu", edgecolor="k", s=15)
    ax.set_title(f"{name}: test accuracy {knn.score(X_test, y_test):.2f}")
fig.tight_layout()
plt.show()
