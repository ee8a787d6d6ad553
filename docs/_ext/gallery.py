"""`gallery.md`: the answer figure of every shipped sweep, drawn at every build.

Each ``sweeps/*.toml`` is run through the Python API (``boardsweep.run``) with
its run shape cut as the report benchmark cuts it (``benchmarks/report.py``'s
``SMALL`` and ``cut``: every grid point, axis and headline kept;
intervals wider than the shipped run's), into a temporary store, and its
answer figure (``ds.boardsweep.plot_answer()``, the report's first figure) is
saved under ``_static/gallery/``.  A sweep that fails to run or draw fails
the build (a warning, and the docs are built with ``-W``), so the gallery
cannot go stale.  ``BOARDSWEEP_DOCS_GALLERY=0`` skips the runs (a page that
says so is written instead).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import tempfile
import tomllib
from pathlib import Path

from sphinx.util import logging

ROOT = Path(__file__).resolve().parents[2]
LOG = logging.getLogger(__name__)
INTRO = """# Gallery

The answer figure of every example sweep that ships with boardsweep
(`boardsweep examples` lists them): the headline its `[answer]` table names,
against the axis it studies, with its 95% band and the exact answer where one
applies.  The figures are drawn when these pages are built, from runs cut to
at most {games} games or {turns:,} turns per replicate, so their bands are
wider than a shipped run's; `boardsweep run NAME` and `boardsweep report` on
its store give the full figure, and `ds.boardsweep.plot_answer()` the same
one from Python.
"""


@functools.cache
def _benchmark():
    """``benchmarks/report.py`` as a module (its ``SMALL`` and ``cut``: one cut run shape)."""
    found = importlib.util.spec_from_file_location("boardsweep_report_benchmark", ROOT / "benchmarks" / "report.py")
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return module


def _draw(spec_path: Path, folder: Path, tmp: Path) -> list[str]:
    """Run one sweep, save its answer figure, and return its section's lines."""
    import boardsweep
    from boardsweep.pipeline.analysis.answer import answer_of

    spec = _benchmark().cut(tomllib.loads(spec_path.read_text()))
    result = boardsweep.run(spec, tmp / f"{spec_path.stem}.zarr", workers=2, progress=False)
    ds = result.open()
    figure = ds.boardsweep.plot_answer()
    if figure is None:
        raise RuntimeError("no answer figure")
    figure.savefig(folder / f"{spec_path.stem}.png", dpi=90)
    answer = answer_of(ds)
    question = answer.question if answer is not None else ""
    return [f"## {spec_path.stem}", "", f"*{question}*", "",
            f"![The answer figure of {spec_path.stem}](_static/gallery/{spec_path.stem}.png)", "",
            f"`boardsweep run {spec_path.stem}`, then `boardsweep report results/{spec_path.stem}.zarr`.", ""]


def write_gallery(app) -> None:
    """``gallery.md`` and its figures, from every shipped sweep."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    page = Path(app.srcdir) / "gallery.md"
    folder = Path(app.srcdir) / "_static" / "gallery"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [INTRO.format(**_benchmark().SMALL)]
    if os.environ.get("BOARDSWEEP_DOCS_GALLERY") == "0":
        lines.append("(Not drawn in this build: `BOARDSWEEP_DOCS_GALLERY=0`.)\n")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            for spec_path in sorted((ROOT / "sweeps").glob("*.toml")):
                try:
                    lines += _draw(spec_path, folder, Path(tmp))
                except Exception as exc:  # noqa: BLE001 - any failure is a stale gallery: a failed build
                    LOG.warning("gallery: sweeps/%s could not be run and drawn: %s", spec_path.name, exc)
                finally:
                    plt.close("all")
    page.write_text("\n".join(lines))


def setup(app) -> dict:
    app.connect("builder-inited", write_gallery)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
