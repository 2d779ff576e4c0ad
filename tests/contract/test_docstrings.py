"""Every public class, method, property and function passes numpydoc's own validation.

Public means: every name in ``fastdr.__all__`` and ``fastdr.dask.__all__``, and for classes
every method and property whose name does not start with an underscore (inherited ones
included, checked once where they are defined). ``numpydoc.validate`` compares a docstring's
Parameters with the signature (PR01-PR03: missing, unknown, out of order; a class documents
``__init__``) and checks the shape of every section. The Sphinx build (``docs/conf.py``)
runs the same checks with the same exclusions, listed once in ``NUMPYDOC_EXCLUDED``.
"""

import ast
import inspect
import pathlib

import pytest
from numpydoc import validate as numpydoc_validate

import fastdr
import fastdr.dask

_CONF = pathlib.Path(__file__).parents[2] / "docs" / "conf.py"


def _excluded_checks():
    """The literal ``NUMPYDOC_EXCLUDED`` of docs/conf.py, read without importing Sphinx."""
    for node in ast.parse(_CONF.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == (
                "NUMPYDOC_EXCLUDED"):
            return ast.literal_eval(node.value)
    raise AssertionError("docs/conf.py defines no NUMPYDOC_EXCLUDED")


EXCLUDED = _excluded_checks()


def _is_fastdr(obj):
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "fastdr"


def public_objects():
    """Importable dotted names of every public function, class, method and property."""
    found = set()
    names = [(fastdr, "fastdr", name) for name in sorted(fastdr.__all__)]
    names += [(fastdr.dask, "fastdr.dask", name) for name in sorted(fastdr.dask.__all__)]
    for package, prefix, name in names:
        obj = getattr(package, name)
        if inspect.isclass(obj):
            if issubclass(obj, BaseException):
                continue  # exceptions take the message only
            found.add(f"{prefix}.{name}")
            for klass in obj.__mro__:
                if not _is_fastdr(klass):
                    continue
                for attr, member in vars(klass).items():
                    if attr.startswith("_"):
                        continue
                    public = isinstance(member, property) or (
                        inspect.isfunction(member) and _is_fastdr(member))
                    if public:
                        found.add(f"{klass.__module__}.{klass.__qualname__}.{attr}")
        elif callable(obj):
            found.add(f"{prefix}.{name}")
    return sorted(found)


OBJECTS = public_objects()


@pytest.mark.parametrize("name", OBJECTS)
def test_public_docstring_passes_numpydoc_validation(name):
    result = numpydoc_validate.validate(name)
    errors = [f"{code}: {message}" for code, message in result["errors"]
              if code not in EXCLUDED]
    assert not errors, f"{name}:\n" + "\n".join(errors)


def test_validation_catches_a_parameter_missing_from_the_docstring():
    def documented_wrongly(X, k=3):
        """Do nothing.

        Parameters
        ----------
        X : ndarray
            Input.
        """

    documented_wrongly.__module__ = __name__
    globals()["documented_wrongly"] = documented_wrongly
    try:
        result = numpydoc_validate.validate(f"{__name__}.documented_wrongly")
    finally:
        del globals()["documented_wrongly"]
    assert "PR01" in [code for code, _ in result["errors"]]
    assert "PR01" not in EXCLUDED and "GL08" not in EXCLUDED
    assert len(OBJECTS) > 50  # the walk reached methods, not only the exported names
