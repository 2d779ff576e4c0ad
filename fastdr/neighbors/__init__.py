"""Nearest neighbours: search, graphs, classification and regression.

:func:`nndescent_graph` builds an approximate k-NN graph by NN-descent and
:func:`nndescent_query` searches it for new points.
"""

from ._nndescent import nndescent_graph, nndescent_query
from ._predict import KNeighborsClassifier, KNeighborsRegressor
from ._unsupervised import NearestNeighbors, kneighbors_graph, radius_neighbors_graph

__all__ = [
    "KNeighborsClassifier",
    "KNeighborsRegressor",
    "NearestNeighbors",
    "kneighbors_graph",
    "nndescent_graph",
    "nndescent_query",
    "radius_neighbors_graph",
]
