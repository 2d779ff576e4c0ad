"""pytest conftest: metric-learn 0.7.0's own test files, run with fastdr's learners swapped in.

``ci/metric_learn_suite.sh`` copies metric-learn's ``test/`` folder to ``mltest/`` in a
temporary directory (the name ``test`` is the standard library's ``test`` package; the
``from test.`` imports are rewritten), puts this file at that directory's root as
``conftest.py`` and runs pytest there. pytest imports a conftest before it collects (imports)
any test module, so what is done here, when this file is imported, is in place when a test
module runs ``from metric_learn import LMNN`` (the name it binds is fastdr's), when
``mltest/test_utils.py`` builds its lists of learner instances, and when a test calls
``metric_learn.NCA(...)`` at run time.

1. Shims (both modes). metric-learn 0.7.0 was written for scikit-learn < 1.8; fastdr needs
   scikit-learn >= 1.9. Each shim below is the least that lets metric-learn's helpers (and,
   without the swap, its learners) run, and says why.
2. The swap (unless ``FASTDR_SWAP=0``). Every learner class that both metric-learn
   (``metric_learn.__all__``) and fastdr (``fastdr.metric_learning.__all__``) have is replaced
   by fastdr's, in the ``metric_learn`` package and in every ``metric_learn.*`` module that
   binds it (``metric_learn.lmnn.LMNN``, ...); so are the private bases the tests name
   (``metric_learn.sdml._BaseSDML``: ``isinstance(estimator, _BaseSDML)``) where fastdr has
   one of that name. Learners fastdr does not have (LSML, SCML until they are written) stay
   metric-learn's, and their tests are counted apart. metric-learn's helpers stay
   metric-learn's: ``Constraints``, ``_util`` (``check_input``, ``components_from_metric``,
   ...), ``lmnn._sum_outer_products``, ``exceptions`` and the mixins of ``base_metric``,
   which the tests subclass to build mock learners. fastdr's learners do not inherit those
   mixins; the tests dispatch on them (``isinstance(estimator, _PairsClassifierMixin)``), so
   fastdr's own mixins are registered as virtual subclasses of metric-learn's (they are
   ABCs): ``isinstance`` answers as for metric-learn's learners, and no behaviour changes.

Each test is put in one of three groups, by the learners it uses: its parameters (learner
instances or classes, nested in tuples and lists) and the names its code reads (including
nested functions), resolved in its module (a list such as ``metric_learners`` counts by the
learners in it; a test module's subclass of a learner, ``Stable_RCA_Supervised``, by its
base). ``fastdr``: it uses a learner fastdr has (swapped in, or, with ``FASTDR_SWAP=0``, the
learner that would be); ``metric-learn learner``: only learners fastdr lacks; ``internals``:
no learner at all (tests of ``_util``, ``Constraints`` and the mixins, through mock
learners). The same rule runs with and without the swap, so the two runs' counts compare.

After collection every collected test module's globals are checked (swap mode): each one
bound to a swapped name must be fastdr's object, else the run aborts. The tests listed in
``known_failures.txt`` (swap mode only) are strict xfails. At the end one line per file gives
``passed/total`` per group (total = passed + failed + errors; skipped, xfailed and xpassed
apart), counted as pytest's own summary counts them.
"""

import importlib
import inspect
import os
import pathlib
import pkgutil
import types

import pytest
import sklearn.utils
import sklearn.utils.validation

SWAP = os.environ.get("FASTDR_SWAP", "1") != "0"


# --- 1. shims: what metric-learn 0.7.0 needs from scikit-learn < 1.8 ---------------------


