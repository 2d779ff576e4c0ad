"""Verbose output for long fits: stage lines, chunked progress bars, iteration logs.

* :class:`StageLog`: one ``[Name] stage: 0.42 s`` line per stage of a fit.
* :func:`run_in_chunks`: runs a kernel's parallel work as one launch, or, when a log is
  verbose, in a Python loop over chunks of its work items so that a progress bar can follow
  it. The bar is drawn only when the work is expected to last longer than
  ``StageLog.long_run_s`` seconds (judged from the first chunks); it is tqdm's when tqdm is
  installed (imported only then), a plain ``\\r`` bar on stderr otherwise.
* :class:`IterationLog`: for iterative learners, one line per iteration and a progress bar
  for long runs.

Lines go to stdout, bars to stderr; a bar is cleared before the next line is printed, so the
two never interleave on a terminal.
"""

import math
import sys
import time

import numba

from .compile_notice import set_thread_verbose


class IterationLog:
    """Print ``[Name] iteration objective time`` lines and an optional progress bar.

    Parameters
    ----------
    name : str
        The estimator's name, shown in brackets.
    max_iter : int
        The iteration budget (the bar's 100%).
    verbose : int
        0 prints nothing; 1 or more prints the header and one line per iteration.
    out, err : file-like or None
        Streams for the lines and the bar (default: ``sys.stdout``, ``sys.stderr`` at call
        time).
    """

    long_run_s = 10.0
    bar_width = 30

    def __init__(self, name, max_iter, verbose, out=None, err=None):
        self.name = name
        self.max_iter = max(int(max_iter), 1)
        self.verbose = verbose
        self.out = out
        self.err = err
        self._start = time.perf_counter()
        self._last = self._start
        self._bar_shown = False
        self._header_done = False

    def _streams(self):
        return (self.out or sys.stdout), (self.err or sys.stderr)

    def header(self):
        """Print the column header (once)."""
        if not self.verbose or self._header_done:
            return
        out, _ = self._streams()
        head = f"{'Iteration':>10} {'Objective Value':>20} {'Time(s)':>10}"
        out.write(f"[{self.name}] {head}\n[{self.name}] {'-' * len(head)}\n")
        out.flush()
        self._header_done = True

    def iteration(self, n_iter, objective):
        """Report iteration ``n_iter`` (1-based) with its objective value."""
        now = time.perf_counter()
        elapsed, self._last = now - self._last, now
        if not self.verbose:
            return
        self.header()
        out, err = self._streams()
        if self._bar_shown:
            err.write("\r" + " " * (self.bar_width + 60) + "\r")
            err.flush()
        out.write(f"[{self.name}] {n_iter:>10} {objective:>20.6e} {elapsed:>10.2f}\n")
        out.flush()
        total = now - self._start
        expected = total / max(n_iter, 1) * self.max_iter
        if self._bar_shown or expected > self.long_run_s:
            self._draw_bar(n_iter, total, expected)

    def _draw_bar(self, n_iter, total, expected):
        _, err = self._streams()
        done = min(n_iter, self.max_iter)
        filled = int(round(self.bar_width * done / self.max_iter))
        left = max(expected - total, 0.0)
        err.write(
            f"\r[{self.name}] |{'#' * filled}{'.' * (self.bar_width - filled)}| "
            f"{done}/{self.max_iter} iterations, {total:.1f}s elapsed, <= {left:.1f}s left"
        )
        err.flush()
        self._bar_shown = True

    def elapsed(self):
        """Seconds since the log was created."""
        return time.perf_counter() - self._start

    def close(self, message=None):
        """End the bar's line and print a closing message."""
        if not self.verbose:
            return
        out, err = self._streams()
        if self._bar_shown:
            err.write("\n")
            err.flush()
            self._bar_shown = False
        if message:
            out.write(f"[{self.name}] {message}\n")
            out.flush()


class StageLog:
    """Print one ``[Name] stage: 0.42 s`` line per stage of a fit.

    Each :meth:`done` reports the time since the previous one (or since the log was made)
    and restarts the clock, so ``log.done("stage")`` lines can sit between the statements
    of a fit.

    Parameters
    ----------
    name : str
        The estimator's name, shown in brackets.
    verbose : int
        0 prints nothing; 1 or more prints the stage lines and lets :func:`run_in_chunks`
        draw a bar for long work.
    out, err : file-like or None
        Streams for the lines and the bar (default: ``sys.stdout``, ``sys.stderr`` at call
        time).
    """

    #: Work expected to last longer than this many seconds gets a progress bar.
    long_run_s = 10.0
    #: Share of the work items in each of the two timed chunks that estimate the run time.
    probe_share = 1 / 64
    #: About this many bar updates over a long run.
    bar_steps = 100

    def __init__(self, name, verbose, out=None, err=None):
        self.name = name
        self.verbose = verbose
        set_thread_verbose(verbose)  # the compile notice prints when this fit is verbose
        self.out = out
        self.err = err
        self._start = time.perf_counter()
        self._mark = self._start

    def _streams(self):
        return (self.out or sys.stdout), (self.err or sys.stderr)

    def _write(self, text):
        out, _ = self._streams()
        out.write(f"[{self.name}] {text}\n")
        out.flush()

    def done(self, stage):
        """Report ``stage`` with the time since the previous stage; return that time (s)."""
        now = time.perf_counter()
        elapsed, self._mark = now - self._mark, now
        if self.verbose:
            self._write(f"{stage}: {elapsed:.2f} s")
        return elapsed

    def total(self, what="fit"):
        """Report the time since the log was made (``[Name] fit: 3.10 s in all``)."""
        now = time.perf_counter()
        self._mark = now
        if self.verbose:
            self._write(f"{what}: {now - self._start:.2f} s in all")
        return now - self._start


