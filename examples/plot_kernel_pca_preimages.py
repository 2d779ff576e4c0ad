"""
Denoising digits with kernel PCA pre-images
===========================================

Kernel PCA with ``fit_inverse_transform=True`` also learns the way back: a kernel ridge
regression from the embedding to the input space. Projecting noisy images onto the leading
components of an RBF kernel PCA fitted on clean images, then mapping back, removes most of
the noise. Linear PCA with the same number of components is shown beside it.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.preprocessing import MinMaxScaler

import fastdr

X, _ = load_digits(return_X_y=True)
X = MinMaxScaler().fit_transform(X)
rng = np.random.default_rng(0)
X_train, X_test = X[:1000], X[1000:1010]
X_noisy = X_test + 0.25 * rng.standard_normal(X_test.shape)

kpca = fastdr.KernelPCA(n_components=32, kernel="rbf", gamma=1e-2,
                        fit_inverse_transform=True, alpha=5e-3, random_state=0)
kpca.fit(X_train)
pca = fastdr.PCA(n_components=32).fit(X_train)
rows = {
    "clean": X_test,
    "noisy": X_noisy,
    "PCA": pca.inverse_transform(pca.transform(X_noisy)),
    "kernel PCA": kpca.inverse_transform(kpca.transform(X_noisy)),
}

fig, axes = plt.subplots(len(rows), 10, figsize=(10, 4.4))
for r, (name, images) in enumerate(rows.items()):
    for c in range(10):
        axes[r, c].imshow(images[c].reshape(8, 8), cmap="gray_r")
        axes[r, c].set_axis_off()
    error = np.mean((images - X_test) ** 2)
    axes[r, 0].set_title(f"{name} (MSE {error:.3f})", loc="left", fontsize=9)
fig.tight_layout()
plt.show()
