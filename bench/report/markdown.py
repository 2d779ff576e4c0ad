"""Write ``report.md`` from the results dict."""

import math

# Every explanation the report prints, in one place.
TEXT = {
    "intro": "How to read it: every timing is a median after a warm-up call, fastdr and its "
    "anchors back to back on the same input: compare the **speed-up column** (a ratio within "
    "one run), not seconds across runs. An answer that disagrees with its anchor is **WRONG**.",
    "load": "**Warning**: the 1-minute load average exceeded the {cores} cores during this "
    "run, so timings (of fastdr's multi-threaded kernels most of all) are noisy. Ratios within "
    "the run are still the fairest comparison; rerun on an idle machine to quote them.",
    "speed": "Median of several timed calls after one warm-up call (which absorbs JIT "
    "compilation). **speed-up = anchor median / fastdr median** (above 1: fastdr is faster). "
    "The agreement column compares fastdr's answer with that anchor's: a fast wrong answer "
    "shows as **WRONG** and fails its target.",
    "small": "This is the `{profile}` profile, smaller than the BENCHMARKS.md targets: the "
    "target column gives the target **at full size**, the status is `n/a` where sizes differ, "
    "the speed-up is the ratio at this size. `python -m bench.report --profile full` judges "
    "the targets.",
    "roofline": "**GEMM roofline** (distance-bound rows: pairwise distances, brute-force k-NN, "
    "the classifier's predict, kernel PCA's kernel step): the distance step's 2 x queries x "
    "keys x d flops over fastdr's whole call, in GFLOP/s, against `np.dot` of the same (queries,"
    " d) x (d, keys) shape in this run, in the precision fastdr's distance step runs in (named "
    "in the cell: brute-force k-NN screens in float32 from 16 features up, float64 input "
    "included) (median of 3 after a cold call; in row blocks above 1 GiB of output). Where "
    "fastdr computes one triangle of X against itself (pairwise distances), both the flops and "
    "the GEMM time are halved. The percentage is GEMM time / fastdr time: at 100% fastdr runs "
    "as fast as the bare product, norms, selection and eigensolver included.",
    "scaling": "Median time against m (at fixed d) and against d (at fixed m), log-log, with "
    "the least-squares slope: a slope change between runs is a change in complexity.",
    "memory": "Peak resident set size (RSS) of one call, each implementation in a fresh process "
    "after a warm-up on 100 points (imports and compilation not counted). *peak* is the "
    "high-water mark during the call (VmHWM, reset before it), *increase* the peak above the "
    "RSS just before it. fastdr's process carries numba, LLVM and its kernels (baselines in "
    "results.json), which dominates the peak ratio at small m; the increase ratio shows what "
    "the method allocates. BENCHMARKS.md's memory target is judged on the peak.",
    "compile": "Each method in a fresh process with an empty `NUMBA_CACHE_DIR`, on a small "
    "input: *first call* includes JIT compilation, *second call* is warm, the difference is the "
    "compile time. *import* is `import fastdr` plus the modules behind the method's public "
    "names (numba included); it must compile nothing.",
    "compile_quick": "The quick profile measures three methods (each compiles from nothing, "
    "5 to 40 s on 2 cores); the full profile measures every method.",
    "embeddings": "Each method's 2-D embedding, fastdr on top and the anchor below (with their "
    "Procrustes disparity), coloured by the position along the manifold. LDA, NCA and MMC use "
    "six classes cut from that position.",
    "bayes": "Two {dimension}-D unit Gaussians with equal priors and Bayes error R* = "
    "{bayes_error}; 1-NN (fastdr) test error on {n_test:,} test points, mean of {repeats} draws "
    "per size. Cover and Hart: the limit lies between R* and 2R*(1-R*); the exact limit "
    "E[2 eta(1-eta)] is drawn too.",
    "curse": "{queries} uniform queries against {m:,} uniform points in [0,1]^d "
    "(fastdr.pairwise_distances): the nearest neighbour is barely nearer than the farthest "
    "once d is large.",
}


