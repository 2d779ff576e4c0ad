"""The pieces a workload is made of: implementations, size grids, targets."""

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field

from ..data import make_data


def fastdr_has(*names):
    """Availability check: every name is an attribute of the ``fastdr`` package.

    fastdr loads its public names lazily, so this imports the modules behind them; a module
    that fails to import (work in progress) makes the workload "not available", not a crash.
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
        if missing:
            return False, "not available: " + "; ".join(missing)
        return True, ""

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

    Attributes
    ----------
    label : str
        ``"fastdr"``, ``"sklearn"``, ``"scipy"``, ``"faiss"``, ``"metric-learn"``.
    run : callable
        ``run(data, state) -> result``: the timed call.
    prepare : callable or None
        ``prepare(data) -> state``, run once before timing and not timed (fit before predict).
    available : callable
        ``available() -> (bool, reason)``.
    max_m : int or None
        Larger inputs are not run (the anchor would not fit in memory or time), with a note.
    call : str
        The call, as a reader would write it (shown in the report).
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
class Grid:
    """The sizes of one workload in one profile.

    ``headline`` is the (m, d) of the speed table; the scaling curves use ``m_values`` at
    ``d = d_for_m`` and ``d_values`` at ``m = m_for_d``; ``memory_m`` are the sizes of the
    peak-memory runs (m x m methods only, at the headline d); ``extra`` are further rows of
    the speed table (sizes where BENCHMARKS.md sets a second target). ``headline_kind``
    replaces the workload's data kind for the speed-table rows (the digits for MMC).
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
        cases = [tuple(self.headline)]
        cases += [(m, self.d_for_m) for m in self.m_values]
        cases += [(self.m_for_d, d) for d in self.d_values]
        return list(dict.fromkeys(cases))


@dataclass(frozen=True)
class Target:
    """A target from shared/BENCHMARKS.md.

    Either a speed-up against ``anchor`` (``min_speedup``; parity is ``1 / 1.2``), or an
    absolute time (``max_seconds``), at size (m, d).
    """

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
        else:
            anchor_median = anchor_medians.get(self.anchor)
            if anchor_median is None:
                return f"n/a ({self.anchor} did not run)"
            met = anchor_median / fast_median >= self.min_speedup
        if agreement_ok is False:
            return "FAIL (disagrees with anchor)"
        return "pass" if met else "FAIL (too slow)"


@dataclass(frozen=True)
class Workload:
    """One benchmarked method or kernel.

    Attributes
    ----------
    name : str
        Short identifier (``knn_f64``), used in file names and pytest ids.
    area : str
        ``neighbors``, ``spectral``, ``isomap``, ``lle`` or ``metric_learning``.
    title : str
        What is measured, in words.
    data_kind : str
        Passed to :func:`bench.report.data.make_data`.
    fastdr : Impl
    anchors : tuple of Impl
    agreement : callable
        ``agreement(fast_result, anchor_result, data) -> Agreement``.
    grids : dict
        Profile name -> :class:`Grid`.
    dtype : str
    targets : tuple of Target
        Targets from BENCHMARKS.md; a speed row is judged by the one at its size.
    memory_target : tuple or None
        ``(m, max_ratio, text)``: fastdr's peak RSS at most ``max_ratio`` of the anchor's.
    extend : callable or None
        ``extend(data) -> data``: adds workload inputs to a cached Data (a graph, a metric).
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
        for target in self.targets:
            if (target.m, target.d) == (m, d):
                return target
        return self.targets[0] if self.targets else None

    def impls(self):
        return (self.fastdr, *self.anchors)

    def available(self):
        return self.fastdr.available()
