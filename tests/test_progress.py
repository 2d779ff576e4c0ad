"""Verbose output of the long fits: stage lines, the chunked progress bar, and that chunking
changes no result."""

import io
import sys
import types

import numpy as np

from fastdr._progress import StageLog, run_in_chunks


def _recorder(calls, out):
    def run(lo, hi):
        calls.append((lo, hi))
        out[lo:hi] += 1
    return run


def test_quiet_log_runs_the_work_in_one_call(capsys):
    calls, out = [], np.zeros(1000, dtype=np.int64)
    run_in_chunks(StageLog("Est", 0), 1000, _recorder(calls, out), what="items", threads=2)
    run_in_chunks(None, 1000, _recorder(calls, out), what="items", threads=2)
    assert calls == [(0, 1000), (0, 1000)]
    assert capsys.readouterr() == ("", "")


def test_short_verbose_run_times_two_probe_chunks_then_finishes_in_one_call(capsys):
    calls, out = [], np.zeros(1000, dtype=np.int64)
    run_in_chunks(StageLog("Est", 1), 1000, _recorder(calls, out), what="items", threads=2)
    assert calls == [(0, 16), (16, 32), (32, 1000)]  # probe = ceil(1000 / 64)
    assert (out == 1).all()
    assert capsys.readouterr().err == ""


def test_probe_chunks_hold_one_item_per_thread_and_tiny_work_is_not_split():
    calls, out = [], np.zeros(100, dtype=np.int64)
    run_in_chunks(StageLog("Est", 1), 100, _recorder(calls, out), what="items", threads=8)
    assert calls[:2] == [(0, 8), (8, 16)]
    calls.clear()
    run_in_chunks(StageLog("Est", 1), 10, _recorder(calls, out), what="items", threads=8)
    assert calls == [(0, 10)]


def test_long_run_draws_the_plain_bar_when_tqdm_is_missing(monkeypatch):
    monkeypatch.setattr(StageLog, "long_run_s", 0.0)
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    err = io.StringIO()
    calls, out = [], np.zeros(1000, dtype=np.int64)
    log = StageLog("Est", 1, out=io.StringIO(), err=err)
    run_in_chunks(log, 1000, _recorder(calls, out), what="things", threads=2)
    assert (out == 1).all()
    starts = [lo for lo, _ in calls]
    assert starts == sorted(starts) and len(calls) > 50  # about 100 bar steps
    text = err.getvalue()
    assert "[Est] things |" in text and "1000/1000" in text
    assert text.endswith("\r")  # the bar's line is erased at the end


def test_long_run_uses_tqdm_when_installed_and_imports_it_only_then(monkeypatch):
    made = []

    class FakeBar:
        def __init__(self, total, desc, file, leave):
            self.total, self.desc, self.n, self.closed = total, desc, 0, False
            made.append(self)

        def update(self, n):
            self.n += n

        def close(self):
            self.closed = True

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=FakeBar))
    calls, out = [], np.zeros(1000, dtype=np.int64)
    log = StageLog("Est", 1, out=io.StringIO(), err=io.StringIO())
    run_in_chunks(log, 1000, _recorder(calls, out), what="things", threads=2)
    assert made == []  # a short run shows no bar
    monkeypatch.setattr(StageLog, "long_run_s", 0.0)
    run_in_chunks(log, 1000, _recorder(calls, out), what="things", threads=2)
    assert len(made) == 1
    assert (made[0].desc, made[0].total, made[0].n, made[0].closed) == (
        "[Est] things", 1000, 1000, True)


def test_stage_lines_report_the_time_since_the_previous_stage():
    out = io.StringIO()
    log = StageLog("Est", 1, out=out)
    first = log.done("first stage")
    second = log.done("second stage")
    whole = log.total()
    assert whole >= first + second
    lines = out.getvalue().splitlines()
    assert lines[0] == f"[Est] first stage: {first:.2f} s"
    assert lines[1] == f"[Est] second stage: {second:.2f} s"
    assert lines[2].startswith("[Est] fit: ") and lines[2].endswith(" s in all")

