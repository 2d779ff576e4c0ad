"""Process-wide settings: the fast-math flag set, the memory budget and every tunable.

Every tunable of fastdr (block sizes, thresholds, chunk counts, iteration caps) lives here,
grouped by topic, each with its one-line reason; the measurements that chose them are in
``bench/DECISIONS.md``. Changing one changes speed, never results, except where its comment
says otherwise. Nothing here is written at import.

How they are read: the Python tier imports them by name (tests patch them where they are
used) or reads ``config.NAME`` at call time, and passes most of them to the kernels as
arguments. The kernels that read one directly (plain ints and floats only) see it as a
numba global, frozen into the compiled code: numba's on-disk cache is keyed on the kernel's
own source file, not on this one, so after changing such a tunable clear the cache (the
``*.nbi`` and ``*.nbc`` files in ``__pycache__``) or touch the kernel's file.
"""

import os

import numpy as np

from ._runtime.memory import available_memory as _available_memory

#: The one fast-math flag set used by kernels that may use it. It leaves out ``nnan`` and
#: ``ninf`` on purpose: kernels that meet inf (heaps seeded with inf, Dijkstra) keep IEEE
#: semantics, and kernels that use this set must still be correct for finite input.
FASTMATH = frozenset({"nsz", "arcp", "contract", "afn", "reassoc"})

_MEMORY_BUDGET_ENV = "FASTDR_MEMORY_BUDGET"

# --- memory and validation ------------------------------------------------------------------

#: Dense allocations up to this many bytes are not checked against the budget unless
#: ``FASTDR_MEMORY_BUDGET`` is set: they fit any machine that runs Python, and reading
#: /proc/meminfo costs a noticeable share of a small PCA's fit.
SMALL_ALLOCATION_BYTES = 2**20
#: Rows converted to float64 at a time by the magnitude checks: O(block d) memory, never a
#: float64 copy of X.
MAGNITUDE_BLOCK_ROWS = 8192
#: Elements per row block of the finiteness scan of a user matrix: no m x m temporary.
FINITE_CHECK_BLOCK_ELEMENTS = 2**20

# --- blocked scatter and Gram loops (PCA, LDA) ----------------------------------------------

#: Row blocks of the blocked scatter, Gram and projection loops (PCA's centring, LDA's
#: class scatter) hold about this many elements (4 MiB in float64): they stay in cache while
#: BLAS works on them, and no copy of X is made.
SCATTER_BLOCK_ELEMENTS = 2**19
#: Fixed partition of the rows of the fused Gram product
#: (:mod:`fastdr._kernels.spectral.gram_product`): results never depend on the thread count
#: (changing it changes last bits).
GRAM_CHUNKS = 32
#: Row chunks of the CSR Gram matrix, each with its own d x d accumulator: few, because each
#: costs d^2 memory; fixed, so the sum never depends on the thread count (changes last bits).
GRAM_MATRIX_CHUNKS = 8

# --- PCA ------------------------------------------------------------------------------------

#: PCA's ``"arpack"`` solver on a dense tall X applies the Gram operator in one fused pass
#: over X (:mod:`fastdr._kernels.spectral.gram_product`) from this many elements of X up.
#: Below it X stays in the last-level cache, where two BLAS matrix-vector products on a
#: centred copy are as fast, without a numba launch per product (dearer still when the
#: launch layer's threads have gone to sleep between calls). Bench: pca_arpack.
ARPACK_GRAM_MIN_ELEMENTS = 2**23
#: The same threshold in stored entries, for a CSR X (scipy's two single-threaded sparse
#: products against one fused pass on every thread). Bench: pca_sparse_arpack.
ARPACK_GRAM_MIN_STORED = 2**21
#: PCA's ``"arpack"`` solver on a tall X (dense or CSR) with at most this many features runs
#: ARPACK on the d x d Gram matrix, formed once (O(m d^2) dense, O(sum of squared row counts)
#: CSR), instead of two passes over X a step (O(m d) or O(nnz) each, about 50 steps for 10
#: components).
ARPACK_EXPLICIT_GRAM_MAX_DIM = 512
#: ... and, for CSR, only while the sum of the rows' squared stored counts is at most this
#: many times the stored entries (the average row, weighted by its entries, holds at most
#: this many): the pairs of a dense row would cost more than ARPACK's sparse products.
ARPACK_EXPLICIT_GRAM_MAX_ROW_ENTRIES = 100
#: PCA's ``"randomized"`` solver on a dense tall X with at most this many features runs its
#: power iterations on the d x d centred scatter, formed once ...
RANDOMIZED_EXPLICIT_GRAM_MAX_DIM = 512
#: ... when ``d <= RANDOMIZED_GRAM_GAIN x iterations x (n_components + n_oversamples)``:
#: break-even about 5-6 x iterations x width (float64). Bench: pca_randomized.
RANDOMIZED_GRAM_GAIN = 5.0

