"""report.html (one self-contained page), the timing spread and the provenance lines."""

import base64
import re

from bench.report.html import write_html
from bench.report.machine import provenance
from bench.report.markdown import _spread

PNG = base64.b64decode(  # a 1 x 1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def test_html_inlines_every_figure_and_renders_tables_and_details(tmp_path):
    (tmp_path / "fig.png").write_bytes(PNG)
    (tmp_path / "report.md").write_text(
        "# fastdr performance report (smoke profile)\n\n![speed-ups](fig.png)\n\n"
        "| method | speed-up | figure |\n|---|---|---|\n| `pca` | 2.0x | [fig.png](fig.png) |\n\n"
        "<details><summary>How each agreement was judged</summary>\n\n- **ok** here\n\n"
        "</details>\n\n![gone](missing.png)\n")
    page = write_html(tmp_path / "report.md").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>fastdr performance report (smoke profile)</title>" in page
    sources = re.findall(r'<img[^>]*src="([^"]*)"', page)
    assert sources[0] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert sources[1] == "missing.png" and 'data-missing="true"' in page
    assert "<table>" in page and "<code>pca</code>" in page
    assert '<a href="#fig.png">' in page and '<img id="fig.png"' in page  # jumps in the page
    assert "<strong>ok</strong>" in page  # Markdown inside <details> is rendered


def test_timing_cells_show_the_spread():
    assert _spread({"median_s": 0.02, "times_s": [0.03, 0.02, 0.0185]}) == "0.02 (0.0185-0.03)"
    assert _spread({"median_s": 0.5, "times_s": [0.5]}) == "0.5"  # one call: no spread
    assert _spread({}) == "-"


def test_provenance_names_the_commit_and_the_command():
    found = provenance("python -m bench.report --profile smoke")
    assert found["command"] == "python -m bench.report --profile smoke"
    assert re.fullmatch(r"[0-9a-f]{40}", found["git_commit"]) or found["git_commit"].startswith(
        "unknown")
    assert found["git_dirty"] in (True, False, None)
