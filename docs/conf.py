"""Sphinx configuration: the user guide (Markdown, MyST), the API reference (autosummary and
numpydoc, with numpydoc's validation as warnings) and the examples gallery (sphinx-gallery).

Build with warnings as errors, the gallery executed (CI's ``ci/docs.sh``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html
"""

import inspect
import os
import re

import fastdr
import fastdr.dask

project = "fastdr"
author = "The fastdr developers"
copyright = "2026, the fastdr developers"  # noqa: A001 - Sphinx's own name for it
release = fastdr.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "README.md"]
templates_path = ["_templates"]
myst_heading_anchors = 3

# --- API reference -------------------------------------------------------------------------
autosummary_generate = True
numpydoc_show_class_members = False  # the class template lists the methods instead
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# numpydoc's validation, every check but these (tests/contract/test_docstrings.py applies the
# same set): See Also, Examples and an extended summary are not required of every method;
# parameters documented together ("metric, p, metric_params : As in NearestNeighbors") carry
# no type of their own; short descriptions may start in lower case; "Return value has no
# description" is allowed where the type says it all; a summary may start with "Returns".
NUMPYDOC_EXCLUDED = {"SA01", "EX01", "ES01", "PR04", "PR07", "PR08", "RT03", "SS05"}
numpydoc_validation_checks = {"all", *NUMPYDOC_EXCLUDED}


def _inherited_from_scikit_learn():
    """Exact names (``fastdr.Isomap.set_output``) of the public members each estimator takes
    from scikit-learn's base classes: their docstrings are scikit-learn's, shown as they are
    and validated by scikit-learn, not here."""
    names = set()
    for package in (fastdr, fastdr.dask):
        for name in package.__all__:
            cls = getattr(package, name)
            if not inspect.isclass(cls):
                continue
            for attr in dir(cls):
                owner = next((k for k in cls.__mro__ if attr in vars(k)), None)
                if not attr.startswith("_") and owner is not None and (
                        owner.__module__.split(".")[0] == "sklearn"):
                    names.add(f"^{package.__name__}\\.{name}\\.{attr}$")
    return names


numpydoc_validation_exclude = {r"\.set_\w+_request$", *_inherited_from_scikit_learn()}

# --- gallery -------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # run every example whose file name starts with plot_; the million-point one is shown,
    # not executed (it takes minutes)
    "filename_pattern": r"/plot_(?!landmark_isomap_at_scale)",
    "ignore_pattern": r"__init__\.py",
    "plot_gallery": os.environ.get("FASTDR_DOCS_PLOT", "True"),
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "within_subsection_order": "FileNameSortKey",
    "doc_module": ("fastdr",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"fastdr": None},
}

# --- HTML ----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"fastdr {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path = []
html_show_sourcelink = False


def _point_to_scikit_learn(app, what, name, obj, options, lines):
    """Members inherited from scikit-learn keep their summary line and point to scikit-learn's
    documentation (their full docstrings cross-reference pages of that site)."""
    module = getattr(obj, "__module__", None) or ""
    if what in ("method", "attribute", "property") and module.split(".")[0] == "sklearn":
        # the summary without its cross-references into scikit-learn's site
        summary = re.sub(r":ref:`([^`<]*?)\s*(<[^>]*>)?`", r"\1", lines[0] if lines else "")
        lines[:] = [summary, "",
                    f"Inherited from scikit-learn's ``{obj.__qualname__}``: see scikit-learn's "
                    "documentation for its parameters."]


def setup(app):
    # before numpydoc (priority 500) reads the docstring
    app.connect("autodoc-process-docstring", _point_to_scikit_learn, priority=400)