# --- LDA ------------------------------------------------------------------------------------

#: LDA's row gathering (class scatter, Ledoit-Wolf, the R factor) runs on the calling thread
#: for blocks below this many elements
#: (see :func:`fastdr.discriminant._class_scatter.gather_centre`): the gather is
#: memory-bound, and below this a parallel launch costs more than it saves. Bench: lda ...
GATHER_PARALLEL_MIN_ELEMENTS = 2**20
#: ... larger blocks are gathered in parallel chunks of this many rows (enough chunks to
#: balance the threads) ...
GATHER_CHUNK_ROWS = 64
#: ... and its per-block products ``B^T B`` run on one BLAS thread up to this many
#: multiply-adds a block (rows x d^2): below it a second thread does not pay. Bench: lda.
LDA_SINGLE_THREAD_BLAS_MAX_WORK = 2**26

# --- eigensolvers (fastdr._eigen) -----------------------------------------------------------

#: ``solver="auto"``: LAPACK (``"dense"``) for any matrix when more than this share of the
#: spectrum is wanted, where LAPACK, which computes every pair at once, is faster ...
EIGEN_DENSE_FRACTION = 0.1
#: ... and for a dense matrix of at most this order, where LAPACK is fastest and exact ...
EIGEN_DENSE_MAX_N = 200
#: ... or a sparse one of at most this order (LAPACK on its dense copy) ...
EIGEN_SPARSE_DENSE_MAX_N = 200
#: ... ARPACK up to this order, where LAPACK's 4/3 n^3 reduction costs more than ARPACK's few
#: dozen passes; the randomized block solver above it, which reads the matrix fewer times.
#: Bench: kernel_pca, classical_mds.
EIGEN_ARPACK_MAX_N = 2000
#: Passes of the randomized block solver chosen by ``"auto"`` before ARPACK takes over, so
#: that a slowly converging spectrum does not run on.
EIGEN_AUTO_RANDOMIZED_MAX_ITER = 100
#: Passes of the randomized block solver when the caller chose it and gave no ``max_iter``.
EIGEN_RANDOMIZED_MAX_ITER = 1000
#: Up to this many columns, a dense product runs in the streaming numba kernel, not BLAS
#: (with a thin block the product is bound by reading the matrix) ...
STREAMING_MAX_COLUMNS = 16
#: ... and only for a matrix of more than this many rows. A smaller matrix (at most 32 MB in
#: float64) stays in the last-level cache, where BLAS on the full matrix beats one numba
#: launch per product; a larger one gains from the stream (bench: kernel_pca_arpack).
STREAMING_MIN_ROWS = 2000
#: Columns per tile of the symmetric (upper-triangle) block product: the four row pieces, q
#: and the accumulator, 512 columns each, take at most 24 KiB in float64, within a 32 KiB L1.
UPPER_TILE = 512
#: Fixed partition of the symmetric block product: results never depend on the thread count
#: (changing it changes last bits).
UPPER_CHUNKS = 32
#: Landmark columns of KernelPCA's Nystrom start block: at least this many, and 4 per column
#: of the block (each costs a kernel column, cheap beside a pass over K).
NYSTROM_LANDMARKS = 100

# --- distances (pairwise_distances, k-NN search, the KernelPCA rbf kernel) -----------------

