"""Manifold learning: classical MDS, Isomap, LLE."""
