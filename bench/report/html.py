"""``report.html``: the Markdown report as one self-contained page (figures inlined), for a
reader who opens it in a browser or receives it as a single file."""

import base64
import html
import re
from pathlib import Path

_STYLE = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f;
       max-width: 1200px; margin: 2em auto; padding: 0 1.5em; }
h1, h2, h3 { line-height: 1.2; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 13px; display: block;
        overflow-x: auto; }
th, td { border: 1px solid #ddd; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f4f4f6; position: sticky; top: 0; }
tr:nth-child(even) td { background: #fafafb; }
img { max-width: 100%; height: auto; }
code { background: #f4f4f6; padding: 0 .25em; border-radius: 3px; font-size: 92%; }
details { margin: .5em 0 1em; } summary { cursor: pointer; font-weight: 600; }
"""

_IMG = re.compile(r'(<img\b[^>]*\bsrc=")([^":]+\.png)(")')
_FIGURE_LINK = re.compile(r'<a href="([^":#]+\.png)">')


def _inline_images(body, folder):
    """Replace each local PNG ``src`` by a data URI; a missing file is named in the page."""

    def embed(match):
        path = folder / match.group(2)
        if not path.is_file():
            return f'{match.group(1)}{match.group(2)}" data-missing="true{match.group(3)}'
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        opening = match.group(1).replace("<img", f'<img id="{match.group(2)}"', 1)
        return f"{opening}data:image/png;base64,{data}{match.group(3)}"

    body = _IMG.sub(embed, body)
    # a link to a figure shown in the page jumps to it (the PNG may not travel with the page)
    shown = set(re.findall(r'<img id="([^"]+)"', body))
    return _FIGURE_LINK.sub(
        lambda m: f'<a href="#{m.group(1)}">' if m.group(1) in shown else m.group(0), body)


def write_html(markdown_path, html_path=None):
    """Render ``report.md`` to a self-contained ``report.html`` beside it.

    Parameters
    ----------
    markdown_path : str or Path
        The Markdown report; its figures are read from the same folder.
    html_path : str or Path or None
        Where to write (default: ``report.html`` beside the Markdown).

    Returns
    -------
    Path
        The page written.
    """
    import markdown  # the [bench] extra

    markdown_path = Path(markdown_path)
    html_path = Path(html_path) if html_path else markdown_path.with_name("report.html")
    text = markdown_path.read_text()
    # <details> blocks hold Markdown: md_in_html renders it when the tag says so
    text = text.replace("<details>", '<details markdown="1">')
    body = markdown.markdown(text, extensions=["tables", "fenced_code", "md_in_html"])
    body = _inline_images(body, markdown_path.parent)
    heading = re.search(r"^# (.+)$", text, re.M)
    title = html.escape(heading.group(1) if heading else "fastdr report")
    html_path.write_text(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{title}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n{body}\n"
        "</body>\n</html>\n")
    return html_path
