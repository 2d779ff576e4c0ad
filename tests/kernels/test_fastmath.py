"""Fast-math discipline: every numba function in fastdr compiles either without fast-math or
with exactly the one flag set ``fastdr._config.FASTMATH`` (which keeps IEEE inf and NaN), save
the listed exceptions. Read from each dispatcher's ``targetoptions``: nothing compiles."""

import importlib
import pathlib
import re

import numba
import pytest
from numba.extending import is_jitted

import fastdr
from fastdr._config import FASTMATH

#: Functions allowed another fast-math set, each with its reason.
EXCEPTIONS = {
    # reassociation alone, so that LLVM vectorises the float64 sum, without the NaN, inf or
    # contraction assumptions of FASTMATH: it is the exact distance every route recomputes,
    # bit-symmetric in its rows
    "fastdr._kernels.distances.euclidean.sqdist_exact": {"reassoc"},
}

#: a line that makes the next function a numba dispatcher, or a serial twin of one
#: (:func:`fastdr._kernels.twins.serial_twin` compiles a kernel's body a second time)
_DECORATOR = re.compile(r"^\s*@(numba\.)?(njit|jit|njit_no_runtime)\b|^\w+ = serial_twin\(",
                        re.MULTILINE)

_ROOT = pathlib.Path(fastdr.__file__).parent


def _numba_modules():
    """``{module name: number of numba decorators and serial twins in its source}`` over
    fastdr, for every module that has one."""
    found = {}
    for path in sorted(_ROOT.rglob("*.py")):
        count = len(_DECORATOR.findall(path.read_text()))
        if count:
            parts = path.relative_to(_ROOT.parent).with_suffix("").parts
            found[".".join(parts).removesuffix(".__init__")] = count
    return found


def _dispatchers(module_name):
    module = importlib.import_module(module_name)
    seen = {}
    for obj in vars(module).values():
        if is_jitted(obj) and obj.py_func.__module__ == module_name:
            seen[id(obj)] = obj
    return list(seen.values())


def test_the_walk_finds_the_kernels():
    modules = _numba_modules()
    assert "fastdr._kernels.heap" in modules
    assert "fastdr._kernels.nndescent.rounds" in modules
    kernels = [name for name in modules if name.startswith("fastdr._kernels.")]
    assert len(kernels) >= 25, kernels


@pytest.mark.skipif(numba.config.DISABLE_JIT,
                    reason="njit returns plain functions when NUMBA_DISABLE_JIT=1")
def test_every_dispatcher_uses_no_fastmath_or_the_one_flag_set():
    wrong, missing = [], []
    for module_name, n_decorated in _numba_modules().items():
        dispatchers = _dispatchers(module_name)
        if len(dispatchers) != n_decorated:  # a decorated function the walk cannot see
            missing.append(f"{module_name}: {n_decorated} decorated, "
                           f"{len(dispatchers)} dispatchers found")
        for dispatcher in dispatchers:
            name = f"{module_name}.{dispatcher.py_func.__name__}"
            flags = dispatcher.targetoptions.get("fastmath", False)
            if flags is False:
                continue
            allowed = EXCEPTIONS.get(name, set(FASTMATH))
            if flags is True or set(flags) != allowed:
                wrong.append(f"{name}: fastmath={flags!r}")
    assert not missing, missing
    assert not wrong, f"fast-math other than set(FASTMATH) (fastdr/_config.py): {wrong}"


@pytest.mark.skipif(numba.config.DISABLE_JIT,
                    reason="njit returns plain functions when NUMBA_DISABLE_JIT=1")
def test_every_exception_exists():
    for name in EXCEPTIONS:
        module_name, function = name.rsplit(".", 1)
        assert is_jitted(getattr(importlib.import_module(module_name), function)), name
