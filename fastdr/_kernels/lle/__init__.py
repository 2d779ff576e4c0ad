"""Locally linear embedding: barycentric weights and standard LLE (:mod:`.weights`, the entry),
the modified, Hessian and LTSA blocks (:mod:`.methods`) and the CSR assembly of M
(:mod:`.assembly`).
"""
