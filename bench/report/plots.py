"""The report's figures (matplotlib, Agg backend, PNG)."""

import math

FIGURE_PATTERNS = ("speedup.png", "scaling_*.png", "embeddings_*.png", "experiment_*.png")

COLOURS = {"fastdr": "tab:red", "sklearn": "tab:blue", "scipy": "tab:green",
           "faiss": "tab:purple", "metric-learn": "tab:orange"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _scaling_axis(ax, curve, axis):
    for label, series in curve["series"].items():
        slope = series.get("slope")
        name = f"{label} (slope {slope:.2f})" if slope is not None else label
        ax.loglog(series["x"], series["seconds"], "o-", color=COLOURS.get(label),
                  label=name)
    ax.set_xlabel(axis + (f" (d={curve['fixed']})" if axis == "m" else
                          f" (m={curve['fixed']:,})"))
    ax.set_ylabel("median time (s)")
    ax.grid(True, which="both", alpha=0.3)
    if curve["series"]:
        ax.legend(fontsize=8)


def scaling_figure(entries, path):
    """Time against m and against d, log-log, fastdr and anchors on the same axes; one row
    per workload of an area."""
    plt = _pyplot()
    fig, axes = plt.subplots(len(entries), 2, figsize=(10, 3.4 * len(entries)), squeeze=False)
    for row, entry in enumerate(entries):
        _scaling_axis(axes[row, 0], entry["vs_m"], "m")
        _scaling_axis(axes[row, 1], entry["vs_d"], "d")
        axes[row, 0].set_title(f"{entry['workload']}: time vs m", fontsize=9)
        axes[row, 1].set_title(f"{entry['workload']}: time vs d", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def scaling_overview(entries, path):
    """Time against m for every workload, one panel each."""
    entries = [e for e in entries if e["vs_m"]["series"]]
    if not entries:
        return False
    plt = _pyplot()
    cols = 4
    rows = math.ceil(len(entries) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows), squeeze=False)
    for ax, entry in zip(axes.flat, entries, strict=False):
        _scaling_axis(ax, entry["vs_m"], "m")
        ax.set_title(entry["workload"], fontsize=10)
    for ax in axes.flat[len(entries):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def speedup_figure(speed_rows, path):
    """Speed-up of fastdr over each anchor at the speed-table sizes (log scale)."""
    bars = []
    for row in speed_rows:
        for label, ratio in row.get("ratios", {}).items():
            ok = all(a.get("ok", False) for a in row.get("agreement", {}).values())
            bars.append((f"{row['workload']} m={row['m']:,}\nvs {label}", ratio, ok))
    if not bars:
        return False
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(bars)), 4.5))
    ax.bar(range(len(bars)), [b[1] for b in bars],
           color=["tab:green" if b[2] else "tab:red" for b in bars])
    ax.axhline(1.0, color="k", lw=1)
    ax.set_yscale("log")
    ax.set_xticks(range(len(bars)), [b[0] for b in bars], rotation=70, fontsize=7)
    ax.set_ylabel("speed-up (anchor time / fastdr time)")
    ax.set_title("fastdr speed-up at this profile's sizes (red: answers disagree)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def embeddings_figure(entry, path):
    """One column per method; fastdr on top, the anchor below, coloured by roll position."""
    methods = entry["methods"]
    plt = _pyplot()
    fig, axes = plt.subplots(2, len(methods), figsize=(2.6 * len(methods), 5.4), squeeze=False)
    for col, method in enumerate(methods):
        for row, key in enumerate(("fastdr", "anchor")):
            ax = axes[row, col]
            ax.set_xticks([])
            ax.set_yticks([])
            emb = method[key]
            label = "fastdr" if key == "fastdr" else (method["anchor_label"] or "no anchor")
            if emb is None:
                why = "not available" if key == "fastdr" else "no library\nanchor"
                if key == "fastdr" and method["notes"]:
                    why = "error" if "error" in method["notes"][0] else "not available"
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
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def bayes_figure(exp, path):
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.errorbar(exp["m"], exp["error_mean"], yerr=exp["error_std"], fmt="o-", color="tab:red",
                label="1-NN test error (fastdr)")
    ax.axhline(exp["bayes_error"], color="k", ls="-", label="Bayes error R*")
    ax.axhline(exp["cover_hart_bound"], color="k", ls="--", label="2R*(1-R*) (Cover-Hart)")
    ax.axhline(2 * exp["bayes_error"], color="grey", ls=":", label="2R*")
    ax.axhline(exp["asymptotic_nn_error"], color="tab:blue", ls="-.",
               label="exact asymptotic 1-NN error")
    ax.set_xscale("log")
    ax.set_xlabel("training points m")
    ax.set_ylabel("test error")
    ax.set_title(f"1-NN error vs Bayes error ({exp['dimension']}-D Gaussians)", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def curse_figure(exp, path):
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    ax = axes[0]
    ax.plot(exp["d"], exp["ratio_mean"], "o-", color="tab:red", label="mean")
    ax.fill_between(exp["d"], exp["ratio_p10"], exp["ratio_p90"], color="tab:red", alpha=0.2,
                    label="10-90% of queries")
    ax.axhline(1.0, color="k", lw=1)
    ax.set_xscale("log")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("dimension d")
    ax.set_ylabel("nearest / farthest distance")
    ax.set_title(f"uniform [0,1]^d, m={exp['m']:,}", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax = axes[1]
    ax.loglog(exp["d"], exp["contrast_mean"], "o-", color="tab:blue")
    slope = exp["contrast_slope"]
    ax.set_title("relative contrast (far - near) / near"
                 + (f", slope {slope:.2f} for d >= 10" if slope is not None else ""),
                 fontsize=10)
    ax.set_xlabel("dimension d")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def draw_all(results, out):
    """Draw every figure the results allow; return their file names (relative to ``out``)."""
    names = []
    if speedup_figure([r for r in results["speed"] if r.get("status") == "ok"],
                      out / "speedup.png"):
        names.append("speedup.png")
    if scaling_overview(results["scaling"], out / "scaling_overview.png"):
        names.append("scaling_overview.png")
    by_area = {}
    for entry in results["scaling"]:
        by_area.setdefault(entry["area"], []).append(entry)
    for area, entries in by_area.items():
        name = f"scaling_{area}.png"
        scaling_figure(entries, out / name)
        names.append(name)
    for entry in results["embeddings"]:
        if any(m["fastdr"] is not None or m["anchor"] is not None for m in entry["methods"]):
            name = f"embeddings_{entry['kind']}.png"
            embeddings_figure(entry, out / name)
            names.append(name)
    experiments = results["experiments"]
    if "nn_vs_bayes" in experiments:
        bayes_figure(experiments["nn_vs_bayes"], out / "experiment_nn_vs_bayes.png")
        names.append("experiment_nn_vs_bayes.png")
    if "distance_concentration" in experiments:
        curse_figure(experiments["distance_concentration"],
                     out / "experiment_distance_concentration.png")
        names.append("experiment_distance_concentration.png")
    return names

