"""Build the report: plan the steps, run them under a progress bar, write JSON, figures and
markdown."""

import json
import os
import platform
import time
from datetime import datetime, timezone
from pathlib import Path

from . import coldstart, embeddings, experiments, memory, plots
from .errors import error_text
from .machine import machine_info
from .markdown import write_markdown
from .profiles import resolve_profile
from .timing import fit_loglog_slope, time_impl
from .workloads import WORKLOADS

RESULT_KEYS = ("profile", "created", "wall_time_s", "machine", "speed", "scaling", "memory",
               "compile", "embeddings", "experiments", "notes", "figures", "step_seconds")


def _threads():
    import numba

    return numba.get_num_threads()


def _speed_row(workload, m, d, settings):
    """Time fastdr and every runnable anchor on one input, and compare their answers."""
    row = {"workload": workload.name, "area": workload.area, "title": workload.title,
           "m": m, "d": d, "dtype": workload.dtype, "threads": _threads(), "impls": {},
           "ratios": {}, "agreement": {}, "notes": list(workload.notes)}
    data = workload.data(m, d, profile=settings.name, headline=True)
    row["m"], row["d"] = data.m, data.d
    results = {}
    for impl in workload.impls():
        ok, reason = impl.runnable(data.m)
        if not ok:
            row["impls"][impl.label] = {"call": impl.call, "skipped": reason}
            continue
        try:
            timing, results[impl.label] = time_impl(
                impl, data, min_repeats=settings.min_repeats, max_repeats=settings.max_repeats,
                budget_s=settings.budget_s, cap_s=settings.cap_s)
            row["impls"][impl.label] = {"call": impl.call, **timing.as_dict()}
        except Exception as exc:  # noqa: BLE001 - a failing method is reported, not fatal
            row["impls"][impl.label] = {"call": impl.call, "error": error_text(exc)}
    fast = row["impls"]["fastdr"].get("median_s")
    for label, entry in row["impls"].items():
        if label != "fastdr" and fast and entry.get("median_s"):
            row["ratios"][label] = entry["median_s"] / fast
    if "fastdr" in results:
        for label, anchor_result in results.items():
            if label == "fastdr":
                continue
            try:
                row["agreement"][label] = workload.agreement(
                    results["fastdr"], anchor_result, data).as_dict()
            except Exception as exc:  # noqa: BLE001
                row["agreement"][label] = {"metric": "agreement", "value": float("nan"),
                                           "ok": False, "detail": error_text(exc)}
        if not row["agreement"] and workload.truth_agreement is not None:
            try:
                row["agreement"]["truth"] = workload.truth_agreement(
                    results["fastdr"], data).as_dict()
            except Exception as exc:  # noqa: BLE001
                row["agreement"]["truth"] = {"metric": "agreement", "value": float("nan"),
                                             "ok": False, "detail": error_text(exc)}
    row["status"] = "error" if "error" in row["impls"]["fastdr"] else "ok"
    target = workload.target_for(row["m"], row["d"])
    if target is not None:
        agreement_key = target.anchor if target.anchor in row["agreement"] else None
        if agreement_key is None and row["agreement"]:
            agreement_key = next(iter(row["agreement"]))
        agreement_ok = row["agreement"][agreement_key]["ok"] if agreement_key else None
        anchors = {label: e["median_s"] for label, e in row["impls"].items()
                   if label != "fastdr" and "median_s" in e}
        row["target"] = {"text": target.text, "where": target.where(),
                         "status": target.status(row["m"], row["d"], fast, anchors,
                                                 agreement_ok)}
    return row


