"""The report's figures (matplotlib, Agg backend, PNG)."""

import math

FIGURE_PATTERNS = ("speedup.png", "scaling_*.png", "embeddings_*.png", "experiment_*.png")
COLOURS = {"fastdr": "tab:red", "sklearn": "tab:blue", "scipy": "tab:green",
           "faiss": "tab:purple", "metric-learn": "tab:orange"}


def _figure(*args, **kwargs):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(*args, **kwargs)


def _save(fig, path, dpi):
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


def _style(ax, xlabel, ylabel, title, legend=True):
    ax.set(xlabel=xlabel, ylabel=ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    if legend:
        ax.legend(fontsize=8)


def _scaling_axis(ax, curve, axis, title):
    for label, series in curve["series"].items():
        slope = series.get("slope")
        ax.loglog(series["x"], series["seconds"], "o-", color=COLOURS.get(label),
                  label=f"{label} (slope {slope:.2f})" if slope is not None else label)
    fixed = curve["fixed"]
    held = "" if fixed is None else (f" (d={fixed})" if axis == "m" else f" (m={fixed:,})")
    _style(ax, axis + held, "median time (s)", title, legend=bool(curve["series"]))


def scaling_figure(entries, path, overview=False):
    """Time against m and d, log-log, one row per workload; or (``overview``) time against m
    of every workload, one panel each. False when there is nothing to draw."""
    if overview:
        entries = [e for e in entries if e["vs_m"]["series"]]
        if not entries:
            return False
        rows = math.ceil(len(entries) / 4)
        fig, axes = _figure(rows, 4, figsize=(16, 3.2 * rows), squeeze=False)
        for ax, entry in zip(axes.flat, entries, strict=False):
            _scaling_axis(ax, entry["vs_m"], "m", entry["workload"])
        for ax in axes.flat[len(entries):]:
            ax.axis("off")
    else:
        fig, axes = _figure(len(entries), 2, figsize=(10, 3.4 * len(entries)), squeeze=False)
        for row, entry in enumerate(entries):
            for col, axis in enumerate("md"):
                _scaling_axis(axes[row, col], entry[f"vs_{axis}"], axis,
                              f"{entry['workload']}: time vs {axis}")
    _save(fig, path, 100 if overview else 90)
    return True


def speedup_figure(speed_rows, path):
    """Speed-up over each anchor at the speed-table sizes (log scale); False if none."""
    bars = [(f"{row['workload']} m={row['m']:,}\nvs {label}", ratio,
             all(a.get("ok", False) for a in row.get("agreement", {}).values()))
            for row in speed_rows for label, ratio in row.get("ratios", {}).items()]
    if not bars:
        return False
    fig, ax = _figure(figsize=(max(6, 0.7 * len(bars)), 4.5))
    ax.bar(range(len(bars)), [b[1] for b in bars],
           color=["tab:green" if b[2] else "tab:red" for b in bars])
    ax.axhline(1.0, color="k", lw=1)
    ax.set_yscale("log")
    ax.set_xticks(range(len(bars)), [b[0] for b in bars], rotation=70, fontsize=7)
    ax.set_ylabel("speed-up (anchor time / fastdr time)")
    ax.set_title("fastdr speed-up at this profile's sizes (red: answers disagree)")
    _save(fig, path, 110)
    return True


def embeddings_figure(entry, path):
    """One column per method; fastdr on top, the anchor below, coloured by roll position."""
    methods = entry["methods"]
    fig, axes = _figure(2, len(methods), figsize=(2.6 * len(methods), 5.4), squeeze=False)
    for col, method in enumerate(methods):
        for row, key in enumerate(("fastdr", "anchor")):
            ax, emb = axes[row, col], method[key]
            ax.set_xticks([])
            ax.set_yticks([])
            label = "fastdr" if key == "fastdr" else (method["anchor_label"] or "no anchor")
            if emb is None:
                why = "not available" if key == "fastdr" else "no library\nanchor"
                if key == "fastdr" and method["notes"] and "error" in method["notes"][0]:
                    why = "error"
                ax.text(0.5, 0.5, why, ha="center", va="center", fontsize=9,
                        transform=ax.transAxes)
            else:
                ax.scatter(emb[:, 0], emb[:, 1], c=entry["colour"], s=3, cmap="Spectral")
            title = f"{method['name']}\n{label}" if row == 0 else label
            if row == 1 and method["disparity"] is not None:
                title += f"\ndisparity {method['disparity']:.1e}"
            ax.set_title(title, fontsize=8)
    fig.suptitle(f"{entry['kind']} (m={entry['m']:,}), coloured by position along it",
                 fontsize=10)
    _save(fig, path, 100)


def bayes_figure(exp, path):
    fig, ax = _figure(figsize=(6, 4))
    ax.errorbar(exp["m"], exp["error_mean"], yerr=exp["error_std"], fmt="o-", color="tab:red",
                label="1-NN test error (fastdr)")
    for y, colour, style, label in (
            (exp["bayes_error"], "k", "-", "Bayes error R*"),
            (exp["cover_hart_bound"], "k", "--", "2R*(1-R*) (Cover-Hart)"),
            (2 * exp["bayes_error"], "grey", ":", "2R*"),
            (exp["asymptotic_nn_error"], "tab:blue", "-.", "exact asymptotic 1-NN error")):
        ax.axhline(y, color=colour, ls=style, label=label)
    ax.set_xscale("log")
    _style(ax, "training points m", "test error",
           f"1-NN error vs Bayes error ({exp['dimension']}-D Gaussians)")
    _save(fig, path, 110)


def curse_figure(exp, path):
    fig, (ax, right) = _figure(1, 2, figsize=(10, 4))
    ax.plot(exp["d"], exp["ratio_mean"], "o-", color="tab:red", label="mean")
    ax.fill_between(exp["d"], exp["ratio_p10"], exp["ratio_p90"], color="tab:red", alpha=0.2,
                    label="10-90% of queries")
    ax.axhline(1.0, color="k", lw=1)
    ax.set_xscale("log")
    ax.set_ylim(0, 1.05)
    _style(ax, "dimension d", "nearest / farthest distance", f"uniform [0,1]^d, m={exp['m']:,}")
    right.loglog(exp["d"], exp["contrast_mean"], "o-", color="tab:blue")
    slope = exp["contrast_slope"]
    _style(right, "dimension d", "", "relative contrast (far - near) / near"
           + (f", slope {slope:.2f} for d >= 10" if slope is not None else ""), legend=False)
    _save(fig, path, 110)


def draw_all(results, out):
    """Draw every figure the results allow; return their file names (relative to ``out``)."""
    names = []
    if speedup_figure([r for r in results["speed"] if r.get("status") == "ok"],
                      out / "speedup.png"):
        names.append("speedup.png")
    if scaling_figure(results["scaling"], out / "scaling_overview.png", overview=True):
        names.append("scaling_overview.png")
    by_area = {}
    for entry in results["scaling"]:
        by_area.setdefault(entry["area"], []).append(entry)
    for area, entries in by_area.items():
        # a headline-only workload (one size, no curve) has nothing to draw
        entries = [e for e in entries if e["vs_m"]["series"] or e["vs_d"]["series"]]
        if entries:
            scaling_figure(entries, out / f"scaling_{area}.png")
            names.append(f"scaling_{area}.png")
    for entry in results["embeddings"]:
        if any(m["fastdr"] is not None or m["anchor"] is not None for m in entry["methods"]):
            embeddings_figure(entry, out / f"embeddings_{entry['kind']}.png")
            names.append(f"embeddings_{entry['kind']}.png")
    for key, draw in (("nn_vs_bayes", bayes_figure), ("distance_concentration", curse_figure)):
        if key in results["experiments"]:
            draw(results["experiments"][key], out / f"experiment_{key}.png")
            names.append(f"experiment_{key}.png")
    return names
