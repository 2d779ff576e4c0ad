"""Runs metric-learn in its own Python environment (started by :mod:`bench.external`).

Reads and answers length-prefixed pickles on stdin/stdout; imports only numpy and metric-learn.
Commands: ``("hello", None)`` -> versions; ``("load", (key, X, y))`` keeps the data;
``("fit", (key, class_name, params))`` -> ``{"mahalanobis", "components", "n_iter",
"fit_s"}``; ``("quit", None)``. An exception is answered ``("error", text)``.
"""

import os
import pickle
import struct
import sys
import time
import warnings


def read_message(stream):
    """The next message, or None at the end of the stream."""
    header = stream.read(8)
    if len(header) < 8:
        return None
    return pickle.loads(stream.read(struct.unpack("<Q", header)[0]))


def write_message(stream, obj):
    """Write one message."""
    blob = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(blob)) + blob)
    stream.flush()


def _handle(command, payload, datasets):
    import metric_learn

    if command == "hello":
        import platform

        import sklearn

        return {"metric_learn": metric_learn.__version__, "sklearn": sklearn.__version__,
                "python": platform.python_version()}
    if command == "load":
        datasets[payload[0]] = payload[1:]
        return True
    if command == "fit":
        key, class_name, params = payload
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            model = getattr(metric_learn, class_name)(**params).fit(*datasets[key])
            elapsed = time.perf_counter() - start
        return {"mahalanobis": model.get_mahalanobis_matrix(), "components": model.components_,
                "n_iter": getattr(model, "n_iter_", None), "fit_s": elapsed}
    raise ValueError(f"unknown command {command!r}")


def main():
    # the protocol gets its own copy of fd 1; fd 1 and sys.stdout then point at stderr, so
    # stray output from Python or compiled code cannot corrupt it
    stdout = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    datasets = {}
    while (message := read_message(sys.stdin.buffer)) is not None and message[0] != "quit":
        try:
            reply = ("ok", _handle(*message, datasets))
        except Exception as exc:  # noqa: BLE001 - reported to the caller, which raises
            reply = ("error", f"{type(exc).__name__}: {exc}")
        write_message(stdout, reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
