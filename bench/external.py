"""metric-learn, the MMC anchor, from a separate Python environment.

metric-learn 0.7 needs scikit-learn < 1.8 while the report compares against a newer
scikit-learn, so when ``metric_learn`` cannot be imported here the anchor runs in a worker
process (:mod:`bench.metric_learn_worker`) under another interpreter:

* ``$FASTDR_METRIC_LEARN_PYTHON``, if set: a Python that can import metric_learn (``off``
  disables the separate environment);
* else the environment this module creates on request, ``$FASTDR_CACHE_DIR`` (default
  ``~/.cache/fastdr``) ``/metric-learn-0.7``, with ``pip install "scikit-learn<1.8"
  metric-learn==0.7.0`` (about a minute, once; ``python -m bench.report`` does it unless
  given ``--metric-learn-env off``).

The worker receives each input once, before timing, and the timed call is one round trip
of a few hundred bytes around the fit, so the anchor is timed as if it ran here.
"""

import atexit
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path

PYTHON_ENV = "FASTDR_METRIC_LEARN_PYTHON"
REQUIREMENTS = ("scikit-learn<1.8", "metric-learn==0.7.0")
_WORKER_FILE = Path(__file__).with_name("metric_learn_worker.py")
_LOCK = threading.Lock()
_STATE = {"worker": None, "reason": None, "checked": False}


def venv_dir():
    """Where the separate environment lives (created on request)."""
    root = os.environ.get("FASTDR_CACHE_DIR") or os.path.join(Path.home(), ".cache", "fastdr")
    return Path(root) / "metric-learn-0.7"


def _venv_python(root):
    scripts = "Scripts" if os.name == "nt" else "bin"
    return root / scripts / ("python.exe" if os.name == "nt" else "python")


def _clean_env(pythonpath=None):
    """This environment without ``PYTHONPATH``: the other Python must not see our packages."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    return env


def _works(python):
    try:
        done = subprocess.run([str(python), "-c", "import metric_learn"], capture_output=True,
                              timeout=120, env=_clean_env())
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def create_env(log=sys.stderr):
    """Create the separate environment; return its Python, or raise RuntimeError."""
    root = venv_dir()
    python = _venv_python(root)
    print(f"creating a Python environment for metric-learn in {root} (once; about a minute)",
          file=log, flush=True)
    steps = ([sys.executable, "-m", "venv", str(root)],
             [str(python), "-m", "pip", "install", "--quiet", *REQUIREMENTS])
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, env=_clean_env())
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(step[:4])} ... failed: "
                               f"{(done.stderr or done.stdout).strip()[-300:]}")
    if not _works(python):
        raise RuntimeError(f"{python} cannot import metric_learn after installing it")
    return python


def find_python(create=False):
    """A Python that imports metric_learn, or ``(None, reason)``.

    Parameters
    ----------
    create : bool
        Create the environment when it is missing.

    Returns
    -------
    python : str or None
    reason : str
    """
    given = os.environ.get(PYTHON_ENV)
    if given == "off":
        return None, f"${PYTHON_ENV}=off (the separate environment is not used)"
    if given:
        if _works(given):
            return given, ""
        return None, f"${PYTHON_ENV}={given} cannot import metric_learn"
    python = _venv_python(venv_dir())
    if python.exists() and _works(python):
        return str(python), ""
    if not create:
        return None, (f"no environment with metric-learn (set ${PYTHON_ENV}, or run "
                      "python -m bench.report, which creates one)")
    try:
        return str(create_env()), ""
    except RuntimeError as exc:
        return None, f"could not create the metric-learn environment: {exc}"


class Worker:
    """A running :mod:`bench.metric_learn_worker` under another Python.

    Parameters
    ----------
    python : str
        The interpreter (one that imports metric_learn).
    pythonpath : str or None
        ``PYTHONPATH`` for the worker (tests point it at a stand-in metric_learn); the
        caller's own ``PYTHONPATH`` is never passed on.
    """

    def __init__(self, python, pythonpath=None):
        from .metric_learn_worker import _read, _write

        self._read, self._write = _read, _write
        self.process = subprocess.Popen([python, str(_WORKER_FILE)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, env=_clean_env(pythonpath))
        self.loaded = set()
        self.versions = self.call("hello", None)

    def call(self, command, payload):
        try:
            self._write(self.process.stdin, (command, payload))
            reply = self._read(self.process.stdout)
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            raise RuntimeError(f"the metric-learn worker failed: {exc!r}") from exc
        if reply is None:
            raise RuntimeError("the metric-learn worker exited")
        status, value = reply
        if status != "ok":
            raise RuntimeError(f"metric-learn worker: {value}")
        return value

    def load(self, key, X, y):
        if key not in self.loaded:
            self.call("load", (key, X, y))
            self.loaded.add(key)

    def close(self):
        if self.process.poll() is None:
            try:
                self._write(self.process.stdin, ("quit", None))
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()


def worker():
    """The shared worker, started on first use; ``(None, reason)`` when unavailable.

    Never creates the environment (:func:`find_python` with ``create=True`` does).
    """
    with _LOCK:
        if _STATE["worker"] is None and not _STATE["checked"]:
            python, reason = find_python()
            _STATE["checked"] = True
            if python is not None:
                try:
                    _STATE["worker"] = Worker(python)
                    atexit.register(_STATE["worker"].close)
                except (OSError, RuntimeError) as exc:
                    reason = f"the metric-learn worker did not start: {exc}"
            _STATE["reason"] = reason
        return _STATE["worker"], _STATE["reason"] or ""


def running_worker():
    """The shared worker if something in this process started it, else None (starts nothing)."""
    return _STATE["worker"]


class FittedMetric:
    """What the worker sends back, with the two methods the report's checks use."""

    def __init__(self, reply):
        self.components_ = reply["components"]
        self.n_iter_ = reply["n_iter"]
        self.fit_s = reply["fit_s"]
        self._mahalanobis = reply["mahalanobis"]

    def get_mahalanobis_matrix(self):
        return self._mahalanobis
