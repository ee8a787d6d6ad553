"""What ``query`` prints: the rows of a distribution variable, and the headline answers
with the verdict (``--summary``)."""

from __future__ import annotations

import csv
import json
import sys

import numpy as np

from rich.console import Console

from ..words import count, fmt_int, fmt_interval, fmt_p, fmt_stderr, fmt_value, fmt_z, json_text, plural
from .terminal import console, print_records
from .status import EXACT_WORD


def print_precision(out: Console, ds) -> None:
    """One line on a precision target: how many grid points met it, were
    capped or still run (per point: ``boardsweep status``)."""
    from ..analysis import precision_columns, precision_counts

    columns = precision_columns(ds)
    if columns is None:
        return
    states, most = precision_counts(columns)
    largest = f"; largest s.e. reached {most:.2g}" if most is not None else ""
    out.print(f"precision target s.e. <= {ds.attrs.get('precision_stderr'):g} (at most "
              f"{ds.attrs.get('max_replicates')} replicates): {states['met']} of {count(len(columns), 'grid point')} "
              f"met, {states['capped']} capped, {states['running']} running{largest} (per point: "
              "`boardsweep status`)", soft_wrap=True)


def quoted(url: str) -> str:
    import shlex

    return shlex.quote(url)


def every_row_command(store: str) -> str:
    return f"`boardsweep query {quoted(store)} --summary --all`"


def print_block_summary(ds, fmt: str, every: bool, store: str, most: int) -> None:
    """``query --summary`` of a grid read block by block (``ds`` lazy, a dask
    chunk a block of ``most`` points, :func:`boardsweep.pipeline.analysis.read_summary`):
    the overview, or every row a block at a time (its verdict kept in the
    store: :func:`blocks.kept_verdict`), so memory stays that of a block."""
    import dask

    from ..analysis import grid_blocks, headline_estimates, headline_summary, kept_verdict
    from .overview import MAX_LINES, print_block_overview

    if fmt == "table" and not every:
        print_block_overview(console(), ds, store, MAX_LINES - 1, every_row_command(store))
        _print_agreement(ds)
        return
    verdict = {k: v for k, v in kept_verdict(ds, store).items() if k != "holm"}
    axes = list(ds.attrs.get("grid_axes", []))
    parts = list(grid_blocks(tuple(ds.sizes[a] for a in axes), most))
    if fmt == "json":  # summary_record's JSON, its rows written a block at a time
        head = json_text({"verdict": verdict, "rows": []})
        print(head[:-len("[]\n}")] + "[", end="")
    for i, (_, region) in enumerate(parts):
        with np.errstate(divide="ignore", invalid="ignore"), dask.config.set(scheduler="synchronous"):
            block = ds.isel(dict(zip(axes, region))).load()
            found = headline_estimates(block)
            table = headline_summary(block, found=found)
        _print_rows(block, table, found, fmt, first=i == 0, last=i == len(parts) - 1, verdict=verdict)
    if fmt == "json":
        print("\n  ]\n}")


def _print_agreement(ds) -> None:
    """The replicate-disagreement flag's line (:func:`.overview.replicate_line`), where there is one."""
    from .overview import replicate_line

    line = replicate_line(ds)
    if line:
        console().print(line, markup=False)


def _print_rows(ds, table, found, fmt: str, first: bool, last: bool, verdict: dict) -> None:
    """One block's rows of ``query --summary --all`` (``first``: the CSV's
    header, ``last``: the table's caption and the verdict)."""
    import pandas as pd

    if fmt in ("csv", "json"):
        table = table.assign(label=pd.Series(_label_values(ds, table, found), index=table.index, dtype=object))
    if fmt == "csv":
        table.to_csv(sys.stdout, index=False, header=first)
    elif fmt == "json":
        rows = [json_text(row) for row in table.to_dict("records")]
        text = ",\n".join("\n".join("    " + line for line in row.splitlines()) for row in rows)
        print(("" if first or not rows else ",") + ("\n" + text if rows else ""), end="")
    else:
        _print_table(ds, table, found, verdict if last else None)


def print_headline_summary(ds, fmt: str, every: bool = False, store: str = "STORE") -> None:
    """``query --summary``: the headline answers on one screen
    (:func:`boardsweep.pipeline.views.overview.print_overview`) and the verdict;
    ``every``: the whole az.summary-style table
    (:func:`boardsweep.pipeline.analysis.headlines.summary`), one row per grid point,
    headline and label.  CSV and JSON always hold every row."""
    import pandas as pd

    from ..analysis import headline_estimates, headline_summary, headline_verdict
    from .overview import MAX_LINES, print_overview

    found = headline_estimates(ds)
    verdict = headline_verdict(ds, found=found)
    if fmt == "table" and not every:
        print_overview(console(), ds, store, MAX_LINES - 1, every_row=every_row_command(store), found=found,
                       verdict=verdict)
        _print_agreement(ds)
        return
    table = headline_summary(ds, found=found)
    if fmt in ("csv", "json"):
        table = table.assign(label=pd.Series(_label_values(ds, table, found), index=table.index, dtype=object))
    if fmt == "csv":
        table.to_csv(sys.stdout, index=False)
        return
    if fmt == "json":
        print(json_text(summary_record(ds, table, verdict)))
        return
    _print_table(ds, table, found, verdict)


