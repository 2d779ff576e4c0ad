"""Write ``report.md`` from the results dict."""

import math


def _s(seconds):
    """Seconds with three significant digits."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "-"
    if seconds >= 100:
        return f"{seconds:.0f}"
    return f"{seconds:.3g}"


def _mib(n_bytes):
    return "-" if n_bytes is None else f"{n_bytes / 2**20:,.0f}"


def _agreement_text(entry):
    if entry is None:
        return "-"
    value = entry["value"]
    shown = f"{value:.2e}" if abs(value) < 1e-2 and value != 0 else f"{value:.4g}"
    mark = "ok" if entry["ok"] else "**WRONG**"
    return f"{entry['metric']} {shown} ({mark})"


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines


def _machine(results):
    machine = results["machine"]
    rows = [
        ("CPU", f"{machine.get('cpu_model')} ({machine.get('simd')})"),
        ("cores", f"{machine.get('physical_cores')} physical, {machine.get('logical_cores')} "
                  "logical"),
        ("memory", f"{machine.get('memory_gib')} GiB ({machine.get('available_memory_gib')} "
                   "GiB available at start)"),
        ("load average (1, 5, 15 min) at start / end",
         f"{machine.get('load_average')} / {machine.get('load_average_end')}"),
        ("OS", machine.get("os")),
        ("numba threads / threading layer",
         f"{machine.get('numba_threads')} / {machine.get('numba_threading_layer')}"),
        ("BLAS / OpenMP", machine.get("blas")),
        ("numba cache", machine.get("numba_cache_dir")),
    ]
    for module in ("python", "fastdr", "numba", "numpy", "scipy", "sklearn", "faiss",
                   "metric_learn", "matplotlib"):
        key = module if module == "python" else f"{module}_version"
        rows.append((module.replace("_", "-"), machine.get(key)))
    lines = ["## Machine", "", *_table(("", ""), rows), ""]
    loads = [machine.get("load_average"), machine.get("load_average_end")]
    cores = machine.get("logical_cores") or 1
    if any(load and load[0] > cores for load in loads):
        lines += [f"**Warning**: the 1-minute load average exceeded the {cores} cores during "
                  "this run: other processes competed for the CPU, so timings (fastdr's "
                  "multi-threaded kernels most of all) are noisy. Ratios within the run are "
                  "still the fairest comparison; rerun on an idle machine to quote them.", ""]
    return lines


def _speed(results, profile):
    lines = ["## Speed", "",
             "Median of several timed calls after one warm-up call (which absorbs JIT "
             "compilation), fastdr and each anchor on the same data in the same run. "
             "**speed-up = anchor median / fastdr median** (above 1: fastdr is faster). The "
             "agreement column compares fastdr's answer with that anchor's: a fast wrong "
             "answer shows as **WRONG** and fails its target.", ""]
    if profile != "full":
        lines += [f"This is the `{profile}` profile: its sizes are smaller than those of the "
                  "targets in BENCHMARKS.md, so the target column gives the target **at full "
                  "size** and the status says `n/a` where the sizes differ; the speed-up is "
                  "the ratio at this size. Run `python -m bench.report --profile full` to "
                  "judge the targets.", ""]
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
            ratio = row["ratios"].get(label)
            judged = target and label in (None, main_anchor)
            rows.append((name, f"{row['m']:,}", row["d"], row["dtype"],
                         "error" if "error" in fast else _s(fast.get("median_s")),
                         label or "(none)", _s(entry["median_s"]) if entry else "-",
                         f"{ratio:.3g}x" if ratio else "-",
                         _roofline_text(row.get("roofline")) if i == 0 else "-",
                         _agreement_text(agreement),
                         f"{target['text']} at {target['where']}" if judged else "-",
                         target["status"] if judged else "-"))
        notes += [f"- {name}: {note}" for note in row.get("notes", [])]
    header = ("method", "m", "d", "dtype", "fastdr (s)", "anchor", "anchor (s)", "speed-up",
              "GEMM roofline", "agreement", "target at full size", "status")
    lines += _table(header, rows) + [""]
    if any(row.get("roofline") for row in results["speed"]):
        lines += ["**GEMM roofline** (distance-bound rows: pairwise distances, brute-force "
                  "k-NN, the classifier's predict, kernel PCA's kernel step): the distance "
                  "step's 2 x queries x keys x d flops divided by fastdr's whole call, in "
                  "GFLOP/s, against `np.dot` of the same (queries, d) x (d, keys) shape in the "
                  "same dtype, timed in this run (median of 3 after a cold call; in row blocks "
                  "into one reused buffer where the product would exceed 1 GiB). The "
                  "percentage is GEMM time / fastdr time: 100% means fastdr runs as fast as "
                  "the bare product, everything else (norms, selection, the eigensolver) "
                  "included. The flops are nominal: a call that computes only one triangle "
                  "(the self-query k-NN may) can pass 100%.", ""]
    if missing:
        lines += ["Not measured (the estimator is not importable in this build):", "",
                  *missing, ""]
    if notes:
        lines += ["Notes:", "", *dict.fromkeys(notes), ""]
    if details:
        lines += ["<details><summary>How each agreement was judged</summary>", "", *details,
                  "", "</details>", ""]
    if calls:
        lines += ["<details><summary>The exact calls timed</summary>", ""]
        for name, impls in calls.items():
            lines += [f"- `{name}`: " + "; ".join(f"{label}: `{call}`"
                                                  for label, call in impls.items())]
        lines += ["", "</details>", ""]
    return lines


def _roofline_text(roof):
    if not roof:
        return "-"
    if "error" in roof:
        return f"GEMM failed: {roof['error'][:80]}"
    return (f"{roof['fastdr_gflops']:.3g} of {roof['gemm_gflops']:.3g} GFLOP/s "
            f"({100 * roof['fraction']:.2g}%)")


def _target_anchor(row):
    target = row.get("target")
    if not target:
        return None
    for label in row["impls"]:
        if label != "fastdr" and label in target["text"]:
            return label
    return next((label for label in row["impls"] if label != "fastdr"), None)


def _scaling(results):
    lines = ["## Scaling", "",
             "Median time against m (at fixed d) and against d (at fixed m), log-log, with the "
             "least-squares slope: a slope change between runs is a change in complexity, "
             "not just in constants.", ""]
    rows, shown = [], set()
    for entry in results["scaling"]:
        labels = list(dict.fromkeys([*entry["vs_m"]["series"], *entry["vs_d"]["series"]]))
        for label in labels:
            slope_m = entry["vs_m"]["series"].get(label, {}).get("slope")
            slope_d = entry["vs_d"]["series"].get(label, {}).get("slope")
            figure = f"scaling_{entry['area']}.png"
            rows.append((f"`{entry['workload']}`", label,
                         "-" if slope_m is None else f"{slope_m:.2f}",
                         "-" if slope_d is None else f"{slope_d:.2f}",
                         f"[{figure}]({figure})" if figure not in shown else ""))
            shown.add(figure)
    lines += _table(("method", "implementation", "slope vs m", "slope vs d", "figure"), rows)
    if "scaling_overview.png" in results["figures"]:
        lines += ["", "![time against m, every method](scaling_overview.png)"]
    for figure in sorted(shown):
        if figure in results["figures"]:
            lines += ["", f"![{figure}]({figure})"]
    errors = [f"`{entry['workload']}` {e}" for entry in results["scaling"]
              for e in entry["errors"]]
    if errors:
        lines += ["", "Errors:", "", *[f"- {e}" for e in errors]]
    skipped = [f"`{entry['workload']}` {s}" for entry in results["scaling"]
               for s in entry.get("skipped", [])]
    if skipped:
        lines += ["", "Points not measured:", "", *[f"- {s}" for s in skipped]]
    return lines + [""]


def _memory(results):
    lines = ["## Memory", "",
             "Peak resident set size (RSS) of one call, each implementation in its own fresh "
             "process after a warm-up on 100 points (so imports and JIT compilation are not "
             "counted). *peak* is the process's high-water mark during the call (VmHWM, reset "
             "before it), *increase* is the peak above the RSS just before the call. The "
             "fastdr process carries numba, LLVM and its compiled kernels (a higher RSS "
             "before the call; the baselines are in results.json), which dominates the peak "
             "ratio at small m; the increase ratio shows what the method itself allocates. "
             "BENCHMARKS.md's memory target is judged on the peak.", ""]
    rows = []
    for entry in results["memory"]:
        fast = entry["impls"].get("fastdr", {})
        for label, value in entry["impls"].items():
            if label == "fastdr":
                continue
            ratio = entry.get("peak_ratio", {}).get(label)
            increase_ratio = entry.get("increase_ratio", {}).get(label)
            target = entry.get("target")
            rows.append((
                f"`{entry['workload']}`", f"{entry['m']:,}",
                _mib(fast.get("peak_bytes")) if "error" not in fast else fast["error"],
                _mib(fast.get("increase_bytes")), label,
                _mib(value.get("peak_bytes")) if "peak_bytes" in value else
                value.get("error", value.get("skipped", "-")),
                _mib(value.get("increase_bytes")), f"{ratio:.0%}" if ratio else "-",
                f"{increase_ratio:.0%}" if increase_ratio is not None else "-",
                f"{target['text']} at {target['where']}" if target else "-",
                target["status"] if target else "-"))
    if rows:
        lines += _table(("method", "m", "fastdr peak (MiB)", "fastdr increase (MiB)",
                         "anchor", "anchor peak (MiB)", "anchor increase (MiB)",
                         "fastdr / anchor peak", "fastdr / anchor increase", "target",
                         "status"), rows)
    else:
        lines += ["No m x m method was measured (none is importable yet)."]
    return lines + [""]


def _compile(results):
    lines = ["## Compile time", "",
             "Each method in a fresh process with an empty `NUMBA_CACHE_DIR`, so the numba "
             "disk cache cannot hide compilation, on a small input. *first call* includes "
             "JIT compilation of every kernel it uses; *second call* is warm; their "
             "difference is the compile time. *import* is `import fastdr` plus loading the "
             "modules behind the method's public names (numba included); it must compile "
             "nothing.", ""]
    if results["profile"] == "quick":
        lines += ["The quick profile measures three methods (each cold start compiles from "
                  "nothing, 5 to 40 s on 2 cores); the full profile measures every method.", ""]
    rows = []
    for entry in results["compile"]:
        if "error" in entry:
            rows.append((f"`{entry['workload']}`", f"{entry['m']:,}", "error", entry["error"],
                         "", ""))
            continue
        rows.append((f"`{entry['workload']}`", f"{entry['m']:,}", _s(entry["import_s"]),
                     _s(entry["first_s"]), _s(entry["second_s"]), _s(entry["compile_s"])))
    lines += _table(("method", "m", "import (s)", "first call (s)", "second call (s)",
                     "compile (s)"), rows)
    return lines + [""]


def _embeddings(results):
    lines = ["## Embeddings", "",
             "Each method's 2-D embedding, fastdr on top and the anchor below (with the "
             "Procrustes disparity between the two), coloured by the position along the "
             "manifold. LDA, NCA and MMC use six classes cut from that position.", ""]
    for entry in results["embeddings"]:
        name = f"embeddings_{entry['kind']}.png"
        if name in results["figures"]:
            lines += [f"![{entry['kind']} embeddings]({name})", ""]
        for method in entry["methods"]:
            for note in method["notes"]:
                lines.append(f"- {entry['kind']}, {method['name']}: {note}")
        lines.append("")
    return lines


def _experiments(results):
    lines = ["## Textbook experiments", ""]
    bayes = results["experiments"].get("nn_vs_bayes")
    if bayes:
        lines += ["### 1-NN error against the Bayes error", "",
                  f"Two {bayes['dimension']}-D unit Gaussians with equal priors and Bayes error "
                  f"R* = {bayes['bayes_error']}; 1-NN (fastdr) test error on "
                  f"{bayes['n_test']:,} test points, mean of {bayes['repeats']} draws of "
                  "training and test set per size. Cover and Hart: the limit lies between R* "
                "and 2R*(1-R*) "
                  "(so below twice the Bayes error); the exact limit E[2 eta(1-eta)] is "
                  "drawn too.", "", f"Result: {bayes['summary']}.", "",
                  "![1-NN vs Bayes](experiment_nn_vs_bayes.png)", ""]
    curse = results["experiments"].get("distance_concentration")
    if curse:
        lines += ["### The curse of dimensionality", "",
                  f"{curse['queries']} uniform queries against {curse['m']:,} uniform points "
                  "in [0,1]^d (fastdr.pairwise_distances): the nearest neighbour is barely "
                  "nearer than the farthest once d is large.", "",
                  f"Result: {curse['summary']}.", "",
                  "![distance concentration](experiment_distance_concentration.png)", ""]
    return lines


def write_markdown(results, path):
    """Write the report."""
    profile = results["profile"]
    lines = [
        f"# fastdr performance report ({profile} profile)", "",
        f"Created {results['created']} by `python -m bench.report --profile {profile}` in "
        f"{results['wall_time_s']:.0f} s. Raw numbers: [results.json](results.json).", "",
        "How to read it: every timing is a median after a warm-up call, fastdr and its "
        "anchors run back to back on the same input, so compare the **speed-up column** "
        "(a ratio within one run), not seconds across machines or runs. Each speed row "
        "carries an agreement figure; a row whose answer disagrees is marked **WRONG**.", "",
    ]
    if "speedup.png" in results["figures"]:
        lines += ["![speed-ups](speedup.png)", ""]
    lines += _machine(results)
    lines += _speed(results, profile)
    lines += _scaling(results)
    lines += _memory(results)
    lines += _compile(results)
    lines += _embeddings(results)
    lines += _experiments(results)
    if results["notes"]:
        lines += ["## Problems during this run", "", *[f"- {n}" for n in results["notes"]], ""]
    path.write_text("\n".join(lines) + "\n")
