"""The README is the front door: short, undated, its example runs, its links resolve."""

import pathlib
import re

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

def test_readme_is_short_and_undated():
    text = README.read_text()
    assert len(text.splitlines()) < 150
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text), "a date"
    assert not re.search(r"\b[0-9a-f]{7,40}\b", text), "a commit hash"
    assert not re.search(r"fastdr\.\w*\._|fastdr/_", text), "a private module"


def test_readme_links_resolve():
    text = README.read_text()
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert links
    for link in links:
        assert (ROOT / link).exists(), link
    for page in (ROOT / "docs").rglob("*.md"):
        for link in re.findall(r"\]\(([^)#:]+)\)", page.read_text()):
            assert (page.parent / link).exists(), (page, link)


@pytest.mark.jit_only  # NCA, Isomap and NN-descent on 2,000 points: minutes interpreted
def test_readme_example_runs():
    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert scope["Z"].shape == (2000, 2)
    assert scope["ind"].shape == (2000, 15)
    assert np.mean(scope["knn"].predict(scope["X"]) == scope["y"]) > 0.8
