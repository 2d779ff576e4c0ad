"""The performance comparison report: ``python -m bench.report [--profile] [--out DIR]``.

Modules: ``build`` (plans and runs the steps, timing through :mod:`bench.engine` on the
workloads of :mod:`bench.workloads`), ``machine`` (machine info), ``fresh`` (peak memory and
compile time, each in a fresh process), ``embeddings``, ``experiments`` (textbook claims),
``plots`` and ``markdown``.
"""
