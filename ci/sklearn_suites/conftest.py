"""pytest conftest: scikit-learn's own test files, run with fastdr's estimators swapped in.

``ci/sklearn_suites.sh`` copies this file, as ``conftest.py``, to the root of a temporary
directory holding copies of scikit-learn's test files, and runs pytest there. pytest imports
a conftest before it collects (imports) any test module, so the swap below, done when this
file is imported, is in place when a test module runs ``from sklearn.neighbors import X``
(the name it binds is fastdr's) and when a test calls ``neighbors.X`` or ``manifold.X`` at run
time (the package attribute is fastdr's).

Only the public names of scikit-learn's packages are replaced, and only after every
scikit-learn subpackage has been imported, so scikit-learn's own modules keep what they bound
at import: sklearn's SpectralEmbedding, TSNE, DBSCAN, KNNImputer and
``manifold._locally_linear.barycenter_kneighbors_graph`` still use sklearn's
NearestNeighbors (checked after collection: a scikit-learn module bound to a fastdr object
aborts the run). Private helpers a test imports from a submodule
(``sklearn.manifold._locally_linear.barycenter_kneighbors_graph``,
``sklearn.decomposition._pca._assess_dimension``, ``sklearn.discriminant_analysis._cov``,
``sklearn.neighbors._base._check_precomputed``, ...) stay scikit-learn's, as fastdr exports
none of them; so do the names fastdr lacks (RadiusNeighborsClassifier/Regressor).

scikit-learn's top conftest (``sklearn/conftest.py``: the ``global_random_seed`` and
``global_dtype`` fixtures, its hooks and markers) is loaded as a plugin, so the files run as
they do in scikit-learn's tree.

After collection every collected test module's globals are checked: each one bound to a
swapped name must be fastdr's object (a test module that imported scikit-learn's class
anyway aborts the run). At the end one line per file gives ``passed/total`` (total = passed
+ failed + errors; skipped, xfailed and xpassed apart), counted as pytest's own summary
counts them.
"""

import importlib
import inspect
import sys

import pytest
import sklearn

import fastdr

# scikit-learn's top conftest: fixtures and hooks, as in scikit-learn's own tree
pytest_plugins = ["sklearn.conftest"]

#: the names looked for, per scikit-learn module; only those that both scikit-learn (the
#: pinned version) and fastdr (its ``__all__``) have are replaced
CANDIDATES = {
    "sklearn.neighbors": (
        "NearestNeighbors",
        "KNeighborsClassifier",
        "KNeighborsRegressor",
        "RadiusNeighborsClassifier",
        "RadiusNeighborsRegressor",
        "kneighbors_graph",
        "radius_neighbors_graph",
        "NeighborhoodComponentsAnalysis",
    ),
    "sklearn.decomposition": ("PCA", "IncrementalPCA", "KernelPCA"),
    "sklearn.manifold": (
        "Isomap",
        "LocallyLinearEmbedding",
        "locally_linear_embedding",
        "ClassicalMDS",
    ),
    "sklearn.discriminant_analysis": ("LinearDiscriminantAnalysis",),
}


#: imported before the swap, so that what they bind stays scikit-learn's: every subpackage
#: (sklearn.manifold binds sklearn.neighbors' classes, sklearn.cluster and sklearn.impute
#: NearestNeighbors, ...) and the estimator-check helpers some test files use
PRELOAD = (
    "sklearn.utils.estimator_checks",
    "sklearn.utils._test_common.instance_generator",
)


def _swap():
    """Replace the candidate names; returns ``{name: fastdr object}`` and the names left."""
    for name in sklearn.__all__:
        if not callable(getattr(sklearn, name, None)):  # a subpackage, not clone or get_config
            importlib.import_module(f"sklearn.{name}")
    for name in PRELOAD:
        importlib.import_module(name)
    swapped, left = {}, []
    for module_name, names in CANDIDATES.items():
        module = importlib.import_module(module_name)
        for name in names:
            if name not in fastdr.__all__ or not hasattr(module, name):
                left.append(f"{module_name}.{name}")
                continue
            new = getattr(fastdr, name)
            setattr(module, name, new)
            swapped[f"{module_name}.{name}"] = new
    return swapped, left


SWAPPED, NOT_SWAPPED = _swap()
_BY_NAME = {key.rsplit(".", 1)[1]: obj for key, obj in SWAPPED.items()}


def _unwrapped(obj):
    """``obj`` without its decorators (test_neighbors.py wraps neighbors.kneighbors_graph in
    ignore_warnings)."""
    try:
        return inspect.unwrap(obj)
    except Exception:  # a cycle, or an object whose __wrapped__ cannot be read
        return obj


