"""
Handwritten digits in two dimensions: PCA, LDA, NCA and MMC
===========================================================

Four linear maps of the 8 x 8 digit images (64 features) to the plane. PCA keeps the
directions of largest variance and ignores the labels; LDA keeps the directions that best
separate the class means relative to the spread within classes; neighbourhood components
analysis (NCA) learns the map under which a stochastic nearest-neighbour rule is most often
right; MMC learns a Mahalanobis metric that keeps pairs of one class close and pairs of
different classes apart (its pairs drawn from the labels by ``MMC_Supervised``).
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.preprocessing import StandardScaler

import fastdr

X, y = load_digits(return_X_y=True)
X = StandardScaler().fit_transform(X)

maps = {
    "PCA": fastdr.PCA(n_components=2),
    "LDA": fastdr.LinearDiscriminantAnalysis(n_components=2),
    "NCA": fastdr.NeighborhoodComponentsAnalysis(n_components=2, random_state=0),
    "MMC (from labels)": fastdr.MMC_Supervised(n_components=2, random_state=0),
}

fig, axes = plt.subplots(1, 4, figsize=(16, 4.2))
for ax, (name, estimator) in zip(axes, maps.items(), strict=True):
    Z = estimator.fit(X, y).transform(X)
    points = ax.scatter(Z[:, 0], Z[:, 1], c=y, s=5, cmap="tab10")
    ax.set_title(name)
    ax.set_xticks([])
    ax.set_yticks([])
fig.colorbar(points, ax=axes, label="digit", ticks=range(10))
plt.show()
