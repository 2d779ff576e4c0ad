"""Build the report: plan the steps, run them under a progress bar, write JSON, figures and
markdown; every timing goes through :func:`bench.engine.measure`."""

import json
import os
import platform
import shlex
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from bench.agreement import error_text
from bench.engine import fit_loglog_slope, gemm_seconds, measure, run_check
from bench.profiles import resolve_profile
from bench.workloads import WORKLOADS

from . import embeddings, experiments, fresh, plots
from .html import write_html
from .machine import external_metric_learn_version, machine_info, provenance
from .markdown import write_markdown

RESULT_KEYS = ("profile", "created", "wall_time_s", "machine", "speed", "scaling", "memory",
               "compile", "embeddings", "experiments", "notes", "figures", "step_seconds",
               "provenance")


def _speed_row(workload, m, d, settings):
    """Time fastdr, then each anchor checked against fastdr's answer; the GEMM roofline."""
    import numba

    data = workload.data(m, d, profile=settings.name, headline=True)
    row = {"workload": workload.name, "area": workload.area, "title": workload.title,
           "m": data.m, "d": data.d, "dtype": workload.dtype,
           "threads": numba.get_num_threads(), "impls": {}, "agreement": {},
           "notes": list(workload.notes)}
    repeats = {"min_repeats": settings.min_repeats, "max_repeats": settings.max_repeats,
               "budget_s": settings.budget_s, "cap_s": settings.cap_s}
    reference = None
    for impl in workload.impls():
        ok, reason = impl.runnable(data.m)
        if not ok:
            row["impls"][impl.label] = {"call": impl.call, "skipped": reason}
            continue
        fast = impl.label == "fastdr"
        check = None if fast or reference is None else (
            lambda result, ref=reference: workload.agreement(ref, result, data))
        try:
            found, result = measure(impl, data, check=check, keep_result=fast, **repeats)
        except Exception as exc:  # noqa: BLE001 - a failing method is reported, not fatal
            row["impls"][impl.label] = {"call": impl.call, "error": error_text(exc)}
            continue
        row["impls"][impl.label] = {"call": impl.call, **found.as_dict()}
        if fast:
            reference = result
        elif found.agreement is not None:
            row["agreement"][impl.label] = found.agreement.as_dict()
    fast = row["impls"]["fastdr"].get("median_s")
    anchors = {label: e["median_s"] for label, e in row["impls"].items()
               if label != "fastdr" and "median_s" in e}
    row["ratios"] = {label: s / fast for label, s in anchors.items() if fast and s}
    if reference is not None and not row["agreement"] and workload.truth_agreement:
        row["agreement"]["truth"] = run_check(
            lambda result: workload.truth_agreement(result, data), reference).as_dict()
    if fast and workload.distance_shape is not None:
        dtype = (workload.distance_dtype(data) if workload.distance_dtype is not None
                 else workload.dtype)
        row["roofline"] = _roofline(workload.distance_shape(data), dtype, fast,
                                    triangle=workload.distance_triangle)
    row["status"] = "error" if "error" in row["impls"]["fastdr"] else "ok"
    target = workload.target_for(row["m"], row["d"])
    if target is not None:
        key = target.anchor if target.anchor in row["agreement"] else next(
            iter(row["agreement"]), None)
        row["target"] = {"text": target.text, "where": target.where(),
                         "status": target.status(row["m"], row["d"], fast, anchors,
                                                 row["agreement"][key]["ok"] if key else None)}
    return row


def _roofline(shape, dtype, fast_s, *, triangle=False):
    """fastdr's distance step (whole call) in GFLOP/s against np.dot of the same shape, in
    the precision the step runs in; for a one-triangle self-product, half the flops against
    half the GEMM's time (the product of one triangle at the GEMM's rate)."""
    queries, keys, d = shape
    share = 0.5 if triangle else 1.0
    flops = share * 2.0 * queries * keys * d
    try:
        gemm_s, blocked = gemm_seconds(queries, keys, d, dtype)
    except Exception as exc:  # noqa: BLE001 - e.g. out of memory: reported, not fatal
        return {"shape": list(shape), "dtype": str(dtype), "error": error_text(exc)}
    gemm_s *= share
    return {"shape": list(shape), "dtype": str(dtype), "triangle": triangle, "flops": flops,
            "fastdr_gflops": flops / fast_s / 1e9, "gemm_s": gemm_s,
            "gemm_gflops": flops / gemm_s / 1e9, "gemm_blocked": blocked,
            "fraction": gemm_s / fast_s}


def _scaling(workload, settings, speed_rows):
    """Time against m and against d, small to large, for each implementation until it has
    spent ``scaling_budget_s`` on this workload; fitted log-log slopes."""
    grid = workload.grids[settings.name]
    known = {} if grid.headline_kind else {
        (row["m"], row["d"]): {label: e.get("median_s") for label, e in row["impls"].items()}
        for row in speed_rows}
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
                        found, _ = measure(impl, data, min_repeats=settings.scaling_repeats,
                                           max_repeats=settings.scaling_repeats)
                    except Exception as exc:  # noqa: BLE001
                        curves["errors"].append(f"{impl.label} at m={m}, d={d}: "
                                                f"{error_text(exc)}")
                        continue
                    known[(m, d)][impl.label] = found.median
                    spent[impl.label] = spent.get(impl.label, 0) + found.cold_s + sum(found.times)
            for label, seconds in known[(m, d)].items():
                if seconds:
                    entry = series.setdefault(label, {"x": [], "seconds": []})
                    entry["x"].append(m if axis == "m" else d)
                    entry["seconds"].append(seconds)
        for entry in series.values():
            entry["slope"] = fit_loglog_slope(entry["x"], entry["seconds"])
        curves[f"vs_{axis}"] = {"fixed": grid.d_for_m if axis == "m" else grid.m_for_d,
                                "series": series}
    return curves


