"""MKL, BLIS and FlexiBLAS are pinned around launches like OpenBLAS (faked libraries: the
test environment has OpenBLAS only)."""

import numpy as np
import pytest

import fastdr
from fastdr._runtime import blas as _blas


class FakeBlas:
    """A loaded BLAS with one vendor's thread-count calls, recording every count set."""

    def __init__(self, get_name, set_name, threads=8):
        self.threads = threads
        self.history = []

        def get():
            return self.threads

        def set_(n):
            self.threads = n
            self.history.append(n)

        setattr(self, get_name, get)
        setattr(self, set_name, set_)


@pytest.fixture
def fake_vendor(monkeypatch):
    def install(vendor, path="/opt/fake/lib/libblas_fake.so"):
        get_name, set_name = _blas._VENDOR_CALLS[vendor][0]
        lib = FakeBlas(get_name, set_name)
        monkeypatch.setattr(_blas, "_blas_libraries", lambda: [(path, vendor)])
        monkeypatch.setattr(_blas, "_open", lambda p: lib if p == path else None)
        monkeypatch.setattr(_blas, "_CONTROLS", None)
        return lib

    yield install
    _blas._CONTROLS = None  # the next launch finds the real libraries again


@pytest.mark.parametrize("vendor", ["mkl", "blis", "flexiblas", "openblas"])
def test_each_vendor_is_pinned_for_a_launch_and_restored(fake_vendor, vendor):
    lib = fake_vendor(vendor)
    with _blas.launch_blas():
        assert lib.threads == 1
        assert _blas.controlled_thread_counts() == [1]
    assert lib.threads == 8 and lib.history == [1, 8]


def test_a_real_kernel_launch_pins_a_faked_mkl(fake_vendor, monkeypatch):
    lib = fake_vendor("mkl", path="/opt/intel/lib/libmkl_rt.so.2")
    seen = []
    real = _blas._set_counts
    monkeypatch.setattr(_blas, "_set_counts",
                        lambda controls, counts: seen.append(list(counts)) or real(controls,
                                                                                    counts))
    X = np.random.default_rng(0).standard_normal((30, 20))
    fastdr.NearestNeighbors(n_neighbors=3, algorithm="brute").fit(X).kneighbors()
    assert seen and seen[0] == [1] and seen[-1] == [8]
    assert lib.threads == 8


def test_a_vendor_without_thread_calls_is_left_alone(fake_vendor, monkeypatch):
    fake_vendor("mkl")
    monkeypatch.setattr(_blas, "_blas_libraries", lambda: [("/x/libaccelerate.so", "other")])
    with _blas.launch_blas():
        assert _blas.controlled_thread_counts() == []