_config = None
_tally = {}  # file -> {category: count}
_checked = {}  # file -> names in the test module's globals found bound to fastdr's object


def pytest_configure(config):
    global _config
    _config = config


def pytest_report_header(config):
    return [
        "fastdr swapped in: " + ", ".join(SWAPPED),
        "not swapped (absent from fastdr or sklearn): " + (", ".join(NOT_SWAPPED) or "none"),
    ]


def pytest_collection_finish(session):
    # the swap still in place, and each collected test module bound to fastdr's objects
    wrong = []
    for key, obj in SWAPPED.items():
        module_name, name = key.rsplit(".", 1)
        if _unwrapped(getattr(importlib.import_module(module_name), name)) is not obj:
            wrong.append(f"{key} is no longer fastdr's")
    # scikit-learn's own modules (not its tests) still bound to scikit-learn's objects
    ours = {id(obj) for obj in SWAPPED.values()}
    for module_name, module in list(sys.modules.items()):
        if (
            module is None
            or not module_name.startswith("sklearn.")
            or ".tests." in module_name
            or module_name in CANDIDATES
        ):
            continue
        for name, value in vars(module).items():
            if id(value) in ours or id(_unwrapped(value)) in ours:
                wrong.append(f"scikit-learn's {module_name}.{name} is fastdr's")
    seen = set()
    for item in session.items:
        module = getattr(item, "module", None)
        if module is None or module.__name__ in seen:
            continue
        seen.add(module.__name__)
        file = item.nodeid.split("::", 1)[0]
        names = _checked.setdefault(file, [])
        for name, obj in _BY_NAME.items():
            bound = vars(module).get(name)
            if bound is None:
                continue
            if _unwrapped(bound) is obj:
                names.append(name)
            else:
                wrong.append(f"{file}: global {name} is {bound!r}, not fastdr's")
    if wrong:
        raise pytest.UsageError("swap not in effect:\n" + "\n".join(wrong))


def _known_failures():
    """``{node id: reason}`` from known_failures.txt (beside this file in the repository,
    copied next to it by ci/sklearn_suites.sh)."""
    import pathlib

    known, reason = {}, None
    for line in (pathlib.Path(__file__).parent / "known_failures.txt").read_text().splitlines():
        line = line.strip()
        if line.startswith("## "):
            reason = line[3:]
        elif line and not line.startswith("#"):
            known[line] = reason
    return known


def pytest_collection_modifyitems(config, items):
    # each known failure is expected to fail, strictly: a listed test that passes fails the
    # run (take it off the list), and so does any failure not listed
    known = _known_failures()
    found = set()
    for item in items:
        reason = known.get(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
            found.add(item.nodeid)
    files = {item.nodeid.split("::", 1)[0] for item in items}
    missing = sorted(n for n in set(known) - found if n.split("::", 1)[0] in files)
    if missing and not config.getoption("keyword"):
        raise pytest.UsageError("known_failures.txt lists tests that were not collected "
                                "(renamed in scikit-learn?):\n" + "\n".join(missing))


def _count(file, category):
    counts = _tally.setdefault(file, {})
    counts[category] = counts.get(category, 0) + 1


def pytest_collectreport(report):
    if report.failed:  # a test file that does not import: one error
        _count(report.nodeid.split("::", 1)[0], "error")


def pytest_runtest_logreport(report):
    # the category pytest's terminal summary counts the report under ("" for a passing
    # setup or teardown)
    category = _config.hook.pytest_report_teststatus(report=report, config=_config)[0]
    if category:
        _count(report.nodeid.split("::", 1)[0], category)


def pytest_terminal_summary(terminalreporter):
    write = terminalreporter.write_line
    write("")
    write("fastdr in scikit-learn's tests: passed/total (total = passed + failed + errors)")
    for file, counts in sorted(_tally.items()):
        passed = counts.get("passed", 0)
        total = passed + counts.get("failed", 0) + counts.get("error", 0)
        extra = [
            f"{category} {counts[category]}"
            for category in ("failed", "error", "skipped", "xfailed", "xpassed")
            if counts.get(category)
        ]
        write(f"{file} {passed}/{total}" + (f" ({', '.join(extra)})" if extra else ""))
    write("fastdr's in scikit-learn's modules: " + ", ".join(SWAPPED))
    write("swap check, test module globals found bound to fastdr's objects:")
    for file, names in sorted(_checked.items()):
        write(f"  {file}: {', '.join(sorted(names)) or 'none (it uses the package attributes)'}")
