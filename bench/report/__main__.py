"""``python -m bench.report [--profile smoke|quick|full] [--out DIR] [--only NAMES]``."""

import argparse
import sys

from .profiles import PROFILE_ENV, PROFILE_NAMES


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m bench.report",
        description="Run fastdr's benchmarks against scikit-learn, SciPy, faiss and "
                    "metric-learn and write DIR/report.md, PNG figures and results.json.")
    parser.add_argument("--profile", choices=PROFILE_NAMES, default=None,
                        help=f"sizes and repeats (default: ${PROFILE_ENV} or quick)")
    parser.add_argument("--out", default="report", help="output directory (default: report)")
    parser.add_argument("--only", default=None,
                        help="comma-separated workload names to measure (default: all)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)
    from .build import build_report
    from .profiles import resolve_profile

    try:
        resolve_profile(args.profile)
    except ValueError as exc:  # a bad FASTDR_BENCH_PROFILE value
        parser.error(str(exc))

    only = [name.strip() for name in args.only.split(",")] if args.only else None
    if only:
        from .workloads import BY_NAME

        unknown = [name for name in only if name not in BY_NAME]
        if unknown:
            parser.error(f"unknown workload(s) {', '.join(unknown)}; choose from "
                         f"{', '.join(BY_NAME)}")
    results = build_report(args.profile, args.out, only=only, progress=not args.no_progress)
    print(f"wrote {args.out}/report.md ({results['profile']} profile, "
          f"{results['wall_time_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