def _scaling(workload, settings, speed_rows):
    """Time against m and against d for fastdr and each anchor; fitted log-log slopes.

    Each point is one warm-up call plus ``scaling_repeats`` timed calls. Points are visited
    from small to large; an implementation that has spent ``scaling_budget_s`` on this
    workload skips its remaining points (with a note), so one slow method cannot eat the
    profile's time.
    """
    grid = workload.grids[settings.name]
    known = {}
    if grid.headline_kind is None:
        for row in speed_rows:
            known[(row["m"], row["d"])] = {label: e.get("median_s")
                                           for label, e in row["impls"].items()}
    curves = {"workload": workload.name, "area": workload.area, "title": workload.title,
              "errors": [], "skipped": []}
    spent = {}
    for axis, points in (("m", [(m, grid.d_for_m) for m in sorted(grid.m_values)]),
                         ("d", [(grid.m_for_d, d) for d in sorted(grid.d_values)])):
        series = {}
        for m, d in points:
            if (m, d) not in known:
                known[(m, d)] = {}
                data = workload.data(m, d, profile=settings.name)
                for impl in workload.impls():
                    if not impl.runnable(m)[0]:
                        continue
                    if spent.get(impl.label, 0.0) >= settings.scaling_budget_s:
                        curves["skipped"].append(
                            f"{impl.label} at m={m:,}, d={d}: the scaling budget of "
                            f"{settings.scaling_budget_s:g} s for this method was spent")
                        continue
                    try:
                        timing, _ = time_impl(impl, data, min_repeats=settings.scaling_repeats,
                                              max_repeats=settings.scaling_repeats,
                                              budget_s=0.0, keep_result=False)
                        known[(m, d)][impl.label] = timing.median
                        spent[impl.label] = (spent.get(impl.label, 0.0) + timing.first_s
                                             + sum(timing.times))
                    except Exception as exc:  # noqa: BLE001
                        curves["errors"].append(f"{impl.label} at m={m}, d={d}: "
                                                f"{error_text(exc)}")
            for label, seconds in known[(m, d)].items():
                if seconds:
                    series.setdefault(label, {"x": [], "seconds": []})
                    series[label]["x"].append(m if axis == "m" else d)
                    series[label]["seconds"].append(seconds)
        for entry in series.values():
            entry["slope"] = fit_loglog_slope(entry["x"], entry["seconds"])
        curves[f"vs_{axis}"] = {"fixed": grid.d_for_m if axis == "m" else grid.m_for_d,
                                "series": series}
    return curves


def _memory(workload, settings, results):
    grid = workload.grids[settings.name]
    for m in grid.memory_m:
        d = grid.headline[1]
        entry = {"workload": workload.name, "title": workload.title, "m": m, "d": d,
                 "impls": {}}
        for impl in workload.impls():
            ok, reason = impl.runnable(m)
            entry["impls"][impl.label] = (memory.measure_in_subprocess(workload.name,
                                                                       impl.label, m, d)
                                          if ok else {"skipped": reason})
        fast_peak = entry["impls"]["fastdr"].get("peak_bytes")
        fast_increase = entry["impls"]["fastdr"].get("increase_bytes")
        for label, value in entry["impls"].items():
            if label != "fastdr" and fast_peak and value.get("peak_bytes"):
                entry.setdefault("peak_ratio", {})[label] = fast_peak / value["peak_bytes"]
            if label != "fastdr" and fast_increase is not None and value.get("increase_bytes"):
                entry.setdefault("increase_ratio", {})[label] = (fast_increase /
                                                                 value["increase_bytes"])
        if workload.memory_target is not None:
            target_m, max_ratio, text = workload.memory_target
            ratio = next(iter(entry.get("peak_ratio", {}).values()), None)
            status = ("n/a (size differs from target)" if m != target_m
                      else "n/a (a side did not run)" if ratio is None
                      else "pass" if ratio <= max_ratio else "FAIL")
            entry["target"] = {"text": text, "where": f"m={target_m:,}", "status": status}
        results["memory"].append(entry)


def _compile(workload, results):
    m, d = workload.grids["smoke"].headline
    entry = {"workload": workload.name, "title": workload.title, "m": m, "d": d}
    entry.update(coldstart.measure_cold(workload.name, m, d))
    results["compile"].append(entry)


