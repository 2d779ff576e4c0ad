"""2-D embeddings of the swiss roll and the S-curve by every method, fastdr and anchor."""

import numpy as np

from bench.agreement import error_text, procrustes
from bench.data import make_data
from bench.workloads.isomap import n_landmarks_for

K = 10


def _gamma(X):
    return 1.0 / float(X.var(axis=0).sum())


def _methods():
    """(name, fastdr attribute, fastdr fn, anchor label, anchor fn); fns take (X, y)."""
    from sklearn import decomposition, discriminant_analysis, manifold, neighbors

    import fastdr

    def fd(attr):
        return getattr(fastdr, attr, None)

    return (
        ("PCA", "PCA", lambda X, y: fd("PCA")(n_components=2).fit_transform(X),
         "sklearn", lambda X, y: decomposition.PCA(n_components=2).fit_transform(X)),
        ("Kernel PCA (rbf)", "KernelPCA",
         lambda X, y: fd("KernelPCA")(n_components=2, kernel="rbf", gamma=_gamma(X),
                                      random_state=0).fit_transform(X),
         "sklearn", lambda X, y: decomposition.KernelPCA(
             n_components=2, kernel="rbf", gamma=_gamma(X), random_state=0).fit_transform(X)),
        ("Classical MDS", "ClassicalMDS",
         lambda X, y: fd("ClassicalMDS")(n_components=2).fit_transform(X),
         "sklearn", lambda X, y: manifold.ClassicalMDS(n_components=2).fit_transform(X)),
        ("Isomap", "Isomap",
         lambda X, y: fd("Isomap")(n_neighbors=K, n_components=2).fit_transform(X),
         "sklearn", lambda X, y: manifold.Isomap(n_neighbors=K, n_components=2)
         .fit_transform(X)),
        ("Landmark Isomap", "Isomap",
         lambda X, y: fd("Isomap")(n_neighbors=K, n_components=2,
                                   n_landmarks=n_landmarks_for(len(X)),
                                   random_state=0).fit_transform(X),
         "sklearn Isomap (full)", lambda X, y: manifold.Isomap(n_neighbors=K, n_components=2)
         .fit_transform(X)),
        ("LLE", "LocallyLinearEmbedding",
         lambda X, y: fd("LocallyLinearEmbedding")(n_neighbors=K, n_components=2,
                                                   random_state=0).fit_transform(X),
         "sklearn", lambda X, y: manifold.LocallyLinearEmbedding(
             n_neighbors=K, n_components=2, random_state=0).fit_transform(X)),
        ("LDA (6 position classes)", "LinearDiscriminantAnalysis",
         lambda X, y: fd("LinearDiscriminantAnalysis")(n_components=2).fit(X, y).transform(X),
         "sklearn", lambda X, y: discriminant_analysis.LinearDiscriminantAnalysis(
             n_components=2).fit(X, y).transform(X)),
        ("NCA (6 position classes)", "NeighborhoodComponentsAnalysis",
         lambda X, y: fd("NeighborhoodComponentsAnalysis")(
             n_components=2, init="pca", max_iter=50, random_state=0).fit(X, y).transform(X),
         "sklearn", lambda X, y: neighbors.NeighborhoodComponentsAnalysis(
             n_components=2, init="pca", max_iter=50, random_state=0).fit(X, y).transform(X)),
        ("MMC (6 position classes)", "MMC_Supervised",
         lambda X, y: fd("MMC_Supervised")(n_components=2, random_state=0).fit(X, y)
         .transform(X),
         None, None),
    )


def compute_embeddings(kind, m):
    """Embed one manifold with every method.

    Returns
    -------
    dict
        ``kind``, ``m``, ``colour`` (position along the manifold), and ``methods``: a list of
        dicts with ``name``, ``fastdr`` (array or None), ``anchor`` (array or None),
        ``anchor_label``, ``disparity`` (Procrustes, fastdr vs anchor) and ``notes``.
    """
    import fastdr

    data = make_data(kind, m, 3)
    X, y = data.X, data.y
    methods = []
    for name, attr, fast_fn, anchor_label, anchor_fn in _methods():
        entry = {"name": name, "fastdr": None, "anchor": None, "anchor_label": anchor_label,
                 "disparity": None, "notes": []}
        if not hasattr(fastdr, attr):
            entry["notes"].append(f"not available: fastdr.{attr} is not importable yet")
        else:
            try:
                entry["fastdr"] = np.asarray(fast_fn(X, y), dtype=np.float64)[:, :2]
            except Exception as exc:  # noqa: BLE001 - report, never crash
                entry["notes"].append(f"fastdr error: {error_text(exc)}")
        if anchor_fn is not None:
            try:
                entry["anchor"] = np.asarray(anchor_fn(X, y), dtype=np.float64)[:, :2]
            except Exception as exc:  # noqa: BLE001
                entry["notes"].append(f"{anchor_label} error: {error_text(exc)}")
        if entry["fastdr"] is not None and entry["anchor"] is not None:
            entry["disparity"] = procrustes(entry["fastdr"], entry["anchor"], 1.0).value
        methods.append(entry)
    return {"kind": kind, "m": m, "colour": data.colour, "methods": methods}