def _memory(workload, settings, results):
    grid = workload.grids[settings.name]
    d = grid.headline[1]
    for m in grid.memory_m:
        entry = {"workload": workload.name, "title": workload.title, "m": m, "d": d,
                 "impls": {impl.label: fresh.measure_memory(workload.name, impl.label, m, d)
                           if impl.runnable(m)[0] else {"skipped": impl.runnable(m)[1]}
                           for impl in workload.impls()}}
        fast = entry["impls"]["fastdr"]
        for label, value in entry["impls"].items():
            for key, name in (("peak_bytes", "peak_ratio"), ("increase_bytes", "increase_ratio")):
                if label != "fastdr" and fast.get(key) is not None and value.get(key):
                    entry.setdefault(name, {})[label] = fast[key] / value[key]
        if workload.memory_target is not None:
            target_m, max_ratio, text = workload.memory_target
            ratio = next(iter(entry.get("peak_ratio", {}).values()), None)
            status = ("n/a (size differs from target)" if m != target_m
                      else "n/a (a side did not run)" if ratio is None
                      else "pass" if ratio <= max_ratio else "FAIL")
            entry["target"] = {"text": text, "where": f"m={target_m:,}", "status": status}
        results["memory"].append(entry)


def _compile(workload):
    m, d = workload.grids["smoke"].headline
    return {"workload": workload.name, "title": workload.title, "m": m, "d": d,
            **fresh.measure_cold(workload.name, m, d)}


def _speed_step(workload, settings):
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


def _plan(settings, only):
    """The list of (label, function(results)) steps for this profile."""
    selected = [w for w in WORKLOADS if only is None or w.name in only]
    available = [w for w in selected if w.available()[0]]
    steps = [("machine", lambda r: r.update(machine=machine_info()))]
    # Compile time first: each cold run's kernels then seed this process's numba cache.
    steps += [(f"compile {w.name}", lambda r, w=w: r["compile"].append(_compile(w)))
              for w in available
              if settings.compile_only is None or w.name in settings.compile_only]
    steps += [(f"speed+scaling {w.name}", _speed_step(w, settings)) for w in selected]
    mxm = [w for w in available if w.mxm]
    steps += [(f"memory {w.name}", lambda r, w=w: _memory(w, settings, r))
              for w in (mxm if settings.memory_all else mxm[:1])]
    steps += [(f"embeddings {kind}", lambda r, k=kind: r["embeddings"].append(
        embeddings.compute_embeddings(k, settings.embedding_m)))
        for kind in settings.embedding_kinds]
    steps += [(f"experiment {label}", lambda r, key=key: r["experiments"].update(
        {key: getattr(experiments, key)(settings)}))
        for label, key in (("1-NN vs Bayes", "nn_vs_bayes"),
                           ("distance concentration", "distance_concentration"))]
    return steps


def build_report(profile=None, out="report", *, only=None, progress=True, command=None):
    """Run one profile and write ``report.md``, ``report.html`` (self-contained), PNG figures
    and ``results.json`` to ``out``.

    Parameters
    ----------
    profile : {"smoke", "quick", "full"} or None
        None reads ``FASTDR_BENCH_PROFILE`` (default ``quick``).
    out : str or Path
        Output directory (created).
    only : collection of str or None
        Workload names to measure (default: all).
    progress : bool
        Show a tqdm progress bar over the steps.
    command : str or None
        The command line recorded in the report (default: this process's arguments).

    Returns
    -------
    dict
        The results, as written to ``out/results.json``.
    """
    from tqdm import tqdm

    settings = resolve_profile(profile)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for stale in [p for pattern in plots.FIGURE_PATTERNS for p in out.glob(pattern)]:
        stale.unlink()  # an earlier run's figures would mislead
    started = time.perf_counter()
    results = {key: {} if key in ("machine", "experiments", "step_seconds") else []
               for key in RESULT_KEYS}
    results.update(profile=settings.name, host=platform.node(),
                   created=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                   provenance=provenance(command or shlex.join([sys.executable, *sys.argv])))
    steps = _plan(settings, set(only) if only else None)
    steps.append(("figures", lambda r: r["figures"].extend(plots.draw_all(r, out))))
    bar = tqdm(total=len(steps), disable=not progress, unit="step", dynamic_ncols=True)
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
    machine = results["machine"]
    if hasattr(os, "getloadavg"):
        machine["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    if machine.get("metric_learn_version") == "not installed":
        machine["metric_learn_version"] = external_metric_learn_version() or (
            "not installed here (its separate environment is not used unless an MMC row runs)")
    for entry in results["embeddings"]:  # arrays are in the figures, not the JSON
        entry.pop("colour", None)
        entry["methods"] = [{k: v for k, v in method.items() if k not in ("fastdr", "anchor")}
                            for method in entry["methods"]]
    (out / "results.json").write_text(json.dumps(  # numpy scalars and arrays: tolist()
        results, indent=1, default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v)))
    write_markdown(results, out / "report.md")
    write_html(out / "report.md")
    return results
