"""The one table of metric codes read by every distance and neighbour kernel.

A kernel is told its metric by one of these small integers; the Python tier
(:mod:`fastdr._distance.metric`, :mod:`fastdr.neighbors._sparse_search`,
:mod:`fastdr.neighbors._nndescent`) picks the code and the kernels branch on it. They are
plain module-level ints, so numba freezes them as compile-time constants and a branch on a
code costs nothing once the code is known. This module imports nothing: resolving a metric
loads no numba code.

Every kernel works on a *key* that is monotone in the distance; which key a code means:

======================  ===  =========================================================
code                    int  key of a pair of rows x, y
======================  ===  =========================================================
``EUCLIDEAN``           0    ``sum (x_c - y_c)^2`` (the caller takes the square root)
``SQEUCLIDEAN``         1    ``sum (x_c - y_c)^2`` (reported as it is)
``MANHATTAN``           2    ``sum |x_c - y_c|``
``CHEBYSHEV``           3    ``max |x_c - y_c|``
``MINKOWSKI``           4    ``sum |x_c - y_c|^p`` (the caller takes the ``1/p``-th power)
``COSINE``              5    ``1 - cos(x, y)``, clipped to [0, 2]
``BRAYCURTIS``          6    ``sum |x_c - y_c| / sum (|x_c| + |y_c|)`` (0 when both are 0):
                             scikit-learn's neighbours and ``DistanceMetric``
``CANBERRA``            7    ``sum |x_c - y_c| / (|x_c| + |y_c|)`` (0/0 terms count 0)
``HAMMING``             8    the fraction of features where ``x_c != y_c``
``DICE`` ... ``YULE``   9-14 scipy's boolean dissimilarities of ``x != 0`` and ``y != 0``
``HAVERSINE``           15   the great-circle angle between (latitude, longitude) in radians
``NAN_EUCLIDEAN``       16   ``sqrt(d / n_both * sum (x_c - y_c)^2)`` over the ``n_both``
                             features present (not NaN) in both rows; ``inf`` when none is
                             (scikit-learn's NaN, ranked last; reported as NaN)
``SCIPY_BRAYCURTIS``    17   ``sum |x_c - y_c| / sum |x_c + y_c|`` (0 when both are 0):
                             scipy's, which scikit-learn's ``pairwise_distances`` uses; the
                             two Bray-Curtis codes differ only on signed data
======================  ===  =========================================================

Not every kernel takes every code: the blocked dense kernels
(:mod:`.distances.minkowski`) take every code but EUCLIDEAN and SQEUCLIDEAN (those go by
GEMM); the sparse kernels (:mod:`.distances.sparse`) take the
first six; NN-descent
(:mod:`.nndescent`) selects on SQEUCLIDEAN or MANHATTAN keys and computes exact SQEUCLIDEAN,
MANHATTAN or COSINE distances. The kernel-matrix codes of KernelPCA (linear, poly, sigmoid,
cosine kernels) are another idea and live in :mod:`.spectral.kernel_matrix`.
"""

EUCLIDEAN = 0
SQEUCLIDEAN = 1
MANHATTAN = 2
CHEBYSHEV = 3
MINKOWSKI = 4
COSINE = 5
BRAYCURTIS = 6
CANBERRA = 7
HAMMING = 8
DICE = 9
JACCARD = 10
ROGERSTANIMOTO = 11
RUSSELLRAO = 12
SOKALSNEATH = 13
YULE = 14
HAVERSINE = 15
NAN_EUCLIDEAN = 16
SCIPY_BRAYCURTIS = 17
