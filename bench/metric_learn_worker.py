"""A worker that runs metric-learn in its own Python environment (run as a script).

metric-learn 0.7 needs scikit-learn < 1.8, which cannot share an environment with the
scikit-learn that fastdr's report compares against, so :mod:`bench.external` starts
this file under a separate interpreter and talks to it over its standard input and output:
length-prefixed pickles of ``(command, payload)``. It imports only numpy and metric-learn.

Commands
--------
``("hello", None)``
    Answers ``{"metric_learn": version, "sklearn": version, "python": version}``.
``("load", (key, X, y))``
    Keeps the data under ``key`` (not timed by the caller).
``("fit", (key, class_name, params))``
    Fits ``metric_learn.<class_name>(**params)`` on the data under ``key`` and answers
    ``{"mahalanobis": M, "components": L, "n_iter": n or None, "fit_s": seconds}``.
``("quit", None)``
    Exits.
"""

import os
import pickle
import struct
import sys
import time
import warnings


def _read(stream):
    header = stream.read(8)
    if len(header) < 8:
        return None
    (size,) = struct.unpack("<Q", header)
    return pickle.loads(stream.read(size))


def _write(stream, obj):
    blob = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(blob)))
    stream.write(blob)
    stream.flush()


def _handle(command, payload, datasets):
    if command == "hello":
        import platform

        import metric_learn
        import sklearn

        return {"metric_learn": metric_learn.__version__, "sklearn": sklearn.__version__,
                "python": platform.python_version()}
    if command == "load":
        key, X, y = payload
        datasets[key] = (X, y)
        return True
    if command == "fit":
        import metric_learn

        key, class_name, params = payload
        X, y = datasets[key]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            model = getattr(metric_learn, class_name)(**params).fit(X, y)
            elapsed = time.perf_counter() - start
        return {"mahalanobis": model.get_mahalanobis_matrix(), "components": model.components_,
                "n_iter": getattr(model, "n_iter_", None), "fit_s": elapsed}
    raise ValueError(f"unknown command {command!r}")


def main():
    stdin = sys.stdin.buffer
    # the protocol gets its own copy of fd 1; fd 1 itself (and Python's stdout) then point
    # at stderr, so stray output, from Python or from compiled code, cannot corrupt it
    stdout = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    datasets = {}
    while True:
        message = _read(stdin)
        if message is None or message[0] == "quit":
            return 0
        try:
            reply = ("ok", _handle(message[0], message[1], datasets))
        except Exception as exc:  # noqa: BLE001 - reported to the caller, which raises
            reply = ("error", f"{type(exc).__name__}: {exc}")
        _write(stdout, reply)


if __name__ == "__main__":
    sys.exit(main())
