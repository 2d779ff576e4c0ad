"""``python -m fastdr``: tasks for a machine rather than a script.

- ``python -m fastdr warmup``: compile the common kernels now (for container images and
  services, so that no user request pays for compilation), one line per step, and say
  where numba cached them;
- ``python -m fastdr show-versions``: the versions and machine facts a bug report needs.
"""

import argparse
import sys


def _warmup():
    import numba

    from fastdr._runtime.warmup import _STEPS, warmup

    cache = numba.config.CACHE_DIR or "__pycache__ folders beside fastdr's modules"
    print(f"fastdr warmup: compiling {len(_STEPS)} groups of kernels into {cache} "
          "(a minute or more the first time; seconds once cached)", flush=True)
    report = warmup(verbose=True)
    print(f"fastdr warmup: done in {sum(report.values()):.1f} s; later processes load the "
          f"kernels from {cache} (set NUMBA_CACHE_DIR to move it)")
    return 0


def _show_versions():
    from fastdr._runtime.versions import show_versions

    show_versions()
    return 0


def main(argv=None):
    """Run ``python -m fastdr <task>``; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m fastdr", description=__doc__.split("\n")[0])
    tasks = parser.add_subparsers(dest="task", required=True)
    tasks.add_parser("warmup", help="compile the common kernels ahead of time")
    tasks.add_parser("show-versions", help="print versions for a bug report")
    args = parser.parse_args(argv)
    return {"warmup": _warmup, "show-versions": _show_versions}[args.task]()


if __name__ == "__main__":
    sys.exit(main())
