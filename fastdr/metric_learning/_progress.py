"""Verbose output for iterative learners: one line per iteration, a progress bar for long runs.

Iteration lines go to stdout. When the run is expected to take longer than
``IterationLog.long_run_s`` seconds (judged from the iterations so far), a one-line progress
bar is also drawn on stderr and redrawn in place (``\\r``); it is cleared before each
iteration line, so the two never interleave on a terminal.
"""

import sys
import time


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
