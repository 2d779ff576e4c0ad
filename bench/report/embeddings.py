"""2-D embeddings of the swiss roll and the S-curve by every method, fastdr and anchor."""

import numpy as np

from bench.agreement import error_text, procrustes
from bench.data import make_data
from bench.workloads._base import Arg, estimator
from bench.workloads.isomap import n_landmarks_for

_GAMMA = Arg("1/total variance", lambda data: 1.0 / float(data.X.var(axis=0).sum()))
_NN = {"n_neighbors": 10, "n_components": 2}
_SUPERVISED = "fit(X, y).transform(X)"
# (name, fastdr path, fastdr params, anchor path or None, anchor params, method chain)
_METHODS = (
    ("PCA", "PCA", {"n_components": 2}, "sklearn.decomposition.PCA", None, None),
    ("Kernel PCA (rbf)", "KernelPCA",
     {"n_components": 2, "kernel": "rbf", "gamma": _GAMMA, "random_state": 0},
     "sklearn.decomposition.KernelPCA", None, None),
    ("Classical MDS", "ClassicalMDS", {"n_components": 2}, "sklearn.manifold.ClassicalMDS",
     None, None),
    ("Isomap", "Isomap", _NN, "sklearn.manifold.Isomap", None, None),
    ("Landmark Isomap", "Isomap",
     {**_NN, "n_landmarks": Arg("L", lambda data: n_landmarks_for(data.m)), "random_state": 0},
     "sklearn.manifold.Isomap", _NN, None),
    ("LLE", "LocallyLinearEmbedding", {**_NN, "random_state": 0},
     "sklearn.manifold.LocallyLinearEmbedding", None, None),
    ("LDA (6 position classes)", "LinearDiscriminantAnalysis", {"n_components": 2},
     "sklearn.discriminant_analysis.LinearDiscriminantAnalysis", None, _SUPERVISED),
    ("NCA (6 position classes)", "NeighborhoodComponentsAnalysis",
     {"n_components": 2, "init": "pca", "max_iter": 50, "random_state": 0},
     "sklearn.neighbors.NeighborhoodComponentsAnalysis", None, _SUPERVISED),
    ("MMC (6 position classes)", "MMC_Supervised", {"n_components": 2, "random_state": 0},
     None, None, _SUPERVISED),
)


def _embed(impl, data, label, notes):
    try:
        return np.asarray(impl.run(data, None), dtype=np.float64)[:, :2]
    except Exception as exc:  # noqa: BLE001 - report, never crash
        notes.append(f"{label} error: {error_text(exc)}")
        return None


def compute_embeddings(kind, m):
    """Embed one manifold with every method: ``kind``, ``m``, ``colour`` and ``methods`` (each
    with ``name``, the ``fastdr`` and ``anchor`` arrays or None, ``anchor_label``, their
    Procrustes ``disparity`` and ``notes``)."""
    data = make_data(kind, m, 3)
    methods = []
    for name, attr, params, anchor_path, anchor_params, chain in _METHODS:
        chain = chain or "fit_transform(X)"
        fast = estimator("fastdr", f"fastdr.{attr}", params, chain)
        anchor_label = None if anchor_path is None else (
            "sklearn Isomap (full)" if name == "Landmark Isomap" else "sklearn")
        entry = {"name": name, "fastdr": None, "anchor": None, "anchor_label": anchor_label,
                 "disparity": None, "notes": []}
        ok, reason = fast.available()
        entry["fastdr"] = _embed(fast, data, "fastdr", entry["notes"]) if ok else None
        entry["notes"] += [] if ok else [reason]
        if anchor_path is not None:
            anchor = estimator("sklearn", anchor_path, anchor_params or params, chain)
            entry["anchor"] = _embed(anchor, data, anchor_label, entry["notes"])
        if entry["fastdr"] is not None and entry["anchor"] is not None:
            entry["disparity"] = procrustes(entry["fastdr"], entry["anchor"], 1.0).value
        methods.append(entry)
    return {"kind": kind, "m": m, "colour": data.colour, "methods": methods}
