"""The pieces a workload is made of: implementations, size grids, targets."""

import importlib
import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..data import make_data


def fastdr_has(*names):
    """Availability check: every name is an attribute of ``fastdr``.

    fastdr loads its public names lazily, so this imports the modules behind them; a module that
    fails to import (work in progress) makes the workload "not available", not a crash.
    """

    def available():
        import fastdr

        missing = []
        for name in names:
            try:
                if not hasattr(fastdr, name):
                    missing.append(f"fastdr.{name} is not importable yet")
            except Exception as exc:  # noqa: BLE001 - a broken module is reported, not fatal
                missing.append(f"importing fastdr.{name} failed ({type(exc).__name__}: "
                               f"{exc})"[:200])
        return (False, "not available: " + "; ".join(missing)) if missing else (True, "")

    return available


def module_importable(module, note=""):
    """Availability check: ``module`` can be imported (an optional anchor)."""

    def available():
        if importlib.util.find_spec(module) is None:
            return False, f"skipped: {module} is not installed{note}"
        return True, ""

    return available


def always():
    return True, ""


@dataclass(frozen=True)
class Impl:
    """One implementation of a workload: fastdr's or an anchor's.

    ``run(data, state) -> result`` is the timed call; ``prepare(data) -> state`` runs once before
    timing, untimed (fit before predict); ``available() -> (ok, reason)``; inputs above ``max_m``
    are not run (the anchor would not fit in memory or time); ``call`` is the call as a reader
    would write it (shown in the report). ``label`` is ``fastdr``, ``sklearn``, ``scipy``,
    ``faiss`` or ``metric-learn``.
    """

    label: str
    run: Callable
    call: str
    prepare: Callable = None
    available: Callable = always
    max_m: int = None

    def runnable(self, m):
        ok, reason = self.available()
        if ok and self.max_m is not None and m > self.max_m:
            return False, f"skipped at m={m}: {self.label} runs only up to m={self.max_m}"
        return ok, reason


@dataclass(frozen=True)
class Arg:
    """An estimator parameter computed from the input, written ``text`` in the call."""

    text: str
    value: Callable

    def __repr__(self):
        return self.text


_INPUTS = {"X": lambda data: data.X, "y": lambda data: data.y, "Q": lambda data: data.X_query}
_STEP = re.compile(r"\.?(\w+)\(([^)]*)\)")


def _chain(text):
    """``"fit(X).kneighbors()"`` -> ``[("fit", ["X"]), ("kneighbors", [])]``."""
    return [(name, [a.strip() for a in args.split(",") if a.strip()])
            for name, args in _STEP.findall(text)]


def _apply(obj, steps, data):
    for name, args in steps:
        obj = getattr(obj, name)(*[_INPUTS[a](data) for a in args])
    return obj


def estimator(label, path, params=None, chain="fit_transform(X)", *, fit=None, **options):
    """An :class:`Impl` that runs ``<path>(**params).<chain>``, and writes that as its call.

    Parameters
    ----------
    label : str
    path : str
        ``"fastdr.Isomap"`` or ``"sklearn.manifold.Isomap"``; a fastdr path makes the
        implementation available only where fastdr has that name.
    params : dict or None
        Constructor arguments; an :class:`Arg` is computed from the input.
    chain : str
        Methods called on the estimator, with inputs ``X``, ``y`` or ``Q`` (the query points):
        ``"fit(X, y)"``, ``"fit(X).kneighbors()"``. With ``fit``, they are called on the
        fitted estimator.
    fit : str or None
        Untimed methods run first by ``prepare`` (``"fit(X, y)"`` before a timed predict).
    **options
        ``available`` or ``max_m`` of :class:`Impl`.
    """
    params = params or {}
    module, name = path.rsplit(".", 1)

    def build(data):
        kwargs = {k: v.value(data) if isinstance(v, Arg) else v for k, v in params.items()}
        return getattr(importlib.import_module(module), name)(**kwargs)

    shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
    if fit is None:
        def run(data, state):
            return _apply(build(data), _chain(chain), data)
        prepare, call = None, f"{path}({shown}).{chain}"
    else:
        def run(data, state):
            return _apply(state, _chain(chain), data)

        def prepare(data):
            return _apply(build(data), _chain(fit), data)
        call = f"{path}({shown}).{fit}; timed: .{chain}"
    if path.startswith("fastdr."):
        options.setdefault("available", fastdr_has(name))
    return Impl(label, run, call, prepare=prepare, **options)


