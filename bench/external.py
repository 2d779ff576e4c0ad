"""metric-learn, the MMC and LMNN anchors, from a separate Python environment.

metric-learn 0.7 needs scikit-learn < 1.8, so when ``metric_learn`` does not import here the
anchor runs in :mod:`bench.metric_learn_worker` under ``$FASTDR_METRIC_LEARN_PYTHON`` (``off``
disables it) or under the environment :func:`create_env` makes in ``$FASTDR_CACHE_DIR``
(default ``~/.cache/fastdr``) ``/metric-learn-0.7``. The worker gets each input before timing;
the timed call is one small round trip around the fit.
"""

import atexit
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path

from .metric_learn_worker import read_message, write_message

PYTHON_ENV = "FASTDR_METRIC_LEARN_PYTHON"
REQUIREMENTS = ("scikit-learn<1.8", "metric-learn==0.7.0")
_LOCK = threading.Lock()
_STATE = {"worker": None, "reason": None, "checked": False}


def venv_dir():
    """Where the separate environment lives (created on request)."""
    root = os.environ.get("FASTDR_CACHE_DIR") or os.path.join(Path.home(), ".cache", "fastdr")
    return Path(root) / "metric-learn-0.7"


def _venv_python(root):
    return root / "Scripts" / "python.exe" if os.name == "nt" else root / "bin" / "python"


def _clean_env(pythonpath=None):
    """This environment without our ``PYTHONPATH`` (the other Python must not see it)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return {**env, "PYTHONPATH": str(pythonpath)} if pythonpath else env


def _works(python):
    try:
        return subprocess.run([str(python), "-c", "import metric_learn"], capture_output=True,
                              timeout=120, env=_clean_env()).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def create_env(log=sys.stderr):
    """Create the separate environment (about a minute, once); return its Python or raise
    RuntimeError."""
    root = venv_dir()
    python = _venv_python(root)
    print(f"creating a Python environment for metric-learn in {root} (once; about a minute)",
          file=log, flush=True)
    for step in ([sys.executable, "-m", "venv", str(root)],
                 [str(python), "-m", "pip", "install", "--quiet", *REQUIREMENTS]):
        done = subprocess.run(step, capture_output=True, text=True, env=_clean_env())
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(step[:4])} ... failed: "
                               f"{(done.stderr or done.stdout).strip()[-300:]}")
    if not _works(python):
        raise RuntimeError(f"{python} cannot import metric_learn after installing it")
    return python


def find_python(create=False):
    """``(python, "")`` for a Python that imports metric_learn, else ``(None, reason)``;
    ``create`` makes the environment when it is missing."""
    given = os.environ.get(PYTHON_ENV)
    if given == "off":
        return None, f"${PYTHON_ENV}=off (the separate environment is not used)"
    if given:
        return (given, "") if _works(given) else (
            None, f"${PYTHON_ENV}={given} cannot import metric_learn")
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
    """A running :mod:`bench.metric_learn_worker` under ``python``, with ``PYTHONPATH`` set
    to ``pythonpath`` only (tests point it at a stand-in metric_learn)."""

    def __init__(self, python, pythonpath=None):
        worker_file = Path(__file__).with_name("metric_learn_worker.py")
        self.process = subprocess.Popen([python, str(worker_file)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, env=_clean_env(pythonpath))
        self.loaded = set()
        self.versions = self.call("hello", None)

    def call(self, command, payload):
        try:
            write_message(self.process.stdin, (command, payload))
            reply = read_message(self.process.stdout)
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            raise RuntimeError(f"the metric-learn worker failed: {exc!r}") from exc
        if reply is None:
            raise RuntimeError("the metric-learn worker exited")
        if reply[0] != "ok":
            raise RuntimeError(f"metric-learn worker: {reply[1]}")
        return reply[1]

    def load(self, key, X, y):
        if key not in self.loaded:
            self.call("load", (key, X, y))
            self.loaded.add(key)

    def close(self):
        if self.process.poll() is None:
            try:
                write_message(self.process.stdin, ("quit", None))
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()


def worker():
    """The shared worker, started on first use, or ``(None, reason)``; never creates the
    environment."""
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
    """The shared worker if something in this process started it, else None."""
    return _STATE["worker"]


class FittedMetric:
    """The worker's reply, with the two methods the report's checks use."""

    def __init__(self, reply):
        self.components_, self.n_iter_ = reply["components"], reply["n_iter"]
        self.fit_s, self._mahalanobis = reply["fit_s"], reply["mahalanobis"]

    def get_mahalanobis_matrix(self):
        return self._mahalanobis
