"""Comments and docstrings under fastdr/ state rules and reasons, never timing logs.

Measurements belong in commit messages or ``bench/DECISIONS.md``. A timing log is a number
followed by a time unit ("3.3 ms", "0.1 s", "37 ns"), a speed-up ("1.4x", "25% faster"), a
comparison of two numbers ("0.24 against 3.3") or a former value ("was 1.07"). Inline code
literals (````...````) are skipped: they show formulas and output formats, not measurements.
"""

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

import fastdr

PACKAGE = Path(fastdr.__file__).resolve().parent

# A number as written in prose: 3, 0.24, 10,000 (not part of a name or of 1e-10's exponent).
_NUMBER = r"(?<![\w.^*])\d+(?:,\d{3})*(?:\.\d+)?(?![\w.]*e[-+]?\d)"
TIMING_LOG = re.compile(
    "|".join((
        _NUMBER + r"\s*(?:ns|us|µs|ms|s|secs?|seconds?|minutes?)\b",
        _NUMBER + r"x\b",
        _NUMBER + r"\s*%\s+(?:faster|slower)\b",
        _NUMBER + r"\s+against\s+\d",
        r"\bwas\s+" + _NUMBER,
    ))
)
_LITERAL = re.compile(r"``.+?``", re.DOTALL)


def _blank_literals(text):
    """``text`` with its inline code literals blanked, line breaks kept."""
    return _LITERAL.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _docstrings(tree):
    """``(first line, text)`` of every module, class and function docstring."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                yield body[0].lineno, body[0].value.value


def _attribute_docs(tree):
    """``(first line, text)`` of the string statements that document an attribute (``#:``
    comments are read as comments; this covers the ``x = 1; \"\"\"doc\"\"\"`` form)."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for prev, stmt in zip(body, body[1:], strict=False):
            if (isinstance(prev, (ast.Assign, ast.AnnAssign)) and isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Constant)
                    and isinstance(stmt.value.value, str)):
                yield stmt.lineno, stmt.value.value


def timing_logs(source):
    """``(line, text)`` of each comment or docstring line of ``source`` that logs a timing."""
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and TIMING_LOG.search(_blank_literals(tok.string)):
            found.append((tok.start[0], tok.string.strip()))
    tree = ast.parse(source)
    for first, text in (*_docstrings(tree), *_attribute_docs(tree)):
        for offset, line in enumerate(_blank_literals(text).splitlines()):
            if TIMING_LOG.search(line):
                found.append((first + offset, text.splitlines()[offset].strip()))
    return sorted(found)


@pytest.mark.parametrize("text", [
    "# 0.24 against 3.3 ms at m=10,000",
    "# measured on 2 cores, the fit took 0.101 s",
    "# was 1.07 before the change",
    "# 1.4x faster",
    "# 2.43x",
    "# about 37 ns an offer",
    "# 25% faster per evaluation",
    "# 12 against 90 us",
    "# from 64 to 16 ms",
    "# runs for 2 minutes",
])
def test_pattern_catches_timing_logs(text):
    assert timing_logs(text + "\n")


@pytest.mark.parametrize("text", [
    "# rtol 1e-10 of the largest",
    "# O(m^2) time, O(m d) memory",
    "# 2**20 bytes a block",
    "# float32 in, float32 out",
    "# squares overflow above 1e154",
    "# 10,000 x 500, 10 components",
    "# one ``[Name] stage: 0.42 s`` line per stage",
    "# a 4-ary heap",
    "# exp(-42) = 5.7e-19 of the row's largest term",
    "# ``[-2 s (t - c), s^2 |t - c|^2]`` columns",
    "# 8 threads, 16 sources per block",
])
def test_pattern_lets_rules_pass(text):
    assert not timing_logs(text + "\n")


def test_docstrings_are_read():
    source = 'def f():\n    """Fit.\n\n    It took 3.1 s before.\n    """\n'
    assert timing_logs(source) == [(4, "It took 3.1 s before.")]


def test_no_timing_logs_in_fastdr():
    logs = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, text in timing_logs(path.read_text(encoding="utf-8")):
            logs.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {text}")
    assert not logs, (
        "Comments and docstrings state the rule and the reason; move these measurements to "
        "bench/DECISIONS.md or the commit message:\n" + "\n".join(logs))