@dataclass(frozen=True)
class Grid:
    """The sizes of one workload in one profile.

    ``headline`` is the (m, d) of the speed table and ``extra`` further speed rows (sizes where
    BENCHMARKS.md sets a second target); the scaling curves use ``m_values`` at ``d_for_m`` and
    ``d_values`` at ``m_for_d``; ``memory_m`` are the sizes of the peak-memory runs (m x m
    methods, at the headline d). ``headline_kind`` replaces the data kind in the speed rows
    (the digits for MMC).
    """

    headline: tuple
    m_values: tuple = ()
    d_for_m: int = None
    d_values: tuple = ()
    m_for_d: int = None
    memory_m: tuple = ()
    extra: tuple = ()
    headline_kind: str = None

    def speed_cases(self):
        """(m, d) rows of the speed table."""
        return list(dict.fromkeys([tuple(self.headline), *map(tuple, self.extra)]))

    def scaling_cases(self):
        """(m, d) pairs of both scaling curves, headline first, without repeats."""
        cases = [tuple(self.headline), *((m, self.d_for_m) for m in self.m_values),
                 *((self.m_for_d, d) for d in self.d_values)]
        return list(dict.fromkeys(cases))


@dataclass(frozen=True)
class Target:
    """A target from shared/BENCHMARKS.md at size (m, d): a speed-up against ``anchor``
    (``min_speedup``; parity is ``1 / 1.2``) or an absolute time (``max_seconds``)."""

    text: str
    m: int
    d: int
    anchor: str = None
    min_speedup: float = None
    max_seconds: float = None

    def where(self):
        return f"m={self.m:,}, d={self.d}"

    def status(self, m, d, fast_median, anchor_medians, agreement_ok):
        """``"pass"``, ``"FAIL ..."`` or ``"n/a ..."`` for one measured row."""
        if (m, d) != (self.m, self.d):
            return "n/a (size differs from target)"
        if fast_median is None:
            return "n/a (fastdr did not run)"
        if self.max_seconds is not None:
            met = fast_median <= self.max_seconds
        elif anchor_medians.get(self.anchor) is None:
            return f"n/a ({self.anchor} did not run)"
        else:
            met = anchor_medians[self.anchor] / fast_median >= self.min_speedup
        if agreement_ok is False:
            return "FAIL (disagrees with anchor)"
        return "pass" if met else "FAIL (too slow)"


@dataclass(frozen=True)
class Workload:
    """One benchmarked method or kernel.

    Attributes
    ----------
    name, area, title : str
        Identifier (``knn_f64``: file names, pytest ids); ``neighbors``, ``spectral``,
        ``isomap``, ``lle`` or ``metric_learning``; what is measured, in words.
    data_kind : str
        Passed to :func:`bench.data.make_data`.
    fastdr : Impl
    anchors : tuple of Impl
    agreement : callable
        ``agreement(fast_result, anchor_result, data) -> Agreement``.
    grids : dict
        Profile name -> :class:`Grid`.
    dtype : str
    targets : tuple of Target
        A speed row is judged by the one at its size.
    memory_target : tuple or None
        ``(m, max_ratio, text)``: fastdr's peak RSS at most ``max_ratio`` of the anchor's.
    extend : callable or None
        ``extend(data) -> data`` adds inputs to a cached Data (a graph, a metric).
    truth_agreement : callable or None
        ``truth_agreement(fast_result, data) -> Agreement`` for rows where no anchor ran.
    mxm : bool
        The method holds an m x m array: measured in the memory section.
    distance_shape : callable or None
        ``distance_shape(data) -> (queries, keys, d)`` for a distance-bound method: the report
        sets its distance step (``2 * queries * keys * d`` flops) against a GEMM of that shape.
    notes : tuple of str
    """

    name: str
    area: str
    title: str
    data_kind: str
    fastdr: Impl
    anchors: tuple
    agreement: Callable
    grids: dict
    dtype: str = "float64"
    targets: tuple = ()
    memory_target: tuple = None
    extend: Callable = None
    truth_agreement: Callable = None
    mxm: bool = False
    distance_shape: Callable = None
    notes: tuple = field(default_factory=tuple)

    def data(self, m, d, *, profile, headline=False):
        """The input of size (m, d); ``headline`` rows use the grid's ``headline_kind``."""
        kind = self.grids[profile].headline_kind if headline else None
        data = make_data(kind or self.data_kind, m, d, self.dtype)
        return self.extend(data) if self.extend is not None else data

    def target_for(self, m, d):
        """The target at this size, else the first target (shown as "at full size")."""
        at_size = [t for t in self.targets if (t.m, t.d) == (m, d)]
        return (at_size or list(self.targets) or [None])[0]

    def impls(self):
        return (self.fastdr, *self.anchors)

    def available(self):
        return self.fastdr.available()
