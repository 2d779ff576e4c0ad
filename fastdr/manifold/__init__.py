"""Manifold learning: classical MDS, Isomap, LLE.

Entries: :mod:`._mds` (ClassicalMDS), :mod:`._isomap` (Isomap, with its graph in
:mod:`._isomap_graph`, its geodesics in :mod:`._geodesic` and landmarks in
:mod:`._landmarks`) and :mod:`._lle` (LocallyLinearEmbedding, the four methods' matrices in
:mod:`._lle_methods`).
"""

from ._isomap import Isomap
from ._lle import LocallyLinearEmbedding, locally_linear_embedding
from ._mds import ClassicalMDS

__all__ = ["ClassicalMDS", "Isomap", "LocallyLinearEmbedding", "locally_linear_embedding"]