def _renaming_force_all_finite(function):
    """``function`` taking scikit-learn < 1.8's ``force_all_finite`` keyword.

    ``check_array`` and ``check_X_y`` renamed ``force_all_finite`` to ``ensure_all_finite``
    in scikit-learn 1.6 and dropped the old name in 1.8; ``metric_learn._util`` (its
    ``check_input``, ``preprocess_points`` and ``preprocess_tuples``: every fit and query of
    every metric-learn learner, and the helpers the tests call) passes the old name, a
    TypeError on scikit-learn 1.8+ (metric-learn's issue #359).
    """

    def wrapper(*args, **kwargs):
        if "force_all_finite" in kwargs:
            kwargs["ensure_all_finite"] = kwargs.pop("force_all_finite")
        return function(*args, **kwargs)

    wrapper.__wrapped__ = function
    return wrapper


def _shim():
    import metric_learn._util as util

    # metric_learn._util binds both names at import (``from sklearn.utils import
    # check_array``), so its module globals are what is patched; scikit-learn is untouched
    util.check_array = _renaming_force_all_finite(sklearn.utils.check_array)
    util.check_X_y = _renaming_force_all_finite(sklearn.utils.validation.check_X_y)
    return ["metric_learn._util.check_array, check_X_y: force_all_finite -> ensure_all_finite"]


_pytest_warns = pytest.warns


def _warns(expected_warning=Warning, *args, **kwargs):
    """``pytest.warns``, taking pytest < 7's ``None``: record every warning, expect none in
    particular. metric-learn's tests use ``with pytest.warns(None) as record`` (to assert
    that no warning is raised), a TypeError since pytest 8."""
    if expected_warning is None:
        return pytest.WarningsRecorder(_ispytest=True)
    return _pytest_warns(expected_warning, *args, **kwargs)


def _shim_pytest():
    pytest.warns = _warns
    return ["pytest.warns(None) records every warning (pytest < 7)"]


SHIMS = _shim() + _shim_pytest()

import metric_learn  # noqa: E402  (after the shims, as the tests import it)

#: every metric-learn module, imported now, so the swap below reaches each one's bindings
ML_MODULES = [metric_learn] + [
    importlib.import_module(info.name)
    for info in pkgutil.walk_packages(metric_learn.__path__, "metric_learn.")
]

#: metric-learn's learners: its public classes less the helper Constraints
LEARNERS = {
    name: getattr(metric_learn, name)
    for name in metric_learn.__all__
    if inspect.isclass(getattr(metric_learn, name)) and name != "Constraints"
}


# --- 2. the swap --------------------------------------------------------------------------


def _fastdr_public():
    """``fastdr.metric_learning.__all__``, from its source."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec("fastdr")  # finds the package, runs none of it
    source = pathlib.Path(spec.origin).parent / "metric_learning" / "__init__.py"
    for node in ast.parse(source.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            getattr(t, "id", None) == "__all__" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return set()


def _fastdr_object(name):
    """fastdr's object of metric-learn's learner or private base ``name``, or None."""
    import fastdr.metric_learning as fml

    if not name.startswith("_"):
        return getattr(fml, name) if name in fml.__all__ else None
    for info in pkgutil.iter_modules(fml.__path__, "fastdr.metric_learning."):
        obj = getattr(importlib.import_module(info.name), name, None)
        if inspect.isclass(obj):
            return obj
    return None


#: the mixins of metric_learn.base_metric that the tests dispatch on, and fastdr's
#: counterpart (module, class); one fastdr has not written yet is left out
MIXINS = {
    "MahalanobisMixin": ("fastdr.metric_learning._base", "MahalanobisMixin"),
    "_PairsClassifierMixin": ("fastdr.metric_learning._pairs_classifier", "PairsClassifierMixin"),
    "_TripletsClassifierMixin": (
        "fastdr.metric_learning._order_classifiers",
        "TripletsClassifierMixin",
    ),
    "_QuadrupletsClassifierMixin": (
        "fastdr.metric_learning._order_classifiers",
        "QuadrupletsClassifierMixin",
    ),
}


def _swap():
    """Replace metric-learn's learners by fastdr's; returns ``{name: fastdr class}``, the
    learner names left metric-learn's, and the mixin registrations."""
    # a private base of a learner (``_BaseSDML``) is swapped with it
    wanted = dict(LEARNERS)
    for module in ML_MODULES:
        for name, obj in vars(module).items():
            if (
                name.startswith("_Base")
                and inspect.isclass(obj)
                and obj.__module__.startswith("metric_learn")
            ):
                wanted.setdefault(name, obj)
    swapped, left = {}, []
    for name, ours in sorted(wanted.items()):
        new = _fastdr_object(name)
        if new is None:
            if not name.startswith("_"):
                left.append(name)
            continue
        for module in ML_MODULES:
            if vars(module).get(name) is ours:
                setattr(module, name, new)
        swapped[name] = new
    import metric_learn.base_metric as base

    registered = []
    for ml_name, (module_name, name) in MIXINS.items():
        try:
            ours = getattr(importlib.import_module(module_name), name)
        except (ImportError, AttributeError):
            continue
        getattr(base, ml_name).register(ours)
        registered.append(f"{module_name}.{name} -> metric_learn.base_metric.{ml_name}")
    return swapped, left, registered


