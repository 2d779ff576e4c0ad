"""Process-wide settings: the fast-math flag set, the memory budget and the tunables.

Everything here is read at call time, never written at import. The tunables are plain
module constants read by the Python tier, which passes them to the kernels as arguments
(a kernel compiled with ``cache=True`` would not see a changed global). Changing one changes
speed, never results, except where its comment says otherwise.
"""

import os

import numpy as np

#: The one fast-math flag set used by kernels that may use it. It leaves out ``nnan`` and
#: ``ninf`` on purpose: kernels that meet inf (heaps seeded with inf, Dijkstra) keep IEEE
#: semantics, and kernels that use this set must still be correct for finite input.
FASTMATH = frozenset({"nsz", "arcp", "contract", "afn", "reassoc"})

#: Row blocks of the blocked scatter, Gram and projection loops (PCA's centring, LDA's
#: class scatter) hold about this many elements (4 MiB in float64): they stay in cache while
#: BLAS works on them, and no copy of X is made.
SCATTER_BLOCK_ELEMENTS = 2**19

_MEMORY_BUDGET_ENV = "FASTDR_MEMORY_BUDGET"

#: PCA's ``"arpack"`` solver on a dense tall X applies the Gram operator in one fused pass
#: over X (:mod:`fastdr._kernels.spectral.gram_product`) from this many elements of X up. Below it X
#: stays in the last-level cache, where two BLAS matrix-vector products on a centred copy
#: are as fast, without a numba launch per product (about 0.1 ms on the workqueue layer,
#: more when its threads have gone to sleep, as between the report's timed calls).
#: Measured (float64, 10 components): 20,000 x 2,000 0.44 s against 0.84 s; 10,000 x 500
#: 1.0x to 1.4x in direct loops but 0.83x to 0.98x in the report; 5,000 x 500 0.78x.
ARPACK_GRAM_MIN_ELEMENTS = 2**23
#: The same threshold in stored entries, for a CSR X (scipy's two single-threaded sparse
#: products against one fused pass on every thread; 100,000 x 2,000 at 10% stored: 0.64 s
#: against 0.99 s a fit; 20,000 x 500 (1M stored): 1.2x to 1.4x in direct loops, 0.85x to
#: 0.92x in the report).
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
#: ... when ``d <= RANDOMIZED_GRAM_GAIN x iterations x (n_components + n_oversamples)``.
#: Break-even measured at 5 to 6 (float64, 5,000 rows, block of 12 or 20): d = 500 with 1,
#: 2, 3 iterations 0.52x, 0.67x, 0.81x; d = 100 with 1 iteration 0.98x; and 7 iterations
#: (scikit-learn's default for 10 components) 1.1x at 2,000 x 500, 2.2x at 5,000 x 500.
RANDOMIZED_GRAM_GAIN = 5.0

#: LDA's row gathering (class scatter, Ledoit-Wolf, the R factor) runs on the calling thread
#: for blocks below this many elements
#: (see :func:`fastdr.discriminant._class_scatter.gather_centre`):
#: measured serial against a parallel launch, 1,000 x 25 12 against 90 us, 5,000 x 100 281
#: against 417 us (the gather is memory-bound) ...
GATHER_PARALLEL_MIN_ELEMENTS = 2**20
#: ... and its per-block products ``B^T B`` run on one BLAS thread up to this many
#: multiply-adds a block (rows x d^2; measured single against two threads: 1,000 x 25 25 us
#: against 49 us, 8,192 x 64 841 against 926 us, 5,000 x 100 1.18 against 1.04 ms).
LDA_SINGLE_THREAD_BLAS_MAX_WORK = 2**26