#: Brute-force distances use the norm trick (one GEMM per block) from this many features up,
#: exact direct sums below (where a GEMM does not pay).
GEMM_MIN_DIM = 16
#: Norm-trick values of ``|x - y|^2`` below ``RECOMPUTE_TOL[dtype] * (|x - c|^2 + |y - c|^2)``
#: may have lost their digits to cancellation and are recomputed exactly. Lowering it can
#: change results (fewer values are recomputed).
RECOMPUTE_TOL = {np.dtype(np.float64): 1e-6, np.dtype(np.float32): 1e-2}
#: ``algorithm="auto"`` uses the k-d tree up to this many features, brute force above.
KD_TREE_MAX_DIM = 15
#: Targets per GEMM block of the k-NN and pairwise kernels (fewer when there are fewer).
TARGET_BLOCK = 2048
#: Query rows per parallel iteration of exact k-NN and radius search: about 4 iterations a
#: thread, within these bounds. 256 keeps the screen's key tile (256 x ``SCREEN_TARGET_BLOCK``
#: float32) in L2 beside the packed targets. Bench: knn_f64_queries, knn_f32, knn_classifier.
QUERY_BLOCK_ROWS = (16, 256)
#: ... on CSR input, where one query row already costs a pass over every target: small
#: blocks still spread a few queries over the threads. Bench: sparse_neighbors.
SPARSE_QUERY_BLOCK_ROWS = (1, 64)
#: ... for NN-descent's graph search of new points (a query is a short walk, cheap).
NNDESCENT_QUERY_BLOCK_ROWS = (16, 1024)
#: Leaf size of scipy's k-d tree (``algorithm="kd_tree"``).
KD_TREE_LEAF_SIZE = 16
#: Targets per float32 GEMM block of the k-NN screen (:mod:`fastdr._kernels.knn.screen`):
#: the packed panel (about 100 KiB at d = 50) stays in L2 beside a 128 x 512 key tile;
#: 2,048 is slower at small m and no faster at large m. Bench: knn_f32.
SCREEN_TARGET_BLOCK = 512
#: Keys per screened chunk of a k-NN or leaf-join row: a compile-time trip count over a
#: contiguous row piece, which LLVM turns into a few wide compares (a variable-length chunk
#: stays scalar). Bench: knn_f32, nndescent.
KEY_LANE = 64
#: Targets per packed block of a Minkowski-family tile (d x 256 float64 stays in L2).
MINKOWSKI_T_BLOCK = 256
#: Query rows per parallel iteration of ``pairwise_distances``' GEMM kernel.
PAIRWISE_QUERY_BLOCK = 64
#: Rows and columns per tile of the symmetric ``pairwise_distances(X)`` kernel: 128 up to
#: ``PAIRWISE_SMALL_ROWS`` rows (enough tiles to balance the threads), 256 above (fewer
#: passes over the packed blocks). Bench: pairwise.
PAIRWISE_SELF_BLOCK = 256
PAIRWISE_SMALL_ROWS = 2048
#: ``pairwise_distances`` writes outputs of at least this many bytes with streaming stores
#: (:mod:`fastdr._kernels._numba_ext`): a plain store to a line that is not cached first
#: reads it from memory. Smaller outputs stay in cache for the caller, who reads them next;
#: break-even near 1,000 x 1,000 float64. Bench: pairwise.
PAIRWISE_STREAM_MIN_BYTES = 2**24
#: The O(m d) set-up kernels of the distance routes (norms, packing) run on the calling
#: thread for inputs up to this many elements: a parallel launch on numba's workqueue layer
#: costs more than the serial pass over them.
PREP_SERIAL_MAX_ELEMENTS = 2**18

# --- NN-descent -----------------------------------------------------------------------------

#: Points per local-join chunk: fixed, so the chunking (and the result) never depends on the
#: thread count; changing it changes results.
NNDESCENT_JOIN_CHUNK = 64
#: Bytes of one block of local-join proposals: bounds the proposal buffer whatever m.
NNDESCENT_JOIN_BUFFER_BYTES = 32 * 2**20
#: Proposals between a heap row's prefetch and its update in the rounds: far enough ahead to
#: hide a miss, near enough that the line is still cached.
NNDESCENT_UPDATE_AHEAD = 16
#: Rows prefetched ahead in the gathers of a leaf's scattered members (the same trade-off).
LEAF_GATHER_AHEAD = 8
#: A build with ``build_neighbors=None`` widens while its estimated recall is below this
#: (changing it changes results).
RECALL_GOAL = 0.95
#: Sampled points whose exact neighbours estimate the recall (all points when m is smaller):
#: an exact search of so few rows costs little beside a build (changing it changes results).
RECALL_SAMPLE = 512

# --- geodesic distances (Isomap) ------------------------------------------------------------

#: ``path_method="auto"`` uses Floyd-Warshall when the graph stores more than this share of
#: all m^2 ordered pairs (average degree > m / 4), Dijkstra otherwise.
FLOYD_MIN_DENSITY = 0.25
#: Dijkstra sources per parallel iteration (heap buffers are allocated once per block).
DIJKSTRA_SOURCE_BLOCK = 16
#: Children per node of Dijkstra's heap: 4 halves the depth of a binary heap, and the
#: children of a node share one cache line.
DIJKSTRA_HEAP_ARITY = 4
#: Tile edge of blocked Floyd-Warshall and of the mirror pass after Dijkstra.
PATH_TILE = 64
#: Landmark columns written together by landmark Dijkstra.
LANDMARK_PANEL = 8
#: Landmarks per Dijkstra task of the Dask Isomap (a multiple of ``LANDMARK_PANEL``).
DASK_LANDMARKS_PER_TASK = 16
#: float64 entries (32 MiB) of Isomap ``transform``'s scratch block: queries are processed
#: in blocks of this size, so memory stays bounded whatever the number of queries.
ISOMAP_QUERY_BLOCK_ENTRIES = 2**22
#: float64 entries (32 MiB) of the scratch block of landmark triangulation (the same bound).
TRIANGULATION_BLOCK_ENTRIES = 2**22