if SWAP:
    SWAPPED, NOT_SWAPPED, REGISTERED = _swap()
else:
    SWAPPED, REGISTERED = {}, []
    # what the swap would replace, for the grouping below, read from fastdr's sources without
    # importing them (this mode also runs where fastdr cannot import: scikit-learn 1.7)
    NOT_SWAPPED = sorted(set(LEARNERS) - _fastdr_public())
_KIND = {}  # learner class -> its name, for the grouping
for _name, _cls in LEARNERS.items():
    _KIND[_cls] = _name
for _name, _cls in SWAPPED.items():
    _KIND[_cls] = _name


# --- grouping: which learners a test uses --------------------------------------------------


def _learner_names(obj, depth=0):
    """The learner names ``obj`` (a learner, a learner class, a subclass of one, or a list,
    tuple or dict of those) stands for."""
    if depth > 3:
        return set()
    if inspect.isclass(obj):
        for klass in obj.__mro__:
            if klass in _KIND:
                return {_KIND[klass]}
        return set()
    if isinstance(obj, (list, tuple)):
        return set().union(*(_learner_names(o, depth + 1) for o in obj)) if obj else set()
    if isinstance(obj, dict):
        return _learner_names(list(obj.values()), depth + 1)
    if hasattr(obj, "get_params"):
        return _learner_names(type(obj), depth)
    return set()


def _code_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _group(item):
    """``fastdr``, ``metric-learn learner`` or ``internals`` (see the module docstring)."""
    used = set()
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        used |= _learner_names(list(callspec.params.values()))
    function = getattr(item, "function", None) or getattr(item, "obj", None)
    function = getattr(function, "__func__", function)
    code = getattr(function, "__code__", None)
    if code is not None:
        module = vars(item.module) if getattr(item, "module", None) else {}
        for name in _code_names(code):
            if name in module:
                used |= _learner_names(module[name])
            elif name in LEARNERS or name in SWAPPED:  # metric_learn.NCA(...)
                used.add(name)
    if not used:
        return "internals"
    return "metric-learn learner" if used <= set(NOT_SWAPPED) else "fastdr"


# --- hooks ---------------------------------------------------------------------------------

_config = None
_tally = {}  # file -> {group: {category: count}}
_groups = {}  # node id -> group
_checked = {}  # file -> names in the test module's globals found bound to fastdr's object


def pytest_configure(config):
    global _config
    _config = config


def pytest_report_header(config):
    import sklearn

    lines = [
        f"metric-learn {metric_learn.__version__} from {os.path.dirname(metric_learn.__file__)},"
        f" scikit-learn {sklearn.__version__}",
        "shims: " + "; ".join(SHIMS),
    ]
    if SWAP:
        lines += [
            "fastdr swapped in: " + ", ".join(SWAPPED),
            "left metric-learn's (fastdr lacks them): " + (", ".join(NOT_SWAPPED) or "none"),
            "mixins registered: " + "; ".join(REGISTERED),
        ]
    else:
        lines.append("FASTDR_SWAP=0: metric-learn's own learners throughout")
    return lines


