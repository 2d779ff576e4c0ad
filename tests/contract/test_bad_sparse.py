"""Corrupt sparse index arrays, at every public entry that takes sparse input.

scipy does not check a matrix built from raw arrays or edited afterwards, and its C
conversions and products read through the indices: before the one checked entry
(:mod:`fastdr._validation.sparse`) KernelPCA segfaulted or returned garbage here. Each
case runs in a child process, so a crash fails the test instead of killing the run.
"""

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from fastdr._validation.sparse import check_sparse, check_structure

CORRUPTIONS = {
    "csr indptr decreasing": "X = sp.csr_matrix(np.ones((6, 4))); X.indptr[2] = X.indptr[3] + 2",
    "csr column out of range": "X = sp.csr_matrix(np.ones((6, 4))); X.indices[3] = 9",
    "csr negative column": "X = sp.csr_matrix(np.ones((6, 4))); X.indices[3] = -7",
    "csc row out of range": "X = sp.csc_matrix(np.ones((6, 4))); X.indices[3] = 90",
    "coo row out of range": "X = sp.coo_matrix(np.ones((6, 4))); X.row[2] = 50",
    "coo column negative": "X = sp.coo_matrix(np.ones((6, 4))); X.col[2] = -1",
    "bsr block column out of range": ("X = sp.bsr_matrix(np.ones((6, 4)), blocksize=(2, 2)); "
                                      "X.indices[1] = 40"),
    "csr fewer values than indices": "X = sp.csr_matrix(np.ones((6, 4))); X.data = X.data[:3]",
}
ENTRIES = {
    "PCA.fit": "fastdr.PCA(2, svd_solver='arpack').fit(X)",
    "KernelPCA.fit": "fastdr.KernelPCA(2).fit(X)",
    "KernelPCA.transform": "fastdr.KernelPCA(2).fit(np.random.rand(6, 4)).transform(X)",
    "Isomap.fit": "fastdr.Isomap(n_neighbors=2, n_components=1).fit(X)",
    "Isomap.transform": ("fastdr.Isomap(n_neighbors=2, n_components=1)"
                         ".fit(sp.csr_matrix(np.random.rand(6, 4))).transform(X)"),
    "NearestNeighbors.fit": "fastdr.NearestNeighbors(n_neighbors=2).fit(X)",
    "NearestNeighbors.kneighbors": ("fastdr.NearestNeighbors(n_neighbors=2)"
                                    ".fit(np.random.rand(6, 4)).kneighbors(X)"),
    "pairwise_distances": "fastdr.pairwise_distances(X)",
    "KNeighborsClassifier.fit": "fastdr.KNeighborsClassifier(2).fit(X, [0, 1] * 3)",
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_every_sparse_entry_refuses_corrupt_index_arrays(corruption):
    body = "\n".join(
        f"try:\n    {call}\n    print({name!r}, 'ACCEPTED')\n"
        f"except ValueError as exc:\n"
        f"    ok = 'not a valid sparse matrix' in str(exc)\n"
        f"    print({name!r}, 'REFUSED' if ok else 'OTHER: ' + str(exc)[:80])"
        for name, call in ENTRIES.items())
    code = (f"import numpy as np, scipy.sparse as sp, fastdr\n"
            f"{CORRUPTIONS[corruption]}\n{body}\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, f"crashed (exit {run.returncode}): {run.stderr[-600:]}"
    lines = run.stdout.strip().splitlines()
    assert len(lines) == len(ENTRIES), run.stdout + run.stderr[-600:]
    wrong = [line for line in lines if not line.endswith("REFUSED")]
    assert not wrong, "\n".join(wrong)


def test_the_checked_entry_leaves_a_valid_matrix_unchanged_and_canonicalises_a_copy():
    rng = np.random.default_rng(0)
    dense = rng.random((7, 5)) * (rng.random((7, 5)) < 0.5)
    for fmt in ("csr", "csc", "coo", "bsr", "lil", "dok", "dia"):
        X = sp.csr_matrix(dense).asformat(fmt)
        assert check_structure(X) is X
        out = check_sparse(X)
        assert out.format == "csr" and out.indices.dtype == np.int64
        np.testing.assert_array_equal(out.toarray(), dense)
    # duplicates and unsorted indices: summed and sorted on a copy, the input untouched
    messy = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]),
                           np.array([0, 3, 3])), shape=(2, 3))
    before = messy.indices.copy()
    out = check_sparse(messy)
    np.testing.assert_array_equal(out.toarray(), [[2.0, 0.0, 4.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(messy.indices, before)
    assert check_sparse(sp.csc_matrix(dense), formats=("csr", "csc")).format == "csc"


def test_a_corrupt_lil_matrix_is_refused_after_conversion():
    X = sp.lil_matrix((3, 3))
    X[0, 1] = 1.0
    X.rows[0] = [5]
    with pytest.raises(ValueError):
        check_sparse(X)


def test_mds_names_the_remedy_for_a_sparse_precomputed_matrix():
    import fastdr

    with pytest.raises(TypeError, match=r"Convert it with its \.toarray\(\) method\."):
        fastdr.ClassicalMDS(2, metric="precomputed").fit(sp.csr_matrix(np.ones((5, 5))))


def test_isomap_precomputed_transform_refuses_a_corrupt_query_graph():
    import fastdr

    rng = np.random.default_rng(0)
    D = np.abs(rng.normal(size=(8, 8)))
    D = D + D.T
    np.fill_diagonal(D, 0)
    est = fastdr.Isomap(n_neighbors=3, n_components=1, metric="precomputed").fit(D)
    Q = sp.csr_matrix(D[:2])
    Q.indices[0] = -3
    with pytest.raises(ValueError, match="not a valid sparse matrix"):
        est.transform(Q)