def run_in_chunks(log, n_items, run, *, what, threads=None):
    """Run ``run(lo, hi)`` over the work items ``[0, n_items)``, with a bar when it is long.

    Without a verbose log, ``run(0, n_items)`` is called once: the kernel launch is exactly
    the one it would be without this function. With a verbose log, two chunks of
    ``StageLog.probe_share`` of the items (at least one per thread) are timed; when the
    faster of the two (the first may include loading the compiled kernel) predicts more than
    ``StageLog.long_run_s`` seconds for all items, the rest runs in about
    ``StageLog.bar_steps`` chunks, each followed by a bar update; otherwise the rest runs in
    one call.

    Parameters
    ----------
    log : StageLog or None
    n_items : int
        Independent work items (sources, query blocks, rows).
    run : callable
        ``run(lo, hi)`` does items ``lo:hi``. The result must not depend on how the items are
        split (each item writes only its own output), so the chunked run is bit-identical.
    what : str
        The bar's label, e.g. ``"Dijkstra sources"``.
    threads : int or None
        Threads the work runs on (default: numba's current thread count); a chunk holds at
        least this many items so that every thread has work.
    """
    if log is None or not log.verbose or n_items <= 0:
        run(0, n_items)
        return
    if threads is None:
        threads = numba.get_num_threads()
    probe = max(int(math.ceil(n_items * log.probe_share)), int(threads), 1)
    if 2 * probe >= n_items:
        run(0, n_items)
        return
    timings = []
    for lo in (0, probe):
        start = time.perf_counter()
        run(lo, lo + probe)
        timings.append(time.perf_counter() - start)
    done = 2 * probe
    expected = min(timings) / probe * n_items
    if expected <= log.long_run_s:
        run(done, n_items)
        return
    step = max(int(math.ceil(n_items / log.bar_steps)), int(threads), 1)
    bar = _open_bar(log, n_items, what, expected)
    try:
        bar.update(done)
        for lo in range(done, n_items, step):
            hi = min(n_items, lo + step)
            run(lo, hi)
            bar.update(hi - lo)
    finally:
        bar.close()


def _open_bar(log, total, what, expected):
    """tqdm's bar when tqdm is installed (imported here, only when a bar is shown), else a
    plain one."""
    _, err = log._streams()
    label = f"[{log.name}] {what}"
    try:
        from tqdm import tqdm
    except ImportError:
        return _PlainBar(label, total, err, expected)
    return tqdm(total=total, desc=label, file=err, leave=False)


class _PlainBar:
    """A one-line ``\\r`` bar on ``err`` with the same ``update``/``close`` as tqdm's."""

    width = 30

    def __init__(self, label, total, err, expected):
        self.label = label
        self.total = max(int(total), 1)
        self.err = err
        self.count = 0
        self._start = time.perf_counter()
        self._length = 0
        err.write(f"\r{label}: about {expected:.0f} s expected")
        err.flush()

    def update(self, n):
        """Advance by ``n`` items and redraw."""
        self.count = min(self.total, self.count + int(n))
        elapsed = time.perf_counter() - self._start
        filled = int(round(self.width * self.count / self.total))
        left = elapsed / self.count * (self.total - self.count) if self.count else 0.0
        line = (f"{self.label} |{'#' * filled}{'.' * (self.width - filled)}| "
                f"{self.count}/{self.total}, {elapsed:.1f} s elapsed, about {left:.0f} s left")
        self._length = max(self._length, len(line))
        self.err.write("\r" + line)
        self.err.flush()

    def close(self):
        """Erase the bar's line."""
        self.err.write("\r" + " " * self._length + "\r")
        self.err.flush()


class RoundLog:
    """Progress over the rounds of an iterative kernel, with a count per round.

    ``verbose=1`` draws tqdm's bar over the rounds (imported only then) with the last round's
    count as its postfix; without tqdm, or with ``verbose >= 2``, one line per round goes to
    stdout instead (``"NN-descent round 3/17: 1234 updates"``).

    Parameters
    ----------
    label : str
        Shown before each line and as the bar's description.
    total : int
        The round budget (the bar's 100%).
    verbose : int
        0 prints nothing.
    what : str
        What the per-round count counts.
    """

    def __init__(self, label, total, verbose, what="updates"):
        self.label, self.total, self.verbose, self.what = label, max(int(total), 1), verbose, what
        self._bar = None
        if verbose == 1:
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(total=self.total, desc=label, unit="round", file=sys.stderr)

    def round(self, number, count):
        """Report round ``number`` (1-based) and its count."""
        if not self.verbose:
            return
        if self._bar is not None:
            self._bar.set_postfix_str(f"{count} {self.what}", refresh=False)
            self._bar.update(1)
        else:
            print(f"{self.label} round {number}/{self.total}: {count} {self.what}", flush=True)

    def close(self):
        """Close the bar (a no-op for lines)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
