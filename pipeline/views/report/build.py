"""Assembling the report: analyse, write every table, figure and page (the store read by the caller)."""

from __future__ import annotations

import datetime as _dt
import json
import shutil
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from ...analysis import headline_estimates, headline_verdict
from ...errors import ReportDiskFull, disk_full
from ...analysis import canonical_spec, game_of, run_shape_of, grid_points, grid_size
from ...words import python_value
from ..interval_words import interval_name, test_name
from ..variable import pick_variable
from .columns import define
from .folder import start, publish
from .grid import point_key
from .parts import attempt, analyse_parts
from .tables import (distribution_table, headline_table, pmf_headlines, summary_table, report_tables, verdict_tests_table,
                     variance_table, variance_words, with_p_holm)
from .summary import empty_summary_row, summary_estimates, summarise, add_precision
from .verdict import report_verdict
from .heatmaps import report_figures
from .page import page_html
from .answer import answer_parts
from .blockwise import REPORT_BLOCK_POINTS, write_blocks
from .sample import TABLE_POINTS
from .figure_list import all_figures


def build_report(ds: xr.Dataset, out_dir: str | Path, variable: str | None = None, store: str | None = None,
                 in_blocks: bool = False, deck_orders: bool = False, progress=None, block_points: int | None = None,
                 every: bool = False, inside: Path | None = None) -> dict | None:
    """Write the report of the sweep ``ds`` into ``out_dir``; summary.json's entries (None: a grid in blocks).
    The store is read by the caller (:func:`boardsweep.pipeline.api.report`, with
    :func:`boardsweep.pipeline.analysis.read_sweep`): here it is only drawn and written.

    Parameters
    ----------
    ds : xarray.Dataset
        The sweep, in memory; or, with ``in_blocks``, lazily in dask chunks of one block each.
    out_dir : str or Path
        The report folder.  An earlier report there is replaced: only the files its manifest
        (:data:`MANIFEST`) records are removed; a folder holding a file of the
        report's names that no report wrote is refused (:class:`ReportFolderError`).
    variable : str, optional
        The distribution variable of the figures (default :func:`pick_variable`).
    store : str, optional
        The store's path or URL, as the page names it (None: a Dataset given by itself).
    in_blocks : bool
        ``ds`` is a grid reported block by block (:mod:`.blockwise`), of :func:`report_points`'s blocks.
    deck_orders : bool
        Also compare the points without a single exact answer (shuffled decks) with the exact answers of
        the deck orders each replicate played: a chain solve per game, about a second each, so off by default.
    progress : callable, optional
        ``progress(line)``: told when a slow check starts and ends.
    block_points : int, optional
        Grid points read at once (default :data:`.blockwise.REPORT_BLOCK_POINTS`).  A grid of more than
        :data:`.sample.TABLE_POINTS`: the per-point rows of a bounded sample (:mod:`.sample`; the verdict
        over every point), or with ``every`` all.
    inside : Path, optional
        The sweep store ``out_dir`` lies in (the caller's check), refused.
    """
    t0 = time.perf_counter()
    most = report_points(block_points, every)[1]
    write = _write_blocks if in_blocks else _write
    final = Path(out_dir)
    made = not final.exists()
    try:
        out, recorded = start(final, inside)
        try:
            import matplotlib

            with matplotlib.rc_context({"svg.fonttype": "none"}):  # SVG text as text: 40% faster than glyph paths
                summary = write(ds, store, out, variable, t0, deck_orders, progress, most, every)
            publish(final, out, recorded, store)
        except BaseException:
            shutil.rmtree(out, ignore_errors=True)
            raise
    except OSError as exc:
        if not disk_full(exc):
            raise
        if made and final.is_dir() and not any(final.iterdir()):  # the folder this report made, left empty
            final.rmdir()
        raise ReportDiskFull(f"report folder {final}: the disk is full ({exc.strerror or exc}); free space there "
                             "or choose another folder with --out, and rerun report (the partial report was "
                             "removed)") from None
    return summary


def report_points(block_points: int | None = None, every: bool = False) -> tuple[int, int]:
    """(the most grid points a report reads whole, the points of each block
    beyond that): a block of ``block_points`` (default
    :data:`.blockwise.REPORT_BLOCK_POINTS`), whole at most a block, and
    without ``every`` at most :data:`.sample.TABLE_POINTS` (a larger grid's
    tables: a sample, read block by block)."""
    most = REPORT_BLOCK_POINTS if block_points is None else int(block_points)
    return (most if every else min(most, TABLE_POINTS)), most


def _write_blocks(ds: xr.Dataset, store, out: Path, variable: str | None, t0: float, deck_orders: bool = False,
                  progress=None, most: int = REPORT_BLOCK_POINTS, every: bool = False) -> None:
    """:func:`_write` of a grid of more than one block (:mod:`.blockwise`);
    its summary.json only written (None returned: gigabytes at 10^6 points)."""
    import matplotlib

    matplotlib.use("Agg")
    variable = variable or pick_variable(ds)
    meta = _meta(ds, store, variable)
    if deck_orders:
        meta["notes"].append("--deck-orders: not solved for a grid of more than one block "
                             f"({grid_size(ds):,} points; a chain solve per game)")
    with open(out / "summary.json", "w") as f:  # streamed, block by block
        tables, figures = write_blocks(ds, out, variable, meta, most, f, progress, every, store)
    meta["variance_text"] = variance_words(meta)
    meta["figures"] = figures
    written = meta.pop("written")
    if tables.get("comparisons") is not None and not tables["comparisons"].empty:
        tables["comparisons"].to_csv(out / "comparisons.csv", index=False)
        written["comparisons"] = list(tables["comparisons"].columns)
    meta["tables"] = {name: {"csv": f"{name}.csv", "columns": {c: define(name, c) for c in written[name]}}
                      for name in TABLE_ORDER if name in written}
    meta["timing_s"] = round(time.perf_counter() - t0, 2)
    (out / "index.html").write_text(page_html(ds, meta, tables, figures))
    meta.pop("rows", None)
    with open(out / "report.json", "w") as f:
        json.dump(meta, f, indent=2, default=str)
    return None


