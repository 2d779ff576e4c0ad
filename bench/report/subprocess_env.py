"""Environment for the report's child processes: ``bench`` importable, same interpreter."""

import os
from pathlib import Path


def bench_env(**overrides):
    """A copy of os.environ with the repository root on PYTHONPATH, plus ``overrides``."""
    env = dict(os.environ)
    parts = [str(bench_env.repo_root)]
    if env.get("PYTHONPATH"):
        parts.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env.update({key: str(value) for key, value in overrides.items()})
    return env


bench_env.repo_root = Path(__file__).resolve().parents[2]
