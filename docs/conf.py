"""Sphinx configuration of boardsweep's documentation site.

Build it from the repository root (warnings are errors)::

    pip install -e ".[docs]"
    sphinx-build -W --keep-going -b html docs docs/_build/html
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import boardsweep  # noqa: E402 - the installed package, documented as installed
from boardsweep.core import games  # noqa: E402

# The plugin example is documented beside the built-in games; a clone with only
# `pip install -e ".[docs]"` has not installed it, so it is registered from its folder.
if "chutes_ladders" not in games.game_names():
    sys.path.insert(0, str(HERE.parent / "examples" / "chutes_ladders"))
    games.register("chutes_ladders", "chutes_ladders.game")

project = "boardsweep"
author = "the boardsweep authors"
copyright = "boardsweep authors, MIT licence"
release = boardsweep.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",                # pages in Markdown (MyST)
    "sphinx.ext.autodoc",         # the Python API from its docstrings ...
    "numpydoc",                   # ... which are numpy style
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",         # $...$ and $$...$$ (MyST dollarmath, amsmath) and :math: rendered
    "sphinx.ext.intersphinx",     # links into xarray, Dask, zarr, numpy and scipy
    "sphinx_click",               # every command and option, from the click definitions
    "boardsweep_docs",            # tables generated from the games' definitions; the notebook page
    "gallery",                    # the answer figure of every shipped sweep, drawn at every build
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", ".gitignore", "_intersphinx"]
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath", "amsmath"]
myst_heading_anchors = 3

# numpydoc: no autosummary tables of members (the API page lists what it documents).
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
autodoc_typehints = "none"          # the signatures and the numpydoc sections say the types
autodoc_member_order = "bysource"
nitpicky = False


# The build is offline (CI): each project's inventory is read from docs/_intersphinx/ (the objects the pages
# name; docs/_intersphinx/make_inventories.py writes them), never fetched.  Links go to the stable docs.
_INTERSPHINX = {"xarray": "https://docs.xarray.dev/en/stable/", "dask": "https://docs.dask.org/en/stable/",
                "distributed": "https://distributed.dask.org/en/stable/", "zarr": "https://zarr.readthedocs.io/en/stable/",
                "numpy": "https://numpy.org/doc/stable/", "scipy": "https://docs.scipy.org/doc/scipy/"}
intersphinx_mapping = {name: (url, str(HERE / "_intersphinx" / f"{name}.inv")) for name, url in _INTERSPHINX.items()}


html_theme = "pydata_sphinx_theme"
html_title = "boardsweep"
html_static_path = ["_static"]
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 5,
    # the wide generated tables get the whole width
    "secondary_sidebar_items": {"**": ["page-toc"], "reference/store": [], "reference/games": []},
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars = {"index": []}
html_css_files = ["custom.css"]
