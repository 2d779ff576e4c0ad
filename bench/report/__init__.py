"""The performance comparison report: ``python -m bench.report [--profile] [--out DIR]``.

Modules: ``machine`` (machine info), ``workloads`` (the registry), ``data`` (built-in data),
``timing`` (the runner), ``memory`` (peak RSS, in fresh processes), ``coldstart`` (compile
time with an empty numba cache), ``agreement`` (how close fastdr is to the anchors),
``embeddings``, ``experiments`` (textbook claims), ``plots``, ``markdown`` and ``build``.
"""
