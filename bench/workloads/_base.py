"""The pieces a workload is made of: implementations, size grids, targets."""

import importlib
import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..data import make_data


def fastdr_has(*names):
    """Availability check: every name is importable from ``fastdr`` (a broken module is
    "not available", not a crash)."""

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
    return lambda: ((True, "") if importlib.util.find_spec(module) is not None
                    else (False, f"skipped: {module} is not installed{note}"))


@dataclass(frozen=True)
class Impl:
    """One implementation (``label``: fastdr, sklearn, scipy, faiss, metric-learn).

    ``run(data, state)`` is timed after ``prepare(data) -> state`` (untimed); ``available() ->
    (ok, reason)``; no run above ``max_m`` points; ``call`` is the call as the report shows it.
    """

    label: str
    run: Callable
    call: str
    prepare: Callable = None
    available: Callable = lambda: (True, "")
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


def _apply(obj, text, data):
    """Call the chain ``text`` (``"fit(X).kneighbors()"``) on ``obj``."""
    for name, args in _STEP.findall(text):
        obj = getattr(obj, name)(*[_INPUTS[a.strip()](data) for a in args.split(",")
                                   if a.strip()])
    return obj


def estimator(label, path, params=None, chain="fit_transform(X)", *, fit=None, **options):
    """An :class:`Impl` timing ``<path>(**params).<chain>``.

    Parameters
    ----------
    label : str
    path : str
        ``"fastdr.Isomap"``, ``"sklearn.manifold.Isomap"``; a fastdr path is available only
        where fastdr has that name.
    params : dict or None
        Constructor arguments; an :class:`Arg` is computed from the input.
    chain : str
        Methods called, with inputs ``X``, ``y`` or ``Q`` (query points): ``"fit(X, y)"``.
    fit : str or None
        Untimed methods run first (``"fit(X, y)"`` before a timed ``"predict(Q)"``).
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
        prepare, call = None, f"{path}({shown}).{chain}"

        def run(data, state):
            return _apply(build(data), chain, data)
    else:
        call = f"{path}({shown}).{fit}; timed: .{chain}"

        def prepare(data):
            return _apply(build(data), fit, data)

        def run(data, state):
            return _apply(state, chain, data)
    if path.startswith("fastdr."):
        options.setdefault("available", fastdr_has(name))
    return Impl(label, run, call, prepare=prepare, **options)


@dataclass(frozen=True)
class Grid:
    """The sizes of one workload in one profile: the speed rows ``headline`` and ``extra``
    (in data kind ``headline_kind`` if set), scaling curves over ``m_values`` at ``d_for_m``
    and ``d_values`` at ``m_for_d``, peak-memory runs at ``memory_m`` (headline d)."""

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
        """(m, d) of both scaling curves, headline first, without repeats."""
        return list(dict.fromkeys([tuple(self.headline),
                                   *((m, self.d_for_m) for m in self.m_values),
                                   *((self.m_for_d, d) for d in self.d_values)]))


@dataclass(frozen=True)
class Target:
    """A BENCHMARKS.md target at (m, d): a speed-up over ``anchor`` (``min_speedup``; parity is
    ``1 / 1.2``) or an absolute time (``max_seconds``)."""

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

    ``name`` names files and pytest ids; ``area`` groups the scaling figures; ``data_kind``
    goes to :func:`bench.data.make_data`, ``extend(data) -> data`` adds inputs (a graph);
    ``agreement(fast, anchor, data)`` and, for rows where no anchor ran, ``truth_agreement(
    fast, data)`` return an Agreement; ``grids`` maps profile names to :class:`Grid`; a speed
    row is judged by the target at its size; ``memory_target`` is ``(m, max_ratio, text)`` on
    the peak RSS ratio; ``mxm`` methods (m x m arrays) get a memory row; ``distance_shape(data)
    -> (queries, keys, d)`` sets a distance-bound method against a GEMM of that shape, in the
    precision ``distance_dtype(data)`` (default: the input's) in which fastdr's distance step
    runs; ``distance_triangle``: fastdr computes one triangle of a self-product, so the work
    and the GEMM time it is judged against are both halved.
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
    distance_dtype: Callable = None
    distance_triangle: bool = False
    notes: tuple = field(default_factory=tuple)

    def data(self, m, d, *, profile, headline=False):
        """The input of size (m, d); ``headline`` rows use the grid's ``headline_kind``."""
        kind = self.grids[profile].headline_kind if headline else None
        data = make_data(kind or self.data_kind, m, d, self.dtype)
        return self.extend(data) if self.extend is not None else data

    def target_for(self, m, d):
        """The target at this size, else the first (shown as "at full size")."""
        return next((t for t in self.targets if (t.m, t.d) == (m, d)),
                    self.targets[0] if self.targets else None)

    def impls(self):
        return (self.fastdr, *self.anchors)

    def available(self):
        return self.fastdr.available()
