"""Error text for the report: one line, without numba's terminal colour codes."""

import re

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def error_text(exc, limit=300):
    """``"TypeName: message"`` on one line, at most ``limit`` characters."""
    text = _ANSI.sub("", f"{type(exc).__name__}: {exc}")
    return " ".join(text.split())[:limit]