def pytest_collection_finish(session):
    wrong = []
    for item in session.items:
        _groups[item.nodeid] = _group(item)
    if not SWAP:
        return
    for name, obj in SWAPPED.items():
        for module in ML_MODULES:
            value = vars(module).get(name)
            if value is not None and value is not obj:
                wrong.append(f"{module.__name__}.{name} is not fastdr's")
    seen = set()
    for item in session.items:
        module = getattr(item, "module", None)
        if module is None or module.__name__ in seen:
            continue
        seen.add(module.__name__)
        file = item.nodeid.split("::", 1)[0]
        names = _checked.setdefault(file, [])
        for name, obj in SWAPPED.items():
            bound = vars(module).get(name)
            if bound is None:
                continue
            if bound is obj:
                names.append(name)
            else:
                wrong.append(f"{file}: global {name} is {bound!r}, not fastdr's")
    if wrong:
        raise pytest.UsageError("swap not in effect:\n" + "\n".join(wrong))


def _known_failures():
    """``{node id: reason}`` from known_failures.txt (beside this file in the repository,
    copied next to it by ci/metric_learn_suite.sh)."""
    path = pathlib.Path(__file__).parent / "known_failures.txt"
    known, reason = {}, None
    if not path.exists():
        return known
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("## "):
            reason = line[3:]
        elif line and not line.startswith("#"):
            known[line] = reason
    return known


def pytest_collection_modifyitems(config, items):
    # swap mode: each known failure is expected to fail, strictly: a listed test that passes
    # fails the run (take it off the list), and so does any failure not listed
    if not SWAP:
        return
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
        raise pytest.UsageError(
            "known_failures.txt lists tests that were not collected "
            "(renamed, or a learner swapped in since?):\n" + "\n".join(missing)
        )


def _count(nodeid, category):
    file = nodeid.split("::", 1)[0]
    group = _groups.get(nodeid, "fastdr" if "::" in nodeid else "collection")
    counts = _tally.setdefault(file, {}).setdefault(group, {})
    counts[category] = counts.get(category, 0) + 1


def pytest_collectreport(report):
    if report.failed:  # a test file that does not import: one error
        _count(report.nodeid, "error")


def pytest_runtest_logreport(report):
    # the category pytest's terminal summary counts the report under ("" for a passing
    # setup or teardown)
    category = _config.hook.pytest_report_teststatus(report=report, config=_config)[0]
    if category:
        _count(report.nodeid, category)


def _fraction(counts):
    passed = counts.get("passed", 0)
    total = passed + counts.get("failed", 0) + counts.get("error", 0)
    extra = [
        f"{category} {counts[category]}"
        for category in ("failed", "error", "skipped", "xfailed", "xpassed")
        if counts.get(category)
    ]
    return f"{passed}/{total}" + (f" ({', '.join(extra)})" if extra else "")


def pytest_terminal_summary(terminalreporter):
    write = terminalreporter.write_line
    who = "fastdr's" if SWAP else "metric-learn's (FASTDR_SWAP=0)"
    write("")
    write(
        f"{who} learners in metric-learn's tests: passed/total (total = passed + failed +"
        " errors), by the learners a test uses: fastdr | metric-learn learner | internals"
    )
    for file, groups in sorted(_tally.items()):
        parts = [
            f"{group} {_fraction(groups[group])}"
            for group in ("fastdr", "metric-learn learner", "internals", "collection")
            if group in groups
        ]
        write(f"{file}: " + " | ".join(parts))
    if SWAP:
        write("swap check, test module globals found bound to fastdr's objects:")
        for file, names in sorted(_checked.items()):
            write(f"  {file}: {', '.join(sorted(names)) or 'none'}")

