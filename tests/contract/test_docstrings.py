"""Every public class, method and function has a numpydoc docstring whose Parameters match.

Public means: every name in ``fastdr.__all__`` and ``fastdr.dask.__all__``, and for classes
every method and property whose name does not start with an underscore (inherited ones
included, checked once where they are defined). A class's Parameters section documents
``__init__``. Parameters are compared by name and order with the signature, leaving out
``self``, ``*args`` and ``**kwargs``. The parser reads the numpydoc ``Parameters`` section
only (numpydoc itself is not a dependency).
"""

import inspect
import re

import pytest

import fastdr
import fastdr.dask

_HEADER = re.compile(r"^(\w[\w ]*)\n-{3,}$", re.MULTILINE)
_ENTRY = re.compile(r"^(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?$")


def documented_parameters(doc):
    """Names in the docstring's ``Parameters`` section in order, or None without one."""
    text = inspect.cleandoc(doc)
    headers = list(_HEADER.finditer(text))
    for i, header in enumerate(headers):
        if header.group(1).strip() != "Parameters":
            continue
        end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
        names = []
        for line in text[header.end():end].splitlines():
            if not line.strip() or line[0].isspace():
                continue  # blank, or a description line (indented)
            match = _ENTRY.match(line)
            if match is None:
                names.append(f"<unparsed: {line.strip()}>")
                continue
            names.extend(name.strip() for name in match.group(1).split(","))
        return [n for n in names if not n.startswith("*")]
    return None


def signature_parameters(func):
    skip = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    params = inspect.signature(func).parameters.values()
    return [p.name for p in params if p.kind not in skip and p.name not in ("self", "cls")]


def _is_fastdr(obj):
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "fastdr"


def public_objects():
    """(qualified name, kind, object) for every public function, class, method, property."""
    found = {}
    names = [(fastdr, "fastdr", name) for name in sorted(fastdr.__all__)]
    names += [(fastdr.dask, "fastdr.dask", name) for name in sorted(fastdr.dask.__all__)]
    for package, prefix, name in names:
        obj = getattr(package, name)
        if inspect.isclass(obj):
            found[f"{prefix}.{name}"] = ("class", obj)
            for klass in obj.__mro__:
                if not _is_fastdr(klass):
                    continue
                for attr, member in vars(klass).items():
                    if attr.startswith("_"):
                        continue
                    where = f"{klass.__module__}.{klass.__qualname__}.{attr}"
                    if isinstance(member, property):
                        found.setdefault(where, ("property", member))
                    elif inspect.isfunction(member) and _is_fastdr(member):
                        found.setdefault(where, ("method", member))
        elif callable(obj):
            found[f"{prefix}.{name}"] = ("function", obj)
    return sorted((name, kind, obj) for name, (kind, obj) in found.items())


OBJECTS = public_objects()


@pytest.mark.parametrize(("name", "kind", "obj"), OBJECTS, ids=[o[0] for o in OBJECTS])
def test_public_docstring_documents_its_parameters(name, kind, obj):
    doc = obj.__doc__ if kind != "property" else obj.fget.__doc__
    assert doc and doc.strip(), f"{name} has no docstring"
    if kind == "property":
        return
    if kind == "class":
        if issubclass(obj, BaseException):
            return  # exceptions take the message only
        func = obj.__init__
    else:
        func = obj
    expected = signature_parameters(func)
    documented = documented_parameters(doc)
    if documented is None:
        assert not expected, (
            f"{name} takes {expected} but its docstring has no Parameters section"
        )
        return
    assert documented == expected, (
        f"{name}: the docstring's Parameters list {documented}, the signature {expected}"
    )


def test_parser_reads_names_in_order_and_stops_at_the_next_section():
    doc = """Summary.

    Parameters
    ----------
    X, Y : array-like
        Two inputs.

        A second paragraph.
    k : int, default=3
    *args : ignored

    Returns
    -------
    out : ndarray
    """
    assert documented_parameters(doc) == ["X", "Y", "k"]
    assert documented_parameters("Summary only.") is None
    assert signature_parameters(lambda self, X, *args, k=3, **kw: None) == ["X", "k"]
    assert len(OBJECTS) > 50  # the walk reached methods, not only the exported names
