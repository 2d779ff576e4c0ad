"""What a kernel call needs from the process around it.

- :mod:`.threads`: ``n_jobs`` -> numba's thread count for one call, the launch lock and fork
  handling (the entry every estimator uses: :func:`.threads.parallel_section`);
- :mod:`.blas`: BLAS thread control while numba's threads call BLAS;
- :mod:`.progress`: verbose stage lines, progress bars and iteration logs;
- :mod:`.warmup`: ``fastdr.warmup()``, compiling the common kernels ahead of time.
"""
