"""Check the built HTML documentation as a reader would meet it.

Usage: ``python ci/check_docs.py docs/_build/html [--browser auto|required|off]``

Two checks:

1. Every page, statically: each internal link (``<a href>``, stylesheet, script) names a
   file of the build, and a ``#fragment`` names an element id on the target page; each
   ``<img src>`` is a non-empty file of the build that starts as its extension says.
2. The pages a reader opens first, in headless Chromium (when found, or ``required``): the
   index, the API reference, each estimator's API page, the gallery and its first example,
   each loaded in turn by one harness page: a page that does not load, an image that did not
   decode (``naturalWidth == 0``), a page without its stylesheet or without text is a
   problem. Chromium's ``--dump-dom`` returns the harness's record.

Exits non-zero, listing every problem, when either check finds one.
"""

import argparse
import html.parser
import json
import pathlib
import shutil
import subprocess
import sys
import urllib.parse

_EXTERNAL = ("http:", "https:", "mailto:", "data:", "javascript:", "ftp:")
_MAGIC = {".png": b"\x89PNG", ".jpg": b"\xff\xd8", ".jpeg": b"\xff\xd8", ".gif": b"GIF8",
          ".svg": None}
# One Chromium run loads every page in turn in an iframe of a harness page written at the
# root of the build (with --allow-file-access-from-files the harness may read the frame's
# document), waits for its images, and records what a reader would have seen.
_HARNESS = """<!DOCTYPE html><html><body><script>
var pages = PAGES, results = [];
function next(i) {
  if (i >= pages.length) {
    document.body.setAttribute("data-fastdr-check", JSON.stringify(results));
    return;
  }
  var frame = document.createElement("iframe");
  frame.style.width = "1400px";
  frame.style.height = "30000px";  // every image in view, so none is left lazily unloaded
  frame.onload = function () {
    var doc = frame.contentDocument;
    if (!doc || !doc.body) {
      results.push({page: pages[i], error: "the page did not load"});
      frame.remove(); next(i + 1); return;
    }
    var images = Array.prototype.slice.call(doc.images);
    var settle = function (tries) {
      var pending = images.filter(function (im) { return !im.complete; });
      if (pending.length && tries < 100) {
        setTimeout(function () { settle(tries + 1); }, 100);
        return;
      }
      results.push({page: pages[i], images: images.length, styles: doc.styleSheets.length,
        text: doc.body.innerText.length,
        broken: images.filter(function (im) { return !(im.complete && im.naturalWidth > 0); })
                      .map(function (im) { return im.getAttribute("src"); })});
      frame.remove(); next(i + 1);
    };
    settle(0);
  };
  frame.src = pages[i];
  document.body.appendChild(frame);
}
next(0);
</script></body></html>
"""


class _Page(html.parser.HTMLParser):
    """The ids, links and image sources of one HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links, self.images = set(), [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        elif tag == "link" and attrs.get("href") and "stylesheet" in (attrs.get("rel") or ""):
            self.links.append(attrs["href"])
        elif tag == "script" and attrs.get("src"):
            self.links.append(attrs["src"])
        elif tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])


def _parse(path, cache):
    if path not in cache:
        page = _Page()
        page.feed(path.read_text(encoding="utf-8", errors="replace"))
        cache[path] = page
    return cache[path]


def static_problems(root):
    """Broken internal links, fragments and images over every page under ``root``."""
    cache, problems = {}, []
    for page_path in sorted(root.rglob("*.html")):
        if page_path.relative_to(root).parts[0] == "_static":
            continue  # the theme's template fragments, not pages
        page = _parse(page_path, cache)
        where = page_path.relative_to(root)
        for ref in page.links + page.images:
            if ref.startswith(_EXTERNAL) or ref.startswith("//"):
                continue
            parts = urllib.parse.urlsplit(ref)
            target = (page_path.parent / urllib.parse.unquote(parts.path)).resolve() \
                if parts.path else page_path
            if not target.is_file():
                problems.append(f"{where}: {ref!r} names no file of the build")
                continue
            if parts.fragment and target.suffix == ".html":
                fragment = urllib.parse.unquote(parts.fragment)
                if fragment not in _parse(target, cache).ids:
                    problems.append(f"{where}: {ref!r}: no id {fragment!r} on that page")
        for ref in page.images:
            if ref.startswith(_EXTERNAL):
                continue
            target = (page_path.parent / urllib.parse.unquote(ref.split("?")[0])).resolve()
            if not target.is_file():
                continue  # reported above
            head = target.read_bytes()[:8]
            magic = _MAGIC.get(target.suffix.lower())
            if not head or (magic is not None and not head.startswith(magic)):
                problems.append(f"{where}: image {ref!r} is empty or not a {target.suffix}")
    return len(cache), problems


def _first_pages(root):
    import fastdr

    pages = ["index.html", "api.html", "auto_examples/index.html"]
    for name in sorted(fastdr.__all__):
        obj = getattr(fastdr, name)
        if isinstance(obj, type) and not issubclass(obj, BaseException):
            pages.append(f"generated/fastdr.{name}.html")
    pages.append("auto_examples/plot_swiss_roll.html")  # the gallery's first example
    return pages


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def browser_problems(root, browser):
    """Load each first page in headless Chromium; report pages that fail or broken images."""
    pages = _first_pages(root)
    problems = [f"{rel}: not built" for rel in pages if not (root / rel).is_file()]
    harness = root / "_fastdr_check.html"
    harness.write_text(_HARNESS.replace("PAGES", json.dumps(pages)), encoding="utf-8")
    try:
        done = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu",
             "--allow-file-access-from-files", "--virtual-time-budget=60000",
             "--dump-dom", harness.as_uri()],
            capture_output=True, text=True, timeout=300)
    finally:
        harness.unlink()
    marker = 'data-fastdr-check="'
    start = done.stdout.find(marker)
    if start < 0:
        problems.append(f"Chromium did not finish the pages (rc {done.returncode}; "
                        f"{done.stderr.strip()[-300:]})")
        return [], problems
    end = done.stdout.index('"', start + len(marker))
    records = json.loads(html.unescape(done.stdout[start + len(marker):end]))
    for record in records:
        rel = record["page"]
        if "error" in record:
            problems.append(f"{rel}: {record['error']}")
            continue
        if record["broken"]:
            problems.append(f"{rel}: images that did not render: {record['broken']}")
        if record["styles"] == 0:
            problems.append(f"{rel}: no stylesheet loaded")
        if record["text"] < 200:
            problems.append(f"{rel}: the page shows only {record['text']} characters")
    return [(r["page"], r.get("images", 0)) for r in records], problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=pathlib.Path)
    parser.add_argument("--browser", choices=("auto", "required", "off"), default="auto")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    n_pages, problems = static_problems(root)
    print(f"static check: {n_pages} pages, {len(problems)} problems")
    if args.browser != "off":
        browser = _chromium()
        if browser is None:
            message = "browser check: no Chromium on this machine"
            if args.browser == "required":
                problems.append(message)
            print(f"{message}; static check only (install chromium to run it)")
        else:
            checked, found = browser_problems(root, browser)
            problems += found
            images = sum(n for _, n in checked)
            print(f"browser check ({browser}): {len(checked)} pages loaded, "
                  f"{images} images, {len(found)} problems")
    for problem in problems:
        print("  " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
