"""Nearest neighbours: search, graphs, classification and regression."""

from ._predict import KNeighborsClassifier, KNeighborsRegressor
from ._unsupervised import NearestNeighbors, kneighbors_graph, radius_neighbors_graph

__all__ = [
    "KNeighborsClassifier",
    "KNeighborsRegressor",
    "NearestNeighbors",
    "kneighbors_graph",
    "radius_neighbors_graph",
]
