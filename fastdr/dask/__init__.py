"""fastdr on a Dask cluster: the same estimators over row-chunked dask arrays.

Import it explicitly (``import fastdr.dask``); ``import fastdr`` never imports dask. Install
with ``pip install fastdr[dask]`` (``dask[array]`` and ``distributed``).

* Input: a ``dask.array.Array`` chunked by rows (the features are rechunked into one chunk)
  or a ``dask.dataframe.DataFrame``; NumPy input is refused with a pointer to the in-memory
  estimator.
* Output: fitted attributes are NumPy arrays; ``transform``, ``predict`` and ``kneighbors``
  return lazy dask arrays with the row chunks of their input.
* Tasks run fastdr's numba kernels, each on the cores of the worker that runs it; the
  reductions (sums of moments, top-k merges) go up a tree and the small dense problems
  (eigenproblems, the L-BFGS loop) run on the client.
"""

from ._decomposition import PCA
from ._discriminant import LinearDiscriminantAnalysis
from ._isomap import Isomap
from ._mds import ClassicalMDS
from ._nca import NeighborhoodComponentsAnalysis
from ._neighbors import (
    KNeighborsClassifier,
    KNeighborsRegressor,
    NearestNeighbors,
    kneighbors_graph,
)

__all__ = [
    "ClassicalMDS",
    "Isomap",
    "KNeighborsClassifier",
    "KNeighborsRegressor",
    "LinearDiscriminantAnalysis",
    "NearestNeighbors",
    "NeighborhoodComponentsAnalysis",
    "PCA",
    "kneighbors_graph",
]