#: The tables in the order report.json defines them.
TABLE_ORDER = ("headlines", "distributions", "tests", "points", "frequencies", "comparisons", "decomposition",
               "variance", "precision")


def _write(ds: xr.Dataset, store, out: Path, variable: str | None, t0: float, deck_orders: bool = False,
           progress=None, most: int = REPORT_BLOCK_POINTS, every: bool = True) -> dict:
    """Every file of the report into ``out`` (every point's rows: a grid of one block); the summary dict."""
    import matplotlib

    matplotlib.use("Agg")
    variable = variable or pick_variable(ds)
    points = list(grid_points(ds))
    meta = _meta(ds, store, variable)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN cells of unfinished points
        found = attempt(meta, "headline answers", headline_estimates, ds) or {}
        heads = summary_table(ds, found)
        shown_as_pmf = pmf_headlines(found)
        if variable is None:
            meta["notes"].append("the store has no distribution variable (checkpoint, DIM): "
                                 "only the game's headline answers are reported")
            parts, tables = None, {}
            summary = {point_key(ds, p): empty_summary_row() for p in points}
            figures: dict[str, str] = {}
        else:
            parts = analyse_parts(ds, variable, points, meta, found, deck_orders, progress)
            tables = report_tables(ds, points, parts, meta)
            summary = summarise(ds, points, parts, tables)
            figures = report_figures(ds, parts, out, meta, heatmaps=parts["headline"] not in shown_as_pmf)
            if parts["headline"] in shown_as_pmf:
                meta["drawn"] = parts["headline"]
        summary_estimates(ds, points, heads, summary)
        told = headline_verdict(ds, found=found)  # as run and query print it
        verdict = report_verdict(ds, points, parts, tables.get("points", pd.DataFrame()), found, told)
        meta["answer"] = attempt(meta, "the answer", answer_parts, ds, found, told, out)
        tests = verdict.pop("tests_table")
        meta["verdict"] = verdict
        meta["headlines"] = {name: {**{k: est.attrs[k] for k in ("description", "kind", "basis", "basis_text", "level")},
                                    "interval": interval_name(est), "test": test_name(est)}
                             for name, est in found.items()}
        heads = with_p_holm(ds, heads, tests)
        variance = attempt(meta, "variance per label", variance_table, ds, found, parts, meta)
        tables = {"headlines": headline_table(heads, found),
                  "distributions": distribution_table(ds, heads, found, tests),
                  "tests": verdict_tests_table(ds, points, tests), **tables, "variance": variance}
        meta["variance_text"] = variance_words(meta)
        figures = all_figures(ds, parts, heads, found, shown_as_pmf, out, meta, figures)
    add_precision(ds, points, tables, summary)
    meta["figures"] = figures
    _write_tables(out, tables, meta)
    meta["timing_s"] = round(time.perf_counter() - t0, 2)
    page = page_html(ds, meta, tables, figures)
    (out / "index.html").write_text(page)
    with open(out / "summary.json", "w") as f:  # written as it is encoded: no text of the whole file held
        json.dump(summary, f, indent=2)
    with open(out / "report.json", "w") as f:
        json.dump(meta, f, indent=2, default=str)
    return summary


def _write_tables(out: Path, tables: dict, meta: dict) -> None:
    """Each non-empty table as ``<name>.csv``, its columns defined in ``meta["tables"]``."""
    meta["tables"] = {}
    for name, df in tables.items():
        if df is None or df.empty:
            continue
        df.to_csv(out / f"{name}.csv", index=False)
        meta["tables"][name] = {"csv": f"{name}.csv",
                                "columns": {c: define(name, c) for c in df.columns}}


def _meta(ds, store, variable) -> dict:
    attrs = ds.attrs
    run_shape = {**run_shape_of(ds)}
    canonical = canonical_spec(ds)
    run_shape["replicates"] = canonical.get("run", {}).get("replicates", ds.sizes.get("replicate"))
    description = attrs.get("description") or (game_of(ds).description
                                               if game_of(ds) is not None else "")
    return {
        "title": attrs.get("title") or f"sweep {attrs.get('sweep')} ({attrs.get('game')})",
        "description": description,
        "run_shape": run_shape,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "store_created": attrs.get("created"),
        "history": attrs.get("history", ""),
        "store": store,
        "game": attrs.get("game"), "sweep": attrs.get("sweep"),
        "spec_sha256": attrs.get("spec_sha256"), "git_revision": attrs.get("git_revision"),
        "grid": {a: [python_value(v) for v in ds[a].values] for a in attrs.get("grid_axes", [])},
        "variable": variable, "notes": [],
    }
