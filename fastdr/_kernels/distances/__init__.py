"""Distance kernels: dense Euclidean by GEMM (:mod:`.euclidean`, the entry), the Minkowski
family and cosine (:mod:`.minkowski`), CSR input (:mod:`.sparse`), given pairs (:mod:`.pairs`)
and one-pass checks of a square user matrix (:mod:`.matrix_checks`).
"""