def _plan(settings, only):
    """The list of (label, function(results)) steps for this profile."""
    selected = [w for w in WORKLOADS if only is None or w.name in only]
    available = [w for w in selected if w.available()[0]]
    steps = [("machine", lambda r: r.update(machine=machine_info()))]
    # Compile time first: each cold run's kernels then seed this process's numba cache.
    compiled = [w for w in available if settings.compile_only is None
                or w.name in settings.compile_only]
    for workload in compiled:
        steps.append((f"compile {workload.name}", lambda r, w=workload: _compile(w, r)))

    def speed_step(workload):
        def run(results):
            ok, reason = workload.available()
            if not ok:
                results["speed"].append({"workload": workload.name, "area": workload.area,
                                         "title": workload.title, "status": "not available",
                                         "notes": [reason]})
                return
            rows = [_speed_row(workload, m, d, settings)
                    for m, d in workload.grids[settings.name].speed_cases()]
            results["speed"].extend(rows)
            results["scaling"].append(_scaling(workload, settings, rows))

        return run

    for workload in selected:
        steps.append((f"speed+scaling {workload.name}", speed_step(workload)))
    mxm = [w for w in available if w.mxm]
    for workload in mxm if settings.memory_all else mxm[:1]:
        steps.append((f"memory {workload.name}",
                      lambda r, w=workload: _memory(w, settings, r)))
    for kind in settings.embedding_kinds:
        steps.append((f"embeddings {kind}", lambda r, k=kind: r["embeddings"].append(
            embeddings.compute_embeddings(k, settings.embedding_m))))
    steps.append(("experiment 1-NN vs Bayes", lambda r: r["experiments"].update(
        nn_vs_bayes=experiments.nn_vs_bayes(settings))))
    steps.append(("experiment distance concentration", lambda r: r["experiments"].update(
        distance_concentration=experiments.distance_concentration(settings))))
    return steps


def build_report(profile=None, out="report", *, only=None, progress=True):
    """Run every step of one profile and write ``report.md``, PNG figures and JSON to ``out``.

    Parameters
    ----------
    profile : {"smoke", "quick", "full"} or None
        None reads ``FASTDR_BENCH_PROFILE`` (default ``quick``).
    out : str or Path
        Output directory (created).
    only : collection of str or None
        Restrict the speed, memory and compile sections to these workload names.
    progress : bool
        Show a tqdm progress bar over the steps.

    Returns
    -------
    dict
        The results, as written to ``out/results.json``.
    """
    settings = resolve_profile(profile)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for pattern in plots.FIGURE_PATTERNS:  # stale figures of an earlier run would mislead
        for stale in out.glob(pattern):
            stale.unlink()
    started = time.perf_counter()
    results = {"profile": settings.name,
               "created": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               "host": platform.node(), "machine": {}, "speed": [], "scaling": [],
               "memory": [], "compile": [], "embeddings": [], "experiments": {}, "notes": [],
               "figures": [], "step_seconds": {}}
    steps = _plan(settings, set(only) if only else None)
    steps.append(("figures", lambda r: r["figures"].extend(plots.draw_all(r, out))))
    bar = _progress(len(steps), progress)
    for label, step in steps:
        bar.set_description(label)
        step_start = time.perf_counter()
        try:
            step(results)
        except Exception as exc:  # noqa: BLE001 - one broken step must not lose the report
            results["notes"].append(f"step '{label}' failed: {error_text(exc)}")
        results["step_seconds"][label] = round(time.perf_counter() - step_start, 2)
        bar.update(1)
    bar.close()
    results["wall_time_s"] = time.perf_counter() - started
    if hasattr(os, "getloadavg"):
        results["machine"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    for entry in results["embeddings"]:  # arrays are in the figures, not the JSON
        entry.pop("colour", None)
        for method in entry["methods"]:
            method.pop("fastdr", None)
            method.pop("anchor", None)
    (out / "results.json").write_text(json.dumps(results, indent=1, default=_json_default))
    write_markdown(results, out / "report.md")
    return results


def _json_default(value):
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def _progress(total, enabled):
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, unit="step", dynamic_ncols=True)
