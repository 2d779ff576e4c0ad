"""Distances in Python, before any kernel runs.

- :mod:`.metric`: metric resolution (names, parameters, learned metrics) into a kernel code
  and, for Mahalanobis metrics, a linear map applied once (the entry);
- :mod:`.norm_trick`: the set-up of the norm trick shared by every brute-force Euclidean route.
"""
