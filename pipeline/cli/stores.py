"""Commands that read a sweep store: ``query``, ``status`` and ``report``."""

from __future__ import annotations

import os
from contextlib import contextmanager

import click
import numpy as np

from ..errors import Fault, InputError
from ..words import json_text
from .options import JSON_FORMAT, quiet_for_json, reads_here
from .verbosity import Command

__all__ = ["query", "status", "report"]  # the commands (cli.commands registers each name here)


#: One default for `query` and `report` (:func:`boardsweep.pipeline.views.variable.pick_variable`).
VARIABLE_HELP = "Simulated variable (default: counts, else the first over location, else the first)."


def refuse_lock_only(url: str) -> None:
    """Raise the one line (exit 1) for a folder holding only a run's lock: a
    run interrupted before it made the store (or making it now), not bad
    input; return for anything else.  Every command that reads a store asks
    this where it finds none."""
    from ..store import lock_only_line

    line = lock_only_line(url)
    if line is not None:
        raise Fault(line)


@contextmanager
def _lock_only(store_url: str):
    """Where opening the store finds none, :func:`refuse_lock_only`."""
    try:
        yield
    except InputError as exc:
        if str(exc).endswith("no sweep store there"):
            refuse_lock_only(store_url)
        raise


@click.command(cls=Command)
@click.argument("store_url", metavar="STORE")
@click.option("--sel", "sels", multiple=True, metavar="AXIS=VALUE", help="Select grid points.")
@click.option("--variable", default=None, help=VARIABLE_HELP)
@click.option("--top", type=click.IntRange(min=1), default=None, help="Rows per grid point (table default 5).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@click.option("--summary", is_flag=True,
              help="The headline answers on one screen and the verdict (CSV and JSON: every row).")
@click.option("--all", "every", is_flag=True,
              help="With --summary: every grid point, headline and label (estimate, se, df, exact, z, p).")
@reads_here()
def query(store_url: str, sels: tuple[str, ...], variable: str | None, top: int | None, fmt: str,
          summary: bool, every: bool) -> None:
    """Estimates, standard errors and exact values from the sweep store STORE."""
    from ..analysis import open_store, read_summary
    from ..views import pick_variable, print_block_summary, print_headline_summary, print_rows

    if summary or every:
        with _lock_only(store_url):  # the rows a block at a time: a table per block
            ds, in_blocks, most = read_summary(store_url, sels, every or fmt != "table", InputError)
        if in_blocks:
            print_block_summary(ds, fmt, every, store_url, most)
        else:
            print_headline_summary(ds, fmt, every=every, store=store_url)
        return
    with _lock_only(store_url):
        ds = open_store(store_url, InputError, sels=sels)
    variable = pick_variable(ds, variable, InputError)
    print_rows(ds, variable, top, fmt)


@click.command(cls=Command)
@click.argument("store_url", metavar="STORE")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@reads_here()
def status(store_url: str, fmt: str) -> None:
    """Show done/total replicates per grid point of the sweep store STORE.

    Exits 0 only when every cell is done and its data intact, 1 otherwise
    (damaged cells are named; `run` recomputes them).
    """
    from ..analysis import checked_store
    from ..views import print_status

    with _lock_only(store_url):
        st, damage, ds = checked_store(store_url, InputError)
    text = st.describe(damage, limit=10**9) if damage else ""
    print_status(ds, fmt, damage, text)
    masks = (damage.done, damage.exact_done) if damage.done is not None else (ds["done"], ds["exact_done"])
    if "precision_state" in ds:  # complete: every point met its target or its cap
        from ..plan import stored_complete

        axes = list(ds.attrs.get("grid_axes", []))
        done = masks[0] if damage.done is not None else ds["done"].transpose(*axes, "replicate").values
        masks = (np.array(stored_complete(ds, np.asarray(done, dtype=bool))), masks[1])
    if damage or not all(bool(m.all()) for m in masks):
        raise click.exceptions.Exit(1)


def _progress(line: str) -> None:
    """A slow report's progress, on standard error (not under ``-q`` or ``--format json``)."""
    from ..views import verbosity

    if verbosity() >= 0:
        click.echo(line, err=True)


@click.command(cls=Command)
@click.argument("store_url", metavar="STORE")
@click.option("--out", "out_dir", default=None, type=click.Path(file_okay=False), help=(
    "Report folder (default: beside the store, results/x.zarr -> results/x.report).  An earlier report "
    "there is replaced: only the files it recorded making are removed; a folder holding a page or table "
    "boardsweep did not write is refused."))
@click.option("--variable", default=None, help=VARIABLE_HELP)
@click.option("--deck-orders", is_flag=True, help=(
    "Also compare the points without a single exact answer (shuffled decks) with the exact answers of the deck "
    "orders each replicate played: a chain solve per game, about a second each (minutes for a large sweep)."))
@click.option("--all", "every", is_flag=True, help=(
    "Every point's rows in the per-point tables and summary.json (gigabytes at 10^6 points).  By default, on a "
    "grid of more than 1,000 points, those of at most 1,000 evenly spaced points and the points the answer and "
    "the verdict name, the page saying which; the verdict tests every point either way."))
@JSON_FORMAT
@reads_here()
def report(store_url: str, out_dir: str | None, variable: str | None, deck_orders: bool, every: bool,
           fmt: str) -> None:
    """Write a report of STORE: the headline answers, the verdict, figures and tables (index.html, PNG, CSV).

    `--format json` prints where it is and its summary (the report's summary.json) as JSON;
    `summary` is null for a grid of more than 1,000 points (10,000 with --all: reported block by block)."""
    from ..analysis import open_store
    from ..api import report as write_report
    from ..store import local_root
    from ..views import pick_variable, default_out_dir

    with _lock_only(store_url):  # lazily: a grid of more than one block is reported block by block
        ds = open_store(store_url, InputError, eager=False)
    if variable is not None:
        variable = pick_variable(ds, variable, InputError)
    out = out_dir if out_dir is not None else str(default_out_dir(store_url, local_root(store_url)))
    quiet_for_json(fmt)
    summary = write_report(store_url, out, variable, loaded=ds, deck_orders=deck_orders, progress=_progress,
                           every=every)
    index = os.path.join(out, "index.html")
    if fmt == "json":
        click.echo(json_text({"store": store_url, "report": index, "folder": out,  # summary None: a grid in blocks
                              "summary_file": os.path.join(out, "summary.json"), "summary": summary}))
    else:
        click.echo(f"report written to {index}")
