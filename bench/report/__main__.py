"""``python -m bench.report [--profile smoke|quick|full] [--out DIR] [--only NAMES]``."""

import argparse
import importlib.util
import os
import shlex
import sys

from bench import external
from bench.profiles import PROFILE_ENV, PROFILE_NAMES, resolve_profile
from bench.workloads import BY_NAME, METRIC_LEARN_ANCHORED


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m bench.report",
        description="Run fastdr's benchmarks against scikit-learn, SciPy, faiss and "
                    "metric-learn and write DIR/report.md, DIR/report.html (self-contained), "
                    "PNG figures and results.json.")
    parser.add_argument("--profile", choices=PROFILE_NAMES, default=None,
                        help=f"sizes and repeats (default: ${PROFILE_ENV} or quick)")
    parser.add_argument("--out", default="report", help="output directory (default: report)")
    parser.add_argument("--only", default=None,
                        help="comma-separated workload names to measure (default: all)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--metric-learn-env", choices=("auto", "off"), default="auto",
                        help="auto (default): without metric_learn here, run metric-learn's "
                             "anchors in an environment created once under ~/.cache/fastdr "
                             "(metric-learn 0.7 needs scikit-learn < 1.8); off: only if it "
                             "imports here")
    args = parser.parse_args(argv)
    try:
        resolve_profile(args.profile)
    except ValueError as exc:  # a bad FASTDR_BENCH_PROFILE value
        parser.error(str(exc))
    only = [name.strip() for name in args.only.split(",")] if args.only else None
    unknown = [name for name in only or () if name not in BY_NAME]
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(unknown)}; choose from "
                     f"{', '.join(BY_NAME)}")
    if args.metric_learn_env == "off":
        os.environ[external.PYTHON_ENV] = "off"
    elif ((only is None or METRIC_LEARN_ANCHORED & set(only))
          and importlib.util.find_spec("metric_learn") is None):
        # find or create the environment before timing starts; child processes reuse it
        python, reason = external.find_python(create=True)
        if python is None:
            print(f"metric-learn anchor skipped: {reason}", file=sys.stderr)
        else:
            os.environ[external.PYTHON_ENV] = python
    from .build import build_report

    command = shlex.join(["python", "-m", "bench.report",
                          *(sys.argv[1:] if argv is None else argv)])
    results = build_report(args.profile, args.out, only=only, progress=not args.no_progress,
                           command=command)
    print(f"wrote {args.out}/report.md and report.html ({results['profile']} profile, "
          f"{results['wall_time_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
