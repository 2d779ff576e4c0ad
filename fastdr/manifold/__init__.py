"""Manifold learning: classical MDS, Isomap, LLE."""

from .isomap import Isomap  # noqa: F401
from .lle import LocallyLinearEmbedding, locally_linear_embedding  # noqa: F401
from .mds import ClassicalMDS  # noqa: F401
