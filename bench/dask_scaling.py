"""Strong scaling of ``fastdr.dask`` on a ``LocalCluster``: 1 worker against 2, and the cost
model of the README ("Beyond one machine") checked against the measured times.

Run from the repository root (needs the ``dask`` extra)::

    python -m bench.dask_scaling                 # k-NN and landmark Isomap, m=20,000, d=50
    python -m bench.dask_scaling --m 40000 --repeats 5

Each worker has one thread (``threads_per_worker=1``), so W workers have W cores. For each
workload and each W, the run is timed ``repeats`` times after one warm-up run (which compiles
the kernels in the worker processes); the median counts. The strong-scaling efficiency is
``T(1) / (2 T(2))``; the target on a 2-core machine is at least 70%.

The cost-model check splits the 1-worker time into the work done inside tasks on the worker
(the sum of the task durations of Dask's task stream) and the rest (client-side steps,
scheduling and transfers), and predicts the 2-worker time as
``rest + worker_work / 2 * (1 + imbalance)``, where the imbalance is what the task graph's
block count leaves idle: with n tasks of equal size on W workers the last round is
``ceil(n / W) / (n / W)`` of an even share. The prediction is printed beside the measurement.
"""

import argparse
import json
import math
import statistics
import sys
import time

import numpy as np


def _tasks_seconds(client, start):
    """Sum of the durations of the compute parts of tasks that began after ``start``."""
    total, count = 0.0, 0
    for task in client.get_task_stream(start=start):
        for part in task.get("startstops", ()):
            if part.get("action") == "compute":
                total += part["stop"] - part["start"]
                count += 1
    return total, count


def _knn(X, k):
    import fastdr.dask as fdd

    def run():
        dist, ind = fdd.NearestNeighbors(n_neighbors=k, broadcast_index=False).fit(X).kneighbors()
        return ind.compute()

    return run


def _isomap(X, k, n_landmarks):
    import fastdr.dask as fdd

    def run():
        est = fdd.Isomap(n_neighbors=k, n_landmarks=n_landmarks, random_state=0,
                         on_disconnected="raise")
        return est.fit(X).embedding_

    return run


def measure(workers, make_runs, m, d, chunks, repeats):
    """Time every workload on a fresh ``LocalCluster`` of ``workers`` one-thread workers."""
    import dask.array as da
    from distributed import Client, LocalCluster

    rows = []
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        rng = np.random.default_rng(0)
        X = da.from_array(rng.standard_normal((m, d)), chunks=(chunks, d)).persist()
        n_blocks = X.numblocks[0]
        for name, make_run in make_runs:
            run = make_run(X)
            t0 = time.perf_counter()
            run()  # warm-up: compiles the kernels in every worker process
            compile_s = time.perf_counter() - t0
            times, work = [], []
            for _ in range(repeats):
                start = time.time()
                t0 = time.perf_counter()
                result = run()
                times.append(time.perf_counter() - t0)
                work.append(_tasks_seconds(client, start)[0])
            rows.append({"workload": name, "workers": workers, "median_s": statistics.median(
                times), "times_s": times, "task_work_s": statistics.median(work),
                "n_blocks": n_blocks, "compile_s": compile_s,
                "checksum": float(np.asarray(result, dtype=np.float64).sum())})
    return rows


def predict_two_workers(one, n_tasks):
    """The cost model's 2-worker time from the 1-worker run (see the module docstring)."""
    rest = max(one["median_s"] - one["task_work_s"], 0.0)
    imbalance = math.ceil(n_tasks / 2) / (n_tasks / 2)
    return rest + one["task_work_s"] / 2 * imbalance


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--m", type=int, default=20_000)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--chunks", type=int, default=2_500, help="rows per block")
    parser.add_argument("--landmarks", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None, help="also write the rows to this file")
    args = parser.parse_args(argv)

    make_runs = [("knn_pairs", lambda X: _knn(X, args.k)),
                 ("landmark_isomap", lambda X: _isomap(X, args.k, args.landmarks))]
    rows = []
    for workers in (1, 2):
        rows += measure(workers, make_runs, args.m, args.d, args.chunks, args.repeats)
    by = {(r["workload"], r["workers"]): r for r in rows}
    n_blocks = rows[0]["n_blocks"]
    print(f"fastdr.dask strong scaling, LocalCluster of 1-thread workers, m={args.m:,}, "
          f"d={args.d}, float64, {n_blocks} row blocks, median of {args.repeats}")
    print("| workload | T(1 worker) s | T(2 workers) s | efficiency T1/(2 T2) | "
          "model T(2) s | model error | same result |")
    print("|---|---|---|---|---|---|---|")
    summary = []
    for name, _ in make_runs:
        one, two = by[(name, 1)], by[(name, 2)]
        # k-NN pairs: n_blocks^2 pair tasks; Isomap: the Dijkstra groups dominate the work
        n_tasks = n_blocks * n_blocks if name == "knn_pairs" else max(
            n_blocks, math.ceil(args.landmarks / 16))
        model = predict_two_workers(one, n_tasks)
        efficiency = one["median_s"] / (2 * two["median_s"])
        error = (model - two["median_s"]) / two["median_s"]
        same = math.isclose(one["checksum"], two["checksum"], rel_tol=1e-9, abs_tol=1e-9)
        summary.append({"workload": name, "efficiency": efficiency, "model_s": model,
                        "model_error": error, "same_result": same})
        print(f"| {name} | {one['median_s']:.2f} | {two['median_s']:.2f} | {efficiency:.0%} | "
              f"{model:.2f} | {error:+.0%} | {same} |")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"args": vars(args), "rows": rows, "summary": summary}, handle, indent=1)
    return 0 if all(s["same_result"] for s in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
