"""
Unrolling a swiss roll: Isomap and the four LLE methods
=======================================================

A swiss roll is a flat sheet rolled up in three dimensions. A method that follows the
sheet (its geodesics, or its local linear patches) lays it out flat again, with the colour,
the position along the roll, running smoothly from one end to the other.

Isomap keeps geodesic distances: shortest paths through the k-nearest-neighbour graph,
then classical MDS. Locally linear embedding (LLE) keeps each point's reconstruction from
its neighbours; ``method`` chooses among the standard weights, the modified (several weight
vectors per point), Hessian eigenmaps and local tangent space alignment (LTSA).
"""

import matplotlib.pyplot as plt
from sklearn.datasets import make_swiss_roll

import fastdr

X, colour = make_swiss_roll(n_samples=1500, noise=0.05, random_state=0)

embeddings = {"Isomap": fastdr.Isomap(n_neighbors=10, n_components=2).fit_transform(X)}
for method in ("standard", "modified", "hessian", "ltsa"):
    lle = fastdr.LocallyLinearEmbedding(
        n_neighbors=12, n_components=2, method=method, random_state=0)
    embeddings[f"LLE, {method}"] = lle.fit_transform(X)

fig = plt.figure(figsize=(12, 7))
ax = fig.add_subplot(2, 3, 1, projection="3d")
ax.scatter(X[:, 0], X[:, 1], X[:, 2], c=colour, s=4, cmap="Spectral")
ax.set_title("the swiss roll (3-D)")
ax.view_init(elev=10, azim=-70)
for i, (name, Z) in enumerate(embeddings.items(), start=2):
    ax = fig.add_subplot(2, 3, i)
    ax.scatter(Z[:, 0], Z[:, 1], c=colour, s=4, cmap="Spectral")
    ax.set_title(name)
    ax.set_xticks([])
    ax.set_yticks([])
fig.tight_layout()
plt.show()