def _s(seconds):
    """Seconds with three significant digits."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "-"
    return f"{seconds:.0f}" if seconds >= 100 else f"{seconds:.3g}"


def _spread(entry):
    """Median, then min-max over the timed calls: ``0.0189 (0.0185-0.0201)``."""
    median = entry.get("median_s")
    times = [t for t in entry.get("times_s") or () if t == t]
    if median is None or len(times) < 2:
        return _s(median)
    return f"{_s(median)} ({_s(min(times))}-{_s(max(times))})"


def _mib(n_bytes):
    return "-" if n_bytes is None else f"{n_bytes / 2**20:,.0f}"


def _ratio(value, fmt):
    return "-" if value is None else format(value, fmt)


def _agreement_text(entry):
    if entry is None:
        return "-"
    value = entry["value"]
    shown = f"{value:.2e}" if abs(value) < 1e-2 and value != 0 else f"{value:.4g}"
    return f"{entry['metric']} {shown} ({'ok' if entry['ok'] else '**WRONG**'})"


def _table(header, rows):
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows)]


def _listed(title, items):
    return [title, "", *items, ""] if items else []


def _details(summary, items):
    return [f"<details><summary>{summary}</summary>", "", *items, "", "</details>", ""] \
        if items else []


def _machine(results):
    m = results["machine"]
    rows = [("CPU", f"{m.get('cpu_model')} ({m.get('simd')})"),
            ("cores", f"{m.get('physical_cores')} physical, {m.get('logical_cores')} logical"),
            ("memory", f"{m.get('memory_gib')} GiB ({m.get('available_memory_gib')} GiB "
                       "available at start)"),
            ("load average (1, 5, 15 min) at start / end",
             f"{m.get('load_average')} / {m.get('load_average_end')}"),
            ("OS", m.get("os")),
            ("numba threads / threading layer",
             f"{m.get('numba_threads')} / {m.get('numba_threading_layer')}"),
            ("BLAS / OpenMP", m.get("blas")), ("numba cache", f"`{m.get('numba_cache_dir')}`"),
            ("OPENBLAS_THREAD_TIMEOUT", m.get("openblas_thread_timeout")),
            ("OPENBLAS_CORETYPE", m.get("openblas_coretype"))]
    source = results.get("provenance") or {}
    if source:
        dirty = {True: " (with uncommitted changes)", False: " (clean tree)"}.get(
            source.get("git_dirty"), "")
        rows += [("git commit", f"{source.get('git_commit')}{dirty}"),
                 ("command", f"`{source.get('command')}`")]
    rows += [(module.replace("_", "-"), m.get(module if module == "python" else
                                              f"{module}_version"))
             for module in ("python", "fastdr", "numba", "numpy", "scipy", "sklearn", "faiss",
                            "metric_learn", "matplotlib")]
    cores = m.get("logical_cores") or 1
    loaded = any(load and load[0] > cores for load in (m.get("load_average"),
                                                         m.get("load_average_end")))
    return ["## Machine", "", *_table(("", ""), rows), "",
            *([TEXT["load"].format(cores=cores), ""] if loaded else [])]


def _speed(results, profile):
    lines = ["## Speed", "", TEXT["speed"], ""]
    if profile != "full":
        lines += [TEXT["small"].format(profile=profile), ""]
    rows, missing, notes, calls, details = [], [], [], {}, []
    for row in results["speed"]:
        name = f"`{row['workload']}`"
        if row["status"] == "not available":
            missing.append(f"- {name} ({row['title']}): {row['notes'][0]}")
            continue
        calls.setdefault(row["workload"], {k: e["call"] for k, e in row["impls"].items()})
        target, main_anchor = row.get("target"), _target_anchor(row)
        for label, entry in row["impls"].items():
            why = entry.get("skipped") or (f"failed: {entry['error']}" if "error" in entry
                                           else None)
            if why:
                notes.append(f"- {name} m={row['m']:,}: {label} {why}")
        fast = row["impls"]["fastdr"]
        ran = [(k, e) for k, e in row["impls"].items() if k != "fastdr" and "median_s" in e]
        for i, (label, entry) in enumerate(ran or [(None, None)]):
            agreement = row["agreement"].get(label or "truth")
            if agreement and agreement.get("detail"):
                details.append(f"- {name} m={row['m']:,}, d={row['d']}, "
                               f"{label or 'ground truth'}: {agreement['detail']}")
            judged = target and label in (None, main_anchor)
            rows.append((name, f"{row['m']:,}", row["d"], row["dtype"],
                         "error" if "error" in fast else _spread(fast),
                         label or "(none)", _spread(entry) if entry else "-",
                         f"{row['ratios'][label]:.3g}x" if row["ratios"].get(label) else "-",
                         _roofline_text(row.get("roofline")) if i == 0 else "-",
                         _agreement_text(agreement),
                         f"{target['text']} at {target['where']}" if judged else "-",
                         target["status"] if judged else "-"))
        notes += [f"- {name}: {note}" for note in row.get("notes", [])]
    header = ("method", "m", "d", "dtype", "fastdr (s), median (min-max)", "anchor",
              "anchor (s), median (min-max)", "speed-up",
              "GEMM roofline", "agreement", "target at full size", "status")
    lines += _table(header, rows) + [""]
    if any(row.get("roofline") for row in results["speed"]):
        lines += [TEXT["roofline"], ""]
    calls = [f"- `{name}`: " + "; ".join(f"{label}: `{call}`" for label, call in impls.items())
             for name, impls in calls.items()]
    return (lines + _listed("Not measured (the estimator is not importable in this build):",
                            missing)
            + _listed("Notes:", list(dict.fromkeys(notes)))
            + _details("How each agreement was judged", details)
            + _details("The exact calls timed", calls))


def _roofline_text(roof):
    if not roof:
        return "-"
    if "error" in roof:
        return f"GEMM failed: {roof['error'][:80]}"
    return (f"{roof['fastdr_gflops']:.3g} of {roof['gemm_gflops']:.3g} GFLOP/s "
            f"{roof.get('dtype', '')} ({100 * roof['fraction']:.2g}%)")


def _target_anchor(row):
    if not row.get("target"):
        return None
    anchors = [label for label in row["impls"] if label != "fastdr"]
    return next((a for a in anchors if a in row["target"]["text"]), anchors[0] if anchors
                else None)


def _scaling(results):
    rows, shown = [], set()
    for entry in results["scaling"]:
        by_m, by_d = entry["vs_m"]["series"], entry["vs_d"]["series"]
        figure = f"scaling_{entry['area']}.png"
        for label in dict.fromkeys([*by_m, *by_d]):
            rows.append((f"`{entry['workload']}`", label,
                         _ratio(by_m.get(label, {}).get("slope"), ".2f"),
                         _ratio(by_d.get(label, {}).get("slope"), ".2f"),
                         f"[{figure}]({figure})" if figure not in shown else ""))
            shown.add(figure)
    lines = ["## Scaling", "", TEXT["scaling"], "",
             *_table(("method", "implementation", "slope vs m", "slope vs d", "figure"), rows)]
    if "scaling_overview.png" in results["figures"]:
        lines += ["", "![time against m, every method](scaling_overview.png)"]
    lines += [line for figure in sorted(shown) if figure in results["figures"]
              for line in ("", f"![{figure}]({figure})")]
    for key, title in (("errors", "Errors:"), ("skipped", "Points not measured:")):
        found = [f"- `{e['workload']}` {x}" for e in results["scaling"] for x in e.get(key, [])]
        lines += ["", title, "", *found] if found else []
    return lines + [""]


def _memory(results):
    rows = []
    for entry in results["memory"]:
        fast, target = entry["impls"].get("fastdr", {}), entry.get("target")
        for label, value in entry["impls"].items():
            if label == "fastdr":
                continue
            rows.append((
                f"`{entry['workload']}`", f"{entry['m']:,}",
                _mib(fast.get("peak_bytes")) if "error" not in fast else fast["error"],
                _mib(fast.get("increase_bytes")), label,
                _mib(value["peak_bytes"]) if "peak_bytes" in value else
                value.get("error", value.get("skipped", "-")),
                _mib(value.get("increase_bytes")),
                _ratio(entry.get("peak_ratio", {}).get(label) or None, ".0%"),
                _ratio(entry.get("increase_ratio", {}).get(label), ".0%"),
                f"{target['text']} at {target['where']}" if target else "-",
                target["status"] if target else "-"))
    header = ("method", "m", "fastdr peak (MiB)", "fastdr increase (MiB)", "anchor",
              "anchor peak (MiB)", "anchor increase (MiB)", "fastdr / anchor peak",
              "fastdr / anchor increase", "target", "status")
    return ["## Memory", "", TEXT["memory"], "",
            *(_table(header, rows) if rows else
              ["No m x m method was measured (none is importable yet)."]), ""]


def _compile(results):
    rows = [(f"`{e['workload']}`", f"{e['m']:,}", "error", e["error"], "", "") if "error" in e
            else (f"`{e['workload']}`", f"{e['m']:,}", _s(e["import_s"]), _s(e["first_s"]),
                  _s(e["second_s"]), _s(e["compile_s"])) for e in results["compile"]]
    quick = [TEXT["compile_quick"], ""] if results["profile"] == "quick" else []
    return ["## Compile time", "", TEXT["compile"], "", *quick,
            *_table(("method", "m", "import (s)", "first call (s)", "second call (s)",
                     "compile (s)"), rows), ""]


def _embeddings(results):
    lines = ["## Embeddings", "", TEXT["embeddings"], ""]
    for entry in results["embeddings"]:
        name = f"embeddings_{entry['kind']}.png"
        if name in results["figures"]:
            lines += [f"![{entry['kind']} embeddings]({name})", ""]
        lines += [f"- {entry['kind']}, {method['name']}: {note}" for method in entry["methods"]
                  for note in method["notes"]] + [""]
    return lines


def _experiments(results):
    lines = ["## Textbook experiments", ""]
    for key, text, title, alt in (
            ("nn_vs_bayes", "bayes", "1-NN error against the Bayes error", "1-NN vs Bayes"),
            ("distance_concentration", "curse", "The curse of dimensionality",
             "distance concentration")):
        found = results["experiments"].get(key)
        if found:
            lines += [f"### {title}", "", TEXT[text].format(**found), "",
                      f"Result: {found['summary']}.", "", f"![{alt}](experiment_{key}.png)", ""]
    return lines


def write_markdown(results, path):
    """Write the report."""
    profile = results["profile"]
    lines = [f"# fastdr performance report ({profile} profile)", "",
             f"Created {results['created']} by `python -m bench.report --profile {profile}` in "
             f"{results['wall_time_s']:.0f} s. Raw numbers: [results.json](results.json).", "",
             TEXT["intro"], ""]
    if "speedup.png" in results["figures"]:
        lines += ["![speed-ups](speedup.png)", ""]
    lines += (_machine(results) + _speed(results, profile) + _scaling(results)
              + _memory(results) + _compile(results) + _embeddings(results)
              + _experiments(results))
    lines += _listed("## Problems during this run", [f"- {n}" for n in results["notes"]])
    path.write_text("\n".join(lines) + "\n")