# --- LLE ------------------------------------------------------------------------------------

#: Points per parallel iteration of the barycentric weights (work buffers allocated once per
#: block).
LLE_WEIGHT_BLOCK = 256
#: Points per parallel iteration of the modified, Hessian and LTSA local blocks.
LLE_POINT_BLOCK = 64
#: Tenfold ridge increases (from 1e-12 trace) before a neighbourhood's weights fall back to
#: the centroid: a safety net that finite input does not reach.
LLE_MAX_RETRIES = 40

# --- metric learning (NCA, MMC) -------------------------------------------------------------

#: One thread's block of softmax rows holds at most about this many bytes (12 m per row:
#: distances or weights, and candidate indices); between 16 and 64 rows per block.
NCA_BLOCK_BYTES = 48 * 2**20
#: The row blocks are split into at most this many fixed chunks, merged in order: results
#: never depend on ``n_jobs`` (changing it changes the last bits of the objective).
NCA_MAX_CHUNKS = 32
#: Cost per entry, in the same (arbitrary) unit, of forming a block of W X from W's sparse
#: rows (a gather of X's row per candidate) and of a dense GEMM entry (fitted on AVX2,
#: d = 50): the cheaper route is taken per block. Bench: nca.
NCA_SPARSE_COST = 5.0
NCA_DENSE_COST = 1.0
#: MMC's pair sums (pairs x d^2 multiply-adds) up to this size run serially: a parallel
#: launch on numba's workqueue layer costs more than such a sum. Bench: mmc.
MMC_SERIAL_MAX_WORK = 2**22
#: Pairs gathered per BLAS call of MMC's pair sums (changing it changes last bits).
MMC_PAIR_CHUNK = 256
#: Up to this many features, MMC's dense d x d linear algebra runs on one BLAS thread: too
#: small to gain from more, and spinning helpers would slow the kernels that follow.
MMC_SINGLE_THREAD_MAX_DIM = 300

# --- Dask -----------------------------------------------------------------------------------

#: The broadcast k-NN index (the data, and a k-d tree of about the same size) must use at
#: most this fraction of the smallest worker's memory limit to be broadcast by ``"auto"``.
BROADCAST_MEMORY_FRACTION = 0.25


def scatter_block_rows(n_features):
    """Rows per block of the blocked scatter loops.

    About ``SCATTER_BLOCK_ELEMENTS`` elements per block (read at call time), and between 64
    and 8192 rows.

    Parameters
    ----------
    n_features : int
        Width of a row.

    Returns
    -------
    int
    """
    return int(min(8192, max(64, SCATTER_BLOCK_ELEMENTS // max(1, n_features))))


def memory_budget():
    """Return the number of bytes a single dense allocation may use.

    The budget is, in order of precedence: ``fastdr.set_config(memory_budget=...)``, the
    ``FASTDR_MEMORY_BUDGET`` environment variable
    (bytes, or with a ``K``/``M``/``G`` suffix), else 80% of the memory the operating system
    reports as available, or of the headroom under a cgroup memory limit when that is
    lower (:mod:`fastdr._runtime.memory`).

    Returns
    -------
    int
        The budget in bytes.
    """
    from ._runtime.settings import _CONFIG

    chosen = _CONFIG["memory_budget"]
    if chosen is not None:
        return parse_bytes(str(chosen), source=f"fastdr.set_config(memory_budget={chosen!r})")
    raw = os.environ.get(_MEMORY_BUDGET_ENV)
    if raw:
        return parse_bytes(raw, source=f"{_MEMORY_BUDGET_ENV}={raw!r}")
    return int(0.8 * _available_memory())


def budget_applies(n_bytes):
    """True when an allocation of ``n_bytes`` is checked against :func:`memory_budget`."""
    from ._runtime.settings import _CONFIG

    return (n_bytes > SMALL_ALLOCATION_BYTES or bool(os.environ.get(_MEMORY_BUDGET_ENV))
            or _CONFIG["memory_budget"] is not None)


def parse_bytes(text, source):
    """Bytes from ``"2000000000"`` or ``"2G"`` (K/M/G/T, optional B); ``source`` names the
    setting in the error."""
    text = text.strip().upper()
    scale = 1
    for suffix, factor in (("K", 2**10), ("M", 2**20), ("G", 2**30), ("T", 2**40)):
        if text.endswith(suffix) or text.endswith(suffix + "B"):
            scale = factor
            text = text.rstrip("B")[:-1]
            break
    try:
        value = float(text) * scale
    except ValueError:
        value = float("nan")
    if not (value == value and 0 < value < float("inf")):
        raise ValueError(
            f"{source} is not a usable memory budget: it must be a positive, finite number "
            "of bytes, such as 2000000000 or 2G. Fix or unset it."
        )
    return max(1, int(value))
