"""
Isomap on a million points with landmarks
=========================================

Exact Isomap needs the m x m matrix of geodesic distances, which stops fitting in memory
near 40,000 points. With ``n_landmarks=L`` fastdr runs Dijkstra from L landmarks only,
embeds them by classical MDS and places every other point by triangulation (de Silva and
Tenenbaum's landmark MDS): memory m x L instead of m x m.

This example is shown, not executed, in the documentation build: on a 2-core machine the
million-point fit takes a few minutes. ``verbose=1`` prints each stage with its time and a
progress bar for the long ones.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import make_swiss_roll

import fastdr

X, colour = make_swiss_roll(n_samples=1_000_000, noise=0.05, random_state=0)

isomap = fastdr.Isomap(n_neighbors=10, n_components=2, n_landmarks=1000,
                       random_state=0, verbose=1)
Z = isomap.fit_transform(X)

fig, ax = plt.subplots(figsize=(8, 4))
ax.scatter(Z[::50, 0], Z[::50, 1], c=colour[::50], s=1, cmap="Spectral")
ax.set_title("landmark Isomap of a 1,000,000-point swiss roll (every 50th point drawn)")
plt.show()
