"""Benchmark profiles (``--profile`` or ``FASTDR_BENCH_PROFILE``, default ``quick``): repeats,
budgets and experiment sizes; each workload's sizes live with the workload."""

import os
from dataclasses import dataclass

PROFILE_ENV = "FASTDR_BENCH_PROFILE"
DEFAULT_PROFILE = "quick"
PROFILE_NAMES = ("smoke", "quick", "full")


@dataclass(frozen=True)
class ProfileSettings:
    """What a profile spends: repeats as in :func:`bench.engine.measure`; per scaling point
    ``scaling_repeats`` calls within ``scaling_budget_s`` per implementation and workload;
    ``pytest_rounds`` suite rounds; cold compile of ``compile_only`` (None: all); memory of
    every m x m method if ``memory_all`` (else the first); embedding and experiment sizes."""

    name: str
    min_repeats: int
    max_repeats: int
    budget_s: float
    cap_s: float
    scaling_repeats: int
    scaling_budget_s: float
    pytest_rounds: int
    compile_only: tuple
    memory_all: bool
    embedding_m: int
    embedding_kinds: tuple
    bayes_m: tuple
    bayes_test: int
    bayes_repeats: int
    curse_m: int
    curse_queries: int
    curse_d: tuple


PROFILES = {
    "smoke": ProfileSettings(
        "smoke", min_repeats=1, max_repeats=1, budget_s=0.0, cap_s=5.0, scaling_repeats=0,
        scaling_budget_s=10.0, pytest_rounds=1, compile_only=("knn_kdtree",), memory_all=False,
        embedding_m=200, embedding_kinds=("swiss",), bayes_m=(20, 100, 400), bayes_test=500,
        bayes_repeats=1, curse_m=200, curse_queries=20, curse_d=(1, 10, 100)),
    "quick": ProfileSettings(
        "quick", min_repeats=3, max_repeats=7, budget_s=1.5, cap_s=12.0, scaling_repeats=3,
        scaling_budget_s=20.0, pytest_rounds=3,
        compile_only=("knn_f64", "classical_mds", "isomap"), memory_all=True, embedding_m=1000,
        embedding_kinds=("swiss", "s_curve"), bayes_m=(30, 100, 300, 1000, 3000, 10000, 30000),
        bayes_test=5000, bayes_repeats=4, curse_m=2000, curse_queries=200,
        curse_d=(1, 2, 3, 5, 10, 20, 50, 100, 300, 1000)),
    "full": ProfileSettings(
        "full", min_repeats=5, max_repeats=11, budget_s=20.0, cap_s=float("inf"),
        scaling_repeats=3, scaling_budget_s=float("inf"), pytest_rounds=5, compile_only=None,
        memory_all=True, embedding_m=3000, embedding_kinds=("swiss", "s_curve"),
        bayes_m=(30, 100, 300, 1000, 3000, 10000, 30000, 100000, 300000), bayes_test=20000,
        bayes_repeats=8, curse_m=10000, curse_queries=500,
        curse_d=(1, 2, 3, 5, 10, 20, 50, 100, 300, 1000, 3000, 10000)),
}


def resolve_profile(name=None):
    """The :class:`ProfileSettings` named (None: ``$FASTDR_BENCH_PROFILE`` or ``quick``)."""
    name = name or os.environ.get(PROFILE_ENV) or DEFAULT_PROFILE
    if name not in PROFILES:
        raise ValueError(
            f"Unknown benchmark profile {name!r}; expected one of {', '.join(PROFILE_NAMES)} "
            f"(from --profile or {PROFILE_ENV}).")
    return PROFILES[name]