def _print_table(ds, table, found, verdict: dict | None) -> None:
    """``query --summary --all`` as a table: the rows of ``table`` (estimates
    ``found``), then (with ``verdict``) the caption and the verdict."""
    from ..analysis import LEVEL
    from .interval_words import intervals_of

    out = console()
    axes = list(ds.attrs.get("grid_axes", []))
    level = f"{LEVEL:.0%}"
    records = []
    for row in table.to_dict("records"):
        if not np.isfinite(row["estimate"]) or (row["estimate"] == 0 and not row["exact"]):
            continue  # a seat that does not play; a bin nothing can fall in (in the CSV and JSON)
        record = {a: str(row[a]) for a in axes}
        record.update(headline=row["headline"], label=str(row["label"]),
                      estimate=fmt_interval(row["estimate"], row["low"], row["high"], row["se"]),
                      se=fmt_stderr(row["se"]), df=fmt_int(row["df"]), exact=fmt_value(row["exact"]),
                      z=fmt_z(row["z"]), p=fmt_p(row["p"]))
        records.append(record)
    print_records(out, "headline answers", records, axes,
                  caption=None if verdict is None else
                  f"estimate ± half-width of its {level} interval ({intervals_of(found)}; [low, high] where "
                  "uneven); se: standard error; z = (estimate - exact) / se; p: two-sided, before the "
                  "Holm adjustment the verdict makes, from the test of each headline's attrs",
                  right={"estimate", "se", "exact", "z", "p", "df"})
    if verdict is None:
        return
    out.print(f"[bold]verdict[/bold]: {verdict['text']}", soft_wrap=False)
    if verdict["power"]["text"]:
        out.print(verdict["power"]["text"], markup=False)




def summary_record(ds, table=None, verdict: dict | None = None) -> dict:
    """The headline summary for machine readers, to be written with
    :func:`boardsweep.pipeline.words.json_text` (every number at full precision, NaN as null):
    ``{"verdict": ..., "rows": [...]}``,
    one row per grid point, headline and label (``query --summary --format json``,
    ``run --format json``).  ``table``: :func:`headlines.summary` with its labels, made here if None."""
    import pandas as pd

    from ..analysis import headline_estimates, headline_summary, headline_verdict

    if table is None:
        found = headline_estimates(ds)
        verdict = headline_verdict(ds, found=found) if verdict is None else verdict
        table = headline_summary(ds, found=found)
        table = table.assign(label=pd.Series(_label_values(ds, table, found), index=table.index, dtype=object))
    verdict = headline_verdict(ds) if verdict is None else verdict
    return {"verdict": {k: v for k, v in verdict.items() if k != "p_holm"}, "rows": table.to_dict("records")}


def _label_values(ds, table, found) -> list:
    """The summary's labels for machine readers: a histogram bin as its number,
    a scalar headline's empty label as null, other labels as text."""
    dims = {name: est.attrs["dim"] for name, est in found.items()}
    out = []
    for name, label in zip(table["headline"], table["label"]):
        dim = dims.get(name)
        kind = ds[dim].dtype.kind if dim else ""
        out.append(None if label == "" else int(label) if kind in "iu" else float(label) if kind == "f" else label)
    return out








def print_rows(ds, variable: str, top: int | None, fmt: str) -> None:
    from ..analysis import exact_compared as compared, table_rows
    from .interval_words import interval_name, noted, test_name

    if fmt == "table" and top is None:
        top = 5
    table = compared(ds, variable)  # its attrs name its interval and test (the caption's words)
    found = _with_precision(ds, table_rows(ds, table, variable, top, numeric=fmt != "table"), fmt != "table")
    if fmt == "json":
        print(json.dumps(found, indent=2))
    elif fmt == "csv":
        writer = csv.DictWriter(sys.stdout, fieldnames=list(found[0]) if found else [])
        writer.writeheader()
        writer.writerows(found)
    else:
        from ..analysis import LEVEL

        axes = list(ds.attrs.get("grid_axes", []))
        dim = [k for k in found[0] if k not in axes][0] if found else "label"
        records = []
        for row in found:
            exact = fmt_value(row["exact"])
            if row["exact"] is None and row["exact_state"] != "stored":
                exact = EXACT_WORD.get(row["exact_state"], "-")
            nan = float("nan")
            se = row["se"] if row["se"] is not None else nan
            records.append({**{a: str(row[a]) for a in axes}, dim: str(row[dim]),
                            "estimate": fmt_interval(*(row[c] if row[c] is not None else nan
                                                       for c in ("estimate", "low", "high")), se),
                            "se": fmt_stderr(row["se"]), "exact": exact,
                            "z": fmt_z(row["z"] if row["z"] is not None else float("nan")),
                            "replicates": str(row["replicates"])})
        shown = f"the {top} most frequent {plural(dim)} per grid point" if top else f"every {dim}"
        print_records(
            console(), f"{variable}: {shown}", records, axes,
            caption=f"estimate ± half-width of its {LEVEL:.0%} "
                    f"{noted(interval_name(table, long=False), '[low, high] where uneven')} (the estimate every command prints: "
                    "ratio of sums over the finished replicates); se: standard error; exact: the exact value "
                    "('none exists': no single exact answer, `boardsweep status` says why; 'not yet': not "
                    f"computed yet); z = (estimate - exact) / se, tested against {test_name(table)}",
            right={"estimate", "se", "exact", "z", "replicates"},
        )
        print_precision(console(), ds)


def _with_precision(ds, found: list[dict], add: bool) -> list[dict]:
    """Query rows with their point's precision columns (replicates used,
    standard error reached and target, met/capped/running) when ``add`` and
    the store has a precision target."""
    from ..analysis import grid_points, precision_columns

    columns = precision_columns(ds) if add else None
    if columns is None:
        return found
    axes = list(ds.attrs.get("grid_axes", []))
    by_point = {tuple(p[a] for a in axes): c for p, c in zip(grid_points(ds), columns)}
    return [{**row, **by_point[tuple(row[a] for a in axes)]} for row in found]
