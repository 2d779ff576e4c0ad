"""Naive NumPy/SciPy references that every kernel is checked against.

Slow on purpose: plain loops and full sorts, written to be obviously right.

One module per topic; every reference is importable from here (``reference.knn``)."""

from .distances import (  # noqa: F401
    exact_pair_distance,
    keys_to_distances,
    metric_keys,
    nan_euclidean,
    reduced_distances,
    sq_euclidean,
    symmetry_stats,
)
from .graphs import (  # noqa: F401
    dijkstra_dense,
    floyd_dense,
    maxmin_landmarks,
    sparse_to_dense_weights,
)
from .learners import (  # noqa: F401
    dykstra_psd_halfspace,
    mmc_pair_sums,
    nca_objective_gradient,
)
from .linear import (  # noqa: F401
    centred_kernel,
    double_centre,
    kernel_matrix,
    lda_scatter,
    ledoit_wolf,
    pca_svd,
)
from .manifold import (  # noqa: F401
    block_sum,
    classical_mds_triangulate,
    lle_matrix,
    lle_transform,
    lle_weights,
    procrustes_disparity,
    reverse_lists,
)
from .neighbors import (  # noqa: F401
    class_fractions,
    heap_select,
    inverse_distance_weights,
    knn,
    knn_mean,
    knn_vote,
    radius,
    smallest_pairs,
    smallest_per_row,
    sort_pairs,
    within_per_row,
)
from .nndescent import (  # noqa: F401
    join_proposals,
    push_proposals,
    renumbered_rows,
    reverse_graph,
    rp_tree,
    sampled_candidates,
)
