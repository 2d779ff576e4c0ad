"""The performance comparison report: ``python -m bench.report [--profile] [--out DIR]``."""