#: MMC's pair sums (pairs x d^2 multiply-adds) up to this size run serially: a parallel
#: launch costs about 0.1 ms on numba's workqueue layer. Measured on 10 Gaussian classes,
#: d = 16 (a few thousand pairs, under 1M a sum) MMC_Supervised's fit went from 64 to 16 ms
#: at m = 1,000 (metric-learn about 40 ms), and from 104 to 41 ms at d = 32.
MMC_SERIAL_MAX_WORK = 2**22

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
#: Targets per float32 GEMM block of the k-NN screen (:mod:`fastdr._kernels.knn.screen`):
#: the packed panel (about 100 KiB at d = 50) stays in L2 beside a 128 x 512 key tile.
#: Measured (median of 7, float32, k=10): 45 ms against 57 ms for 2,048 at 5,000 x 50;
#: within noise of 2,048 at 20,000 x 50.
SCREEN_TARGET_BLOCK = 512
#: Query rows per parallel iteration of ``pairwise_distances``' GEMM kernel.
PAIRWISE_QUERY_BLOCK = 64
#: Rows and columns per tile of the symmetric ``pairwise_distances(X)`` kernel: 128 up to
#: ``PAIRWISE_SMALL_ROWS`` rows (enough tiles to balance the threads), 256 above. Measured
#: (float64, d=100, the kernel alone, median of 101): 0.64 against 0.94 ms at 500 rows,
#: 2.0 against 2.2 ms at 1,000, equal at 2,000; 256 wins at 5,000 (62 against 69 ms).
PAIRWISE_SELF_BLOCK = 256
PAIRWISE_SMALL_ROWS = 2048
#: ``pairwise_distances`` writes outputs of at least this many bytes with streaming stores
#: (:mod:`fastdr._kernels._numba_ext`): a plain store to a line that is not cached first
#: reads it from memory. Smaller outputs stay in cache for the caller. Measured (float64,
#: d=100, the call then a sum of the result, median): 500 rows (2 MB) 0.80 plain against
#: 1.22 ms streamed, 1,000 rows equal, 2,000 rows 10.2 against 7.9 ms, 5,000 rows 66 against
#: 52 ms, 10,000 rows (the call alone) 192 against 155 ms.
PAIRWISE_STREAM_MIN_BYTES = 2**24
#: The O(m d) set-up kernels of the distance routes (norms, packing) run on the calling
#: thread for inputs up to this many elements: a parallel launch costs about 0.1 ms on
#: numba's workqueue layer, more than the serial pass (about 0.3 ns an element).
PREP_SERIAL_MAX_ELEMENTS = 2**18

# --- geodesic distances (Isomap) ------------------------------------------------------------

#: ``path_method="auto"`` uses Floyd-Warshall when the graph stores more than this share of
#: all m^2 ordered pairs (average degree > m / 4), Dijkstra otherwise.
FLOYD_MIN_DENSITY = 0.25
#: Dijkstra sources per parallel iteration (heap buffers are allocated once per block).
DIJKSTRA_SOURCE_BLOCK = 16
#: Tile edge of blocked Floyd-Warshall and of the mirror pass after Dijkstra.
PATH_TILE = 64
#: Landmark columns written together by landmark Dijkstra.
LANDMARK_PANEL = 8

# --- NCA ------------------------------------------------------------------------------------

#: One thread's block of softmax rows holds at most about this many bytes (12 m per row:
#: distances or weights, and candidate indices); between 16 and 64 rows per block.
NCA_BLOCK_BYTES = 48 * 2**20
#: The row blocks are split into at most this many fixed chunks, merged in order: results
#: never depend on ``n_jobs`` (changing it changes the last bits of the objective).
NCA_MAX_CHUNKS = 32


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

    The budget is, in order of precedence: the ``FASTDR_MEMORY_BUDGET`` environment variable
    (bytes, or with a ``K``/``M``/``G`` suffix), else 80% of the memory the operating system
    reports as available.

    Returns
    -------
    int
        The budget in bytes.
    """
    raw = os.environ.get(_MEMORY_BUDGET_ENV)
    if raw:
        return _parse_bytes(raw)
    return int(0.8 * _available_memory())


#: Dense allocations up to this many bytes are not checked against the budget unless
#: ``FASTDR_MEMORY_BUDGET`` is set: they fit any machine that runs Python, and reading
#: /proc/meminfo costs about 0.1 ms, a tenth of a small PCA's fit.
SMALL_ALLOCATION_BYTES = 2**20


def budget_applies(n_bytes):
    """True when an allocation of ``n_bytes`` is checked against :func:`memory_budget`."""
    return n_bytes > SMALL_ALLOCATION_BYTES or bool(os.environ.get(_MEMORY_BUDGET_ENV))


def _parse_bytes(text):
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
            f"{_MEMORY_BUDGET_ENV}={os.environ.get(_MEMORY_BUDGET_ENV)!r} is not a usable "
            "memory budget: it must be a positive, finite number of bytes, such as "
            "2000000000 or 2G. Fix or unset the environment variable."
        )
    return max(1, int(value))


def _available_memory():
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        pages = os.sysconf("SC_AVPHYS_PAGES")
        size = os.sysconf("SC_PAGE_SIZE")
        return int(pages * size)
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30
