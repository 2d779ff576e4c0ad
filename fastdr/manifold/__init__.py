"""Manifold learning: classical MDS, Isomap, LLE, and geodesic distances on a graph.

Entries: :mod:`._mds` (ClassicalMDS), :mod:`._isomap` (Isomap, with its graph in
:mod:`._isomap_graph`, its geodesics in :mod:`._geodesic`, whose :func:`geodesic_distances`
is public, and landmarks in :mod:`._landmarks`) and :mod:`._lle` (LocallyLinearEmbedding,
the four methods' matrices in :mod:`._lle_methods`).
"""

from ._geodesic import geodesic_distances
from ._isomap import Isomap
from ._lle import LocallyLinearEmbedding, locally_linear_embedding
from ._mds import ClassicalMDS

__all__ = [
    "ClassicalMDS",
    "Isomap",
    "LocallyLinearEmbedding",
    "geodesic_distances",
    "locally_linear_embedding",
]
