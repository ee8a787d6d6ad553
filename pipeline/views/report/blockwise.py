"""The report of a grid of more than one block, in memory of one block.

The store is read one block of grid points at a time
(:func:`analysis.blocks.grid_blocks`, the blocks the run's summary uses):
each block's per-point tables (points, frequencies, headlines,
distributions, tests, variance, precision) are appended to their CSV files
and its ``summary.json`` entries streamed (:mod:`.stream`), so the files
hold the same rows as a report of the whole grid at once.  Two passes: the
verdict first (:func:`analysis.blocks.block_verdict`, what ``run`` and
``query --summary`` print: the family's sorted p-values, one float per
test, give each test its Holm-adjusted p), then the tables.

The figures, the comparisons and the answer read only the sub-grid they
draw from (:func:`drawn_points`: each axis cut to its first value and at
most :data:`.parts.MAX_COMPARED` others, evenly spaced, the sub-grid at
most one block); the page shows the first rows of each table.

What is kept per grid point over the whole grid: the family's p-values
(one float64 per test, and what :func:`headlines.power` reads per test),
each point's agreement (``point_agree`` of ``report.json``), its exact
state and replicates (the verdict's counts).
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import dask
import numpy as np
import pandas as pd

from ...analysis import agreement_per_point, axis_comparisons, block_verdict, compared_indices, detectable, grid_blocks, headline_estimates, headline_tests, holm_adjusted, kept_verdict, shown_overview
from ....core import power as tpower
from ...analysis import grid_points, grid_size, panel_spread
from .grid import point_key
from .parts import MAX_COMPARED, analyse_parts, comparison_notes, attempt
from .sample import NAMED_POINTS, TABLE_POINTS, asked_points, grid_counts, sample_text, sampled_words, table_regions
from .stream import CsvParts, JsonObject, SortedCsv
from .summary import empty_summary_row, add_precision, summarise, summary_estimates
from .tables import (MAX_VARIANCE_POINTS, TEST_COLUMNS, comparison_table, distribution_frames, frequency_table,
                     headline_table, point_table, summary_table, variance_table, with_p_holm)

#: Grid points the report reads at once (its tables hold some 40 KB a point of the money game
#: while a block is made: about 400 MB; the run's summary, with less per point, reads
#: :data:`analysis.blocks.BLOCK_POINTS`).
REPORT_BLOCK_POINTS = 10_000
#: The tables written block by block, in the order report.json defines them.
BLOCK_TABLES = ("headlines", "distributions", "tests", "points", "frequencies", "variance", "precision")


def drawn_points(ds, most: int) -> list[int]:
    """The flat indices of the sub-grid the figures and comparisons read: each
    axis's first value and at most :data:`MAX_COMPARED` others (every value
    of a shorter axis; those :func:`comparisons.compared` compares), the
    longest axes thinned until the sub-grid holds at most ``most`` points;
    the values of the points the spec's ``[answer]`` asks added."""
    axes = list(ds.attrs.get("grid_axes", []))
    if not axes:
        return [0]
    shape = [ds.sizes[a] for a in axes]
    kept = [np.arange(n) if n <= MAX_COMPARED + 1 else np.unique(np.r_[0, compared_indices(n, MAX_COMPARED)])
            for n in shape]
    while math.prod(len(k) for k in kept) > max(most, 1):
        longest = int(np.argmax([len(k) for k in kept]))
        kept[longest] = kept[longest][panel_spread(len(kept[longest]), max(1, len(kept[longest]) // 2))]
    asked = asked_points(ds)
    if len(asked):  # the spec's [answer] points too, whatever the cut
        kept = [np.union1d(k, w) for k, w in zip(kept, np.unravel_index(asked, shape))]
    mesh = np.meshgrid(*kept, indexing="ij")
    return np.ravel_multi_index(tuple(m.ravel() for m in mesh), shape).tolist()


def _drawn(ds, told: dict, most: int):
    """:func:`blocks.shown_overview` of :func:`drawn_points`: the sub-grid, its
    estimates, and the verdict's flagged points that lie in it."""
    picked = drawn_points(ds, most)
    inside = set(picked)
    flagged = [i for i in told["flagged_points"] if i in inside]
    return shown_overview(ds, {**told, "flagged_points": flagged}, picked, len(flagged))


class _Sink:
    """Every file written block by block, and what the verdict keeps per point."""

    def __init__(self, out: Path, json_file) -> None:
        self.out = out
        self.parts = {name: CsvParts(out, name) for name in BLOCK_TABLES if name != "tests"}

        self.tests = SortedCsv(out, "tests", "p")
        self.summary = JsonObject(json_file)
        self.point_agree: list[bool | None] = []
        self.counts: list[pd.DataFrame] = []
        self.none_notes: set[str] = set()
        self.any_test = False
        self.page: dict[str, pd.DataFrame] = {}
        self.rows = dict.fromkeys(BLOCK_TABLES, 0)

    def add(self, got: dict) -> None:
        """One block's tables and summary entries."""
        for name, df in got["tables"].items():
            if df is None or df.empty:
                continue
            self.rows[name] += len(df)
            self.page.setdefault(name, df.head(200) if name != "frequencies" else df)
            if name in ("headlines", "variance"):  # headline after headline, as one table of the grid
                for headline in got["order"]:
                    self.parts[name].add(df[df["headline"] == headline], headline)
            elif name == "tests":
                self.tests.add(df)
            elif name != "distributions":
                self.parts[name].add(df)
        for headline, df in got["distributions"]:
            self.parts["distributions"].add(df, headline)
            self.rows["distributions"] += len(df)
            if self.page.get("distributions") is None or len(self.page["distributions"]) < 200:
                self.page["distributions"] = pd.concat([self.page.get("distributions"), df.head(200)],
                                                       ignore_index=True)
            self.any_test = self.any_test or not df["test"].eq("").all()
        self.summary.add(got["summary"])
        self.point_agree += got["point_agree"]
        self.counts.append(got["counts"])
        self.none_notes |= set(got["none_notes"])

    def close(self) -> dict[str, list[str]]:
        """Each table's file joined; {table: its columns} of those written."""
        self.summary.close()
        written = {}
        for name in BLOCK_TABLES:
            path = self.out / f"{name}.csv"
            if name == "tests":
                columns = self.tests.join(path)
            else:
                drop = TEST_COLUMNS if name == "distributions" and not self.any_test else None
                columns = self.parts[name].join(path, drop)
            if columns is not None:
                written[name] = columns
        if "distributions" in self.page and not self.any_test:
            self.page["distributions"] = self.page["distributions"].drop(columns=TEST_COLUMNS)
        if "tests" in written:
            self.page["tests"] = pd.read_csv(self.out / "tests.csv", nrows=200)
        return written


def _block_tests(b, found: dict, holm, level: float) -> pd.DataFrame:
    """The verdict's tests of block ``b`` (points: its own flat indices) with
    their Holm-adjusted p over the whole family and the bias each detects at
    ``level`` (alpha over the family's tests), as :func:`headlines.verdict` gives them."""
    t = headline_tests(b, found, spread=True) if found else pd.DataFrame()
    if t.empty:
        return t
    t["p_holm"] = holm_adjusted(t["p"].to_numpy(np.float64), *holm)
    t["detectable"] = detectable(t, level, tpower.POWER)
    return t.drop(columns=["se_df", "skew_a"]).assign(family="verdict")


def _block(b, variable, meta: dict, holm, total: int, alpha: float, level: float) -> dict[str, Any]:
    """One block's tables, summary entries and what the verdict keeps of it."""
    from .tables import verdict_tests_table
    from .verdict import no_exact_notes

    points = list(grid_points(b))
    found = attempt(meta, "headline answers", headline_estimates, b) or {}
    heads = summary_table(b, found)
    tables: dict[str, pd.DataFrame] = {}
    if variable is None:
        parts = None
        summary = {point_key(b, p): empty_summary_row() for p in points}
    else:
        parts = analyse_parts(b, variable, points, meta, found, grid=total, compare=False)
        tables = {"points": point_table(b, points, parts), "frequencies": frequency_table(b, points, parts)}
        summary = summarise(b, points, parts, tables)
    summary_estimates(b, points, heads, summary)
    tests = _block_tests(b, found, holm, level)
    heads = headline_table(with_p_holm(b, heads, tests), found)
    kinds = {n: e.attrs["kind"] == "distribution" for n, e in found.items()}
    tables.update(headlines=heads, tests=verdict_tests_table(b, points, tests))
    if total <= MAX_VARIANCE_POINTS:
        tables["variance"] = attempt(meta, "variance per label", variance_table, b, found, parts)
    add_precision(b, points, tables, summary)
    pt = tables.get("points", pd.DataFrame())
    return {"tables": tables, "summary": summary,
            "order": sorted(found, key=lambda n: kinds[n]),  # scalars first, as headline_table
            "distributions": distribution_frames(b, heads, found, tests),
            "point_agree": agreement_per_point(len(points), tests, alpha),
            "counts": pt[["exact", "replicates"]].astype({"exact": "category"}) if len(pt) else pt,
            "none_notes": no_exact_notes(b, points, parts) if parts is not None else []}


def write_blocks(ds, out: Path, variable: str | None, meta: dict, most: int, sink_file,
                 progress=None, every: bool = True, url: str | None = None) -> tuple[dict, dict]:
    """Every table, figure and summary entry of the lazily opened ``ds`` into
    ``out``, block by block (``progress(line)`` told about every tenth of the
    grid); (the page's tables, the figures).  Not ``every``, on a grid of more
    than :data:`.sample.TABLE_POINTS` points: the per-point rows of the bounded
    sample only (:func:`.sample.table_regions`), the verdict of every point
    (kept in the store at ``url`` where it keeps one: :func:`blocks.kept_verdict`)."""
    axes = list(ds.attrs.get("grid_axes", []))
    total, say = grid_size(ds), progress or (lambda line: None)
    bounded = not every and total > TABLE_POINTS
    say(f"report: {total:,} grid points, read in blocks of at most {most:,} (the verdict, then the "
        + ("tables of a sample of them)" if bounded else "tables)"))
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN cells of unfinished points
        told = kept_verdict(ds, url, most) if url is not None else block_verdict(ds, most=most)
        holm = told["holm"]
        figures, drawn = _sub_grid(ds, told, variable, out, meta, most, bounded)
        sink, quiet = _Sink(out, sink_file), {"notes": []}
        regions = table_regions(ds, told["flagged_points"]) if bounded else \
            [dict(zip(axes, region)) for _, region in grid_blocks(tuple(ds.sizes[a] for a in axes), most)]
        written_points = sum(math.prod(len(np.arange(ds.sizes[a])[r]) for a, r in region.items())
                             for region in regions)
        done = 0
        with dask.config.set(scheduler="synchronous"):
            for region in regions:
                b = ds.isel(region).load()
                sink.add(_block(b, variable, quiet, holm, total, told["alpha"],
                                told["alpha"] / max(told["tests"], 1)))
                before, done = done, done + grid_size(b)
                if 10 * done // written_points > 10 * before // written_points:
                    say(f"report: {done:,} of {written_points:,} grid points written"
                        + (f" (a sample of the grid's {total:,})" if bounded else ""))
        meta["notes"] += [n for n in dict.fromkeys(quiet["notes"]) if n not in meta["notes"]]
        written = sink.close()
        if bounded:
            meta["sample"] = {"points": written_points, "grid": total, "text": sample_text(written_points, total)}
            meta["notes"].append(meta["sample"]["text"][0].upper() + meta["sample"]["text"][1:])
            figures = {f: sampled_words(c) for f, c in figures.items()}
            if meta.get("answer"):
                meta["answer"]["caption"] = sampled_words(meta["answer"].get("caption") or "")
        _verdict_of(ds, told, sink, drawn, meta, grid_counts(ds) if bounded else None)
    if total > MAX_VARIANCE_POINTS and drawn.found:
        variance_table(ds, drawn.found, None, meta)  # the note only: nothing is computed above the cap
    tables = {**sink.page, "comparisons": drawn.comparisons}
    meta["rows"] = {name: sink.rows[name] for name in written}
    meta["written"] = written
    return tables, figures


def _verdict_of(ds, told: dict, sink: _Sink, drawn, meta: dict, counted=None) -> None:
    """``meta["verdict"]``: :func:`.verdict.report_verdict` of the block verdict and the counts kept per point
    (``counted``: :func:`.sample.grid_counts`, where the sink holds a sample; ``point_agree`` then null)."""
    from .verdict import report_verdict

    if counted is not None:
        pt, notes, agree = counted[0], counted[1], None
    else:
        pt = pd.concat(sink.counts, ignore_index=True) if sink.counts else pd.DataFrame()
        notes, agree = sorted(sink.none_notes), sink.point_agree
    v = {**told, "point_agree": agree, "p_holm": pd.DataFrame(columns=["point", "p_holm"])}
    verdict = report_verdict(ds, [], None, pt, drawn.found, v, notes)
    verdict.pop("tests_table")
    if counted is not None and len(verdict["flagged"]) > NAMED_POINTS:  # the first, worst first; all: counted
        verdict.update(flagged=verdict["flagged"][:NAMED_POINTS], flagged_total=len(verdict["flagged"]))
    meta["verdict"] = verdict


def _sub_grid(ds, told: dict, variable, out: Path, meta: dict, most: int, bounded: bool = False):
    """The figures, the comparisons and the answer, from the sub-grid they draw (:func:`drawn_points`)."""
    from .answer import answer_parts
    from .figure_list import all_figures
    from .heatmaps import report_figures
    from .tables import pmf_headlines

    drawn = _drawn(ds, told, most)
    sub, found = drawn.ds, drawn.found
    points = list(grid_points(sub))
    heads = summary_table(sub, found)
    shown_as_pmf = pmf_headlines(found)
    parts, figures, drawn.comparisons = None, {}, pd.DataFrame()
    if variable is None:
        meta["notes"].append("the store has no distribution variable (checkpoint, DIM): "
                             "only the game's headline answers are reported")
    else:
        parts = analyse_parts(sub, variable, points, meta, found, grid=grid_size(ds), compare=False)
        comparison_notes(ds, meta)
        parts["compare"] = attempt(meta, "axis comparisons", axis_comparisons, sub, variable,
                                most=MAX_COMPARED) or {}
        drawn.comparisons = comparison_table(sub, parts, meta)
        figures = report_figures(sub, parts, out, meta, heatmaps=parts["headline"] not in shown_as_pmf)
        if parts["headline"] in shown_as_pmf:
            meta["drawn"] = parts["headline"]
    if grid_size(sub) < grid_size(ds):
        meta["notes"].append(f"the figures, the comparisons and the answer read {grid_size(sub):,} of the grid's "
                             f"{grid_size(ds):,} points (each axis's first value and at most {MAX_COMPARED} "
                             "others, evenly spaced)" + ("" if bounded else
                                                        "; every point is in the CSV tables and summary.json"))
    meta["decomposition"] = {}
    meta["answer"] = attempt(meta, "the answer", answer_parts, sub, found, drawn.verdict, out)
    meta["headlines"] = {name: {**{k: est.attrs[k] for k in ("description", "kind", "basis", "basis_text", "level")},
                                "interval": headlines_words(est)[0], "test": headlines_words(est)[1]}
                         for name, est in found.items()}
    heads = with_p_holm(sub, heads, drawn.verdict["p_holm"])
    figures = all_figures(sub, parts, heads, found, shown_as_pmf, out, meta, figures)
    return figures, drawn


def headlines_words(est) -> tuple[str, str]:
    """(interval, test) of an estimate in words."""
    from ..interval_words import interval_name, test_name

    return interval_name(est), test_name(est)
