"""The answer on one screen: the game's headline answers as compact tables.

What ``run`` and ``query --summary`` print: one table per headline quantity
of the game (:mod:`boardsweep.pipeline.analysis.headlines`), grid points as rows, then
the verdict, within a line budget (:data:`MAX_LINES` for a whole run).

Each headline is shown by its shape:

* a scalar (Shut the Box's mean rolls): ``estimate ± h`` with ``h`` the
  half-width of its ``level`` interval (the one its attrs name), the exact value and z;
* a few labels (seats): one column per label, the row's largest ``± h``;
* many labels (Monopoly's 41 locations): the most frequent labels, the
  largest |z| and, where the game has one, its short name (PE84's modal
  string);
* a distribution over games tested as a whole (rolls to finish): the most
  likely bin and Pearson's chi-square with its df.

A column empty for every shown row (no exact answer anywhere) is left out.
When the tables do not fit the budget the rows are cut: the points the
verdict flags first, then the first points in grid order; a line says how
many are shown and which command shows every one.  When a table is wider
than the console the grid axes are joined into one ``grid point`` column,
then the least important columns are left out.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..analysis import (flat_estimate, half_width, largest_z, most_likely, playing, point_agreement,
                        point_replicates, ranked, row_largest, tested_z)
from ..words import decimals, fmt_interval, fmt_to, fmt_z


__all__ = ["with_asked", "print_block_overview", "MAX_LINES", "LABEL_COLUMNS", "Block", "blocks", "answer_block", "short_verdict", "print_overview",
           "print_lines", "replicate_line"]

#: Lines a whole run's summary may take (banner, bar, tables, verdict, counts).
MAX_LINES = 45
#: Headlines with at most this many labels show one column per label.
LABEL_COLUMNS = 6
#: Most frequent labels shown for a distribution over many labels.
TOP = 3
#: Grid points the answer table shows where the spec names no ``[answer]`` (one that names it: every asked point).
ANSWER_ROWS = 12
#: :func:`print_overview`'s ``answer`` when the caller has not read it: read from the store.
READ: Any = object()


@dataclass
class Column:
    """One column of a headline table: its header, one text per row, and
    ``drop`` (0: always kept; higher: left out first when too wide)."""

    header: str
    cells: list[str]
    drop: int = 0
    right: bool = True


@dataclass
class Block:
    """One headline's table: a title line, columns, and a legend line."""

    title: str
    columns: list[Column]
    legend: str
    axes: list[Column] = field(default_factory=list)
    answer: list[str] = field(default_factory=list)  # the answer in words, printed under the table










def _kind(est, written: str = "written [low, high] where uneven") -> str:
    """The interval's kind in a few words (a legend's)."""
    from .interval_words import interval_name, noted

    name = interval_name(est, long=False)
    return name if name == "t interval" else noted(name, written)




def _scalar(est, name: str, picked: list[int], axes: list[str], agree: list[str],
            places: int | None = None) -> tuple[list[Column], str]:
    get = {k: flat_estimate(est, k, axes, "")[:, 0] for k in ("estimate", "se", "low", "high", "exact", "z")}
    level = f"{est.attrs['level']:.0%}"
    cols = [Column(f"{name} ± {level}", [fmt_interval(get["estimate"][i], get["low"][i], get["high"][i],
                                                         get["se"][i]) for i in picked])]
    cols.append(Column("exact", [fmt_to(get["exact"][i], places) for i in picked], drop=2 if places is None else 0))
    cols.append(Column("z", [fmt_z(get["z"][i]) for i in picked], drop=3))
    cols.append(Column("agree", [agree[i] for i in picked], drop=1, right=False))
    legend = f"± : half-width of the {level} {_kind(est)}, s.e. {_basis(est)}"
    if places is not None:
        legend += f"; exact to {places} decimals, as the question asks"
    if np.isfinite(get["exact"][picked]).any():
        legend += "; z = (estimate - exact) / s.e." + (" (exact CLT s.e.)" if _clt(est) else "")
    return cols, legend


def _text(ds, dim: str) -> list[str]:
    """A label dimension's labels as every table writes them (``>=N``: a histogram's last bin)."""
    from ..analysis import label_text

    return label_text(ds[dim])


def _playing(est, picked: list[int], axes: list[str]) -> list[int]:
    """The labels with an estimate at one of the ``picked`` points (seats that play somewhere)."""
    return playing(flat_estimate(est, "estimate", axes, est.attrs["dim"])[picked])


def _labels(ds, est, name: str, picked: list[int], axes: list[str], agree: list[str]) -> tuple[list[Column], str]:
    dim = est.attrs["dim"]
    labels = _text(ds, dim)
    get = {k: flat_estimate(est, k, axes, dim) for k in ("estimate", "se", "low", "high", "z")}
    level = f"{est.attrs['level']:.0%}"
    half = half_width(get["low"], get["estimate"], get["high"])
    cols = []
    for j in _playing(est, picked, axes):
        label = labels[j]
        cells = []
        for i in picked:
            cells.append(fmt_to(get["estimate"][i, j], decimals(row_largest(get["se"][i]))))
        cols.append(Column(str(label), cells))  # the label alone: the legend names the dimension
    widest = [row_largest(half[i]) for i in picked]
    ses = [row_largest(get["se"][i]) for i in picked]
    # a share every game had (s.e. 0): two digits of the half-width itself
    cols.append(Column(f"± {level}", [fmt_to(h, decimals(s) if s > 0 else decimals(h))
                                      for h, s in zip(widest, ses)]))
    cols.append(Column("largest |z|", [_worst(get["z"][i], labels) for i in picked], drop=2))
    cols.append(Column("agree", [agree[i] for i in picked], drop=1, right=False))
    legend = (f"± : the row's largest half-width of a {level} {_kind(est, 'its wider side')}, s.e. {_basis(est)}; "
              f"'-': the {dim} does not play there; columns: one {dim} each")
    return cols, legend


def _worst(z: np.ndarray, labels: list[str]) -> str:
    """The label of the largest |z| (:func:`~boardsweep.pipeline.analysis.largest_z`) and its z; ``-`` where none."""
    j = largest_z(z)
    return "-" if j is None else f"{labels[j]} {z[j]:.2f}"


def _top(ds, est, name: str, picked: list[int], axes: list[str], agree: list[str],
         modal=None) -> tuple[list[Column], str]:
    dim = est.attrs["dim"]
    labels = _text(ds, dim)
    get = {k: flat_estimate(est, k, axes, dim) for k in ("estimate", "se", "exact", "z", "p")}
    cols = []
    for rank in range(TOP):
        cells = []
        for i in picked:
            order = ranked(get["estimate"][i])
            j = order[rank] if rank < len(order) else None
            se = row_largest(get["se"][i])
            cells.append("-" if j is None or not np.isfinite(get["estimate"][i, j])
                         else f"{labels[j]} {fmt_to(get['estimate'][i, j], decimals(se))}")
        cols.append(Column(f"#{rank + 1}", cells, drop=0 if rank == 0 else 3 + rank))
    tested = tested_z(get["z"], get["p"])
    cols.append(Column("largest |z|", [_worst(tested[i], labels) for i in picked], drop=2))
    if modal is not None:
        cells = []
        for i in picked:
            exact = modal(get["exact"][i]) if np.isfinite(get["exact"][i]).all() else None
            cells.append(modal(get["estimate"][i]) + (f" ({exact})" if exact else ""))
        cols.append(Column("modal (exact)", cells))  # shown only where the spec asks for it: kept
    cols.append(Column("agree", [agree[i] for i in picked], drop=1, right=False))
    legend = (f"#n: the n-th most frequent {dim}, its estimate to 2 digits of its s.e. ({_basis(est)}); "
              f"z = (estimate - exact) / s.e." + (" (exact CLT s.e.)" if _clt(est) else ""))
    if modal is not None:
        legend += "; modal: Project Euler 84's"
    return cols, legend


def _fit(ds, est, name: str, picked: list[int], axes: list[str], agree: list[str]) -> tuple[list[Column], str]:
    dim = est.attrs["dim"]
    labels = _text(ds, dim)
    mode = flat_estimate(est, "estimate", axes, dim)
    stat = {k: flat_estimate(est, k, axes, "")[:, 0] for k in ("gof_chi2", "gof_df")}
    cells = []
    for i in picked:
        j = most_likely(mode[i])
        cells.append("-" if j is None else f"{labels[j]} ({mode[i, j]:.3g})")
    cols = [Column(f"most likely {dim}", cells),
            Column("chi2 / df", [f"{stat['gof_chi2'][i]:.1f} / {int(stat['gof_df'][i])}"
                                 if np.isfinite(stat["gof_df"][i]) else "-" for i in picked], drop=2),
            Column("agree", [agree[i] for i in picked], drop=1, right=False)]
    legend = ("chi2 / df: Pearson's goodness of fit of the pooled games against the exact distribution, "
              "bins merged to expected counts >= 5")
    return cols, legend


def _clt(est) -> bool:
    """Whether ``est``'s z uses the exact CLT s.e. (:mod:`boardsweep.pipeline.analysis.clt`)."""
    from .interval_words import test_kind

    return test_kind(est) == "z"


def _basis(est) -> str:
    """How the table's standard errors were found, in a few words."""
    return "per game" if est.attrs["basis"] == "units" else "across replicates"


def _modal(ds, shown: bool):
    """The game's modal string (PE84's), where the spec's ``[answer]`` asks for it (``modal = true``)."""
    from ..analysis import game_of

    game = game_of(ds)
    return None if game is None or not shown else game.extras.get("modal")


def _block(ds, name: str, est, verdict: dict, picked: list[int], modal: bool = False,
           headline: str | None = None, places: int | None = None) -> Block:
    """One headline's :class:`Block` at the grid points ``picked`` (flat
    indices in grid order); ``headline``: the name its verdict tests go by."""
    from ..analysis import cap_note, grid_points_at, grid_size

    axes = list(ds.attrs.get("grid_axes", []))
    shown = grid_points_at(ds, picked)  # only the points shown are made
    axis_cols = [Column(a, [str(point[a]) for point in shown], right=False) for a in axes]
    a = est.attrs
    agree = point_agreement(verdict, headline or name, grid_size(ds))
    if a["kind"] == "distribution" and "gof_p" in est:
        cols, legend = _fit(ds, est, name, picked, axes, agree)
    elif a["kind"] == "distribution" or (a["dim"] and len(_playing(est, picked, axes)) > LABEL_COLUMNS):
        cols, legend = _top(ds, est, name, picked, axes, agree, _modal(ds, modal))
    elif a["dim"]:
        cols, legend = _labels(ds, est, name, picked, axes, agree)
    else:
        cols, legend = _scalar(est, name, picked, axes, agree, places)
    cols = [c for c in cols if any(x not in ("-", "") for x in c.cells) or c.drop == 0]
    reps = point_replicates(est, axes, picked)
    if reps is not None:
        cols.append(Column("reps", [str(r) for r in reps], drop=4))
    capped = cap_note(ds, est)
    return Block(f"{name}: {a['description']}", cols, legend + (f"; {capped}" if capped else ""), axis_cols)


def blocks(ds, found: dict, verdict: dict, picked: list[int], modal: bool = False) -> list[Block]:
    """One :class:`Block` per headline for the grid points ``picked`` (flat
    indices in grid order); ``modal``: show the game's modal string."""
    return [_block(ds, name, est, verdict, picked, modal) for name, est in found.items()]


def answer_block(ds, found: dict, verdict: dict, answer, limit: int | None = None,
                 points: int | None = None) -> tuple[Block, list[int]] | None:
    """The block that answers the spec's question (:func:`boardsweep.pipeline.analysis.answer.answer_of`):
    its headline (one label of it where the spec names one) at every asked
    grid point, titled with the question; and those points.  Where the spec
    names no ``[answer]``, at most ``limit`` points (default
    :data:`ANSWER_ROWS`): those the verdict flags, then the first."""
    from ..analysis import asked_points, grid_size

    if answer is None or answer.headline not in found:
        return None
    versus = _versus(ds, answer)
    if versus is not None:
        return versus, asked_points(ds, answer)
    est, name = found[answer.headline], answer.headline
    picked = asked_points(ds, answer)
    if answer.all_labels and est.attrs["dim"] and len(picked) == 1:
        return _every_label(ds, est, name, picked[0], answer.question), picked
    if answer.label is not None and est.attrs["dim"]:
        dim = est.attrs["dim"]
        est = est.sel({dim: _label_value(ds, dim, answer.label)}).drop_vars(dim)
        est.attrs = {**found[answer.headline].attrs, "dim": "", "kind": "mean"}
        name = f"{name} {answer.label}"
    most = ANSWER_ROWS if limit is None else limit
    if not answer.given and len(picked) > most:  # no [answer]: the flagged points, then the first
        picked = shown_points(verdict, len(picked), most)
    block = _block(ds, name, est, verdict, picked, answer.modal, headline=answer.headline,
                   places=answer.exact_decimals)
    if answer.given or _asks(ds, answer.headline):  # else (a plugin's headline, no question): its name and words
        block.title = answer.question
    whole = points or grid_size(ds)  # the whole grid's, where ds holds only the points shown
    if len(picked) < whole and not answer.at:
        block.legend += f"; showing {len(picked)} of {whole} grid points"
    return block, picked


def _versus(ds, answer) -> Block | None:
    """The strategies head to head where the answer's axis gives one per seat
    (:func:`boardsweep.pipeline.analysis.headtohead.head_to_head`): the
    question's answer is the pairs' differences, not each line-up's seats."""
    from ..analysis import head_to_head
    from .headtohead import head_to_head_answer, head_to_head_columns, head_to_head_legend

    table = head_to_head(ds, answer.axis)
    if table is None:
        return None
    others = [a for a in ds.attrs.get("grid_axes", []) if a != table.attrs["axis"]]
    columns = [Column(h, cells, drop, right=k >= len(others) + 1) for k, (h, cells, drop)
               in enumerate(head_to_head_columns(table, others))]
    return Block(answer.question, columns[len(others):], head_to_head_legend(table), columns[:len(others)],
                 head_to_head_answer(table, others))


def _every_label(ds, est, name: str, point: int, question: str) -> Block:
    """Every label of ``est`` at the grid point ``point`` (flat index), by
    name, largest first (:mod:`boardsweep.pipeline.views.every_label`)."""
    from .every_label import every_label_columns, every_label_legend

    axes = list(ds.attrs.get("grid_axes", []))
    if axes:
        est = est.stack(point=axes).isel(point=point).drop_vars(["point", *axes], errors="ignore")
    columns = [Column(h, cells, drop, right=h not in ("#", est.attrs["dim"]) or h == "#")
               for h, cells, drop in every_label_columns(ds, est, name)]
    return Block(question, columns, every_label_legend(est, _basis(est)))


def _asks(ds, name: str) -> bool:
    """Whether the game declares the question its headline ``name`` answers."""
    from ...core.games import headlines_of
    from ..analysis import game_of

    game = game_of(ds)
    return game is not None and any(h.name == name and h.question for h in headlines_of(game))


def _label_value(ds, dim: str, label: str):
    """The stored label whose text is ``label``."""
    return ds[dim].values[_text(ds, dim).index(label)]


def _width(columns: list[Column]) -> int:
    return sum(max([len(c.header), *(len(x) for x in c.cells)]) for c in columns) + 3 * (len(columns) - 1)


def _fitted(block: Block, width: int) -> tuple[list[Column], str]:
    """The block's columns, narrowed to ``width``: axes of one value in every
    row said in the note, the others joined, then columns dropped."""
    cols, axes, notes = [*block.axes, *block.columns], block.axes, []
    if _width(cols) > width and len(axes) > 1:
        same = [c for c in axes if len(set(c.cells)) == 1][:len(axes) - 1]
        notes = [f"{c.header} = {c.cells[0]} at every row" for c in same if c.cells]
        axes = [c for c in axes if c not in same]
    if _width([*axes, *block.columns]) > width and len(axes) > 1:
        notes.insert(0, f"grid point: {', '.join(c.header for c in axes)}")
        axes = [Column("grid point", [", ".join(x) for x in zip(*(c.cells for c in axes))], right=False)]
    cols = [*axes, *block.columns]
    note = "; ".join(notes)
    while _width(cols) > width and any(c.drop for c in cols):
        worst = max(cols, key=lambda c: c.drop)
        cols.remove(worst)
    return cols, note


def _table(cols: list[Column]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1))
    for c in cols:
        table.add_column(c.header, justify="right" if c.right else "left", no_wrap=True)
    for row in zip(*(c.cells for c in cols)):
        table.add_row(*row)
    return table


def shown_points(verdict: dict, points: int, rows: int) -> list[int]:
    """Up to ``rows`` grid points: those the verdict flags (worst first), then
    the first in grid order; returned in grid order."""
    if points <= rows:
        return list(range(points))
    keys = verdict.get("flagged_points", [])
    chosen = list(dict.fromkeys(keys))[:rows]
    for i in range(points):
        if len(chosen) >= rows:
            break
        if i not in chosen:
            chosen.append(i)
    return sorted(chosen)


def short_verdict(verdict: dict) -> str:
    """The verdict in one line: its first clause (AGREE/DISAGREE, how many
    points and tests), the rest of the sentence left to the details."""
    return verdict["text"].split("; ")[0]


def _print_block(out: Console, block: Block) -> None:
    cols, note = _fitted(block, out.width)
    out.print(f"[bold]{escape(block.title)}[/bold]", soft_wrap=False)
    out.print(_table(cols))
    out.print(block.legend + (f"; {note}" if note else ""), markup=False, style="dim")
    for line in block.answer:
        out.print(f"[bold]answer[/bold]: {escape(line)}")


def replicate_line(ds) -> str | None:
    """The replicate-disagreement flag in one short line (under 100
    characters: :func:`boardsweep.pipeline.analysis.variance.replicate_agreement`,
    Holm at family-wise 1%) over the whole of ``ds``, or None where nothing
    is tested or the grid has more than ``MAX_DIAGNOSED`` label cells (a
    grid read block by block keeps its memory a block's).  The run's and
    ``query --summary``'s last line of results."""
    from ..analysis import distribution_variables, MAX_DIAGNOSED, replicate_agreement

    small = [v for v in distribution_variables(ds) if ds[v].isel(checkpoint=-1, replicate=0).size <= MAX_DIAGNOSED]
    found = [replicate_agreement(ds, v) for v in small]
    found = [f for f in found if f["labels"]]
    if not found:
        return None
    flagged, labels = found[0]["flagged"], found[0]["labels"]
    return (f"replicates: {'DIFFER' if flagged else 'agree'} ({flagged} of {labels} labels flagged; "
            f"heterogeneity F test, Holm at {found[0]['alpha']:.0%})")


def render_answer(out: Console, ds, found: dict, verdict: dict, answer, where: tuple[bool, str, str],
                  limit: int | None = None, points: int | None = None) -> list[str]:
    """The first lines: the question, its answer at every asked point (at most
    ``limit`` where the spec asks none), the verdict in one line and where the
    details are: ``where`` = (tables follow, the command that shows every
    point, the command that writes the report)."""
    from ..analysis import grid_size

    below, every_row, report = where
    with out.capture() as cap:
        made = answer_block(ds, found, verdict, answer, limit, points)
        if made is not None:
            _print_block(out, made[0])
        out.print(f"[bold]verdict[/bold]: {escape(short_verdict(verdict))}")
        cut = made is not None and len(made[1]) < (points or grid_size(ds)) and not answer.at
        details = ("the tables below" if below else f"every point: {every_row}" if cut
                   else f"figures, tables and every test: {report}")
        out.print(f"details: {details}", markup=False, style="dim", soft_wrap=True)
    return cap.get().splitlines()


def render(out: Console, ds, found: dict, verdict: dict, rows: int, every_row: str,
           modal: bool = False, full: bool = True, hidden: tuple[str, ...] = (),
           points: int | None = None) -> list[str]:
    """The details' lines at ``rows`` grid points per table: every headline
    of ``found`` but the ``hidden`` ones (named, with the command that shows
    them), the whole verdict (``full``), its power and how many points are shown
    (``points``: the whole grid's, where ``ds`` holds only the points shown)."""
    from ..analysis import grid_size, HOLM_TEXT

    n = grid_size(ds)
    whole = points or n
    picked = shown_points(verdict, n, rows)
    tables = {k: v for k, v in found.items() if k not in hidden}
    with out.capture() as cap:
        for block in blocks(ds, tables, verdict, picked, modal):
            _print_block(out, block)
        if hidden:
            out.print(f"also {', '.join(hidden)}, at every point: {every_row}", markup=False, soft_wrap=True)
        if full and short_verdict(verdict) != verdict["text"]:
            out.print(f"[bold]verdict in full[/bold]: {escape(verdict['text'])}")
        if (verdict.get("power") or {}).get("text"):
            out.print(verdict["power"]["text"], markup=False)
        if full and verdict.get("tests"):
            out.print(f"agree: no Holm-adjusted p of the headline at the point below {verdict['alpha']:.0%}. "
                      f"{HOLM_TEXT}", markup=False, style="dim")
        if tables and len(picked) < whole:
            flagged = len(verdict.get("flagged", []))
            which = f" (every one of the {flagged} that disagree)" if flagged and flagged <= len(picked) else ""
            out.print(f"showing {len(picked)} of {whole} grid points{which}; every point: {every_row}",
                      soft_wrap=True, markup=False)
    return cap.get().splitlines()


def _details(found: dict, answer, versus: bool = False) -> dict:
    """The headlines the details show: all but the answer's own where the
    answer table shows it whole (no single label of it); the rest at every
    point is in ``query --summary --all``."""
    if answer is not None and answer.label is None and not versus:
        return {k: v for k, v in found.items() if k != answer.headline}
    return found


def print_overview(out: Console, ds, store: str, max_lines: int, every_row: str,
                   found: dict | None = None, verdict: dict | None = None, points: int | None = None,
                   answer: Any = READ) -> int:
    """Print the spec's question and its answer (every asked point, whatever
    ``max_lines``), the verdict in one line and where the details are, then
    the other headline tables in what is left of ``max_lines`` (at least
    three grid points per table); returns the lines printed.  ``points``: the
    whole grid's, where ``ds`` holds only the points shown
    (:func:`boardsweep.pipeline.analysis.blocks.run_overview`); ``answer``:
    the store's, where the caller has read it (else read here)."""
    from ..analysis import headline_estimates, headline_verdict, answer_of, grid_size

    found = headline_estimates(ds) if found is None else found
    verdict = headline_verdict(ds, found=found) if verdict is None else verdict
    answer = answer_of(ds) if answer is READ else answer
    modal = answer is not None and answer.modal
    n = grid_size(ds)
    rest = _details(found, answer, answer is not None and _versus(ds, answer) is not None)
    where = (bool(rest), every_row, f"`boardsweep report {shlex.quote(store)}`")
    given = answer is None or answer.given  # a spec's question: every asked point, whatever the budget
    rows = min(n, max(3, max_lines))  # a table never shows more rows than the lines it may take
    first = render_answer(out, ds, found, verdict, answer, where, None if given else rows, points)
    lines = render(out, ds, rest, verdict, rows, every_row, modal, points=points)
    while len(first) + len(lines) > max_lines and rows > 3:
        over = len(first) + len(lines) - max_lines
        rows = max(3, rows - max(1, over // max(len(rest) + (not given), 1)))
        first = render_answer(out, ds, found, verdict, answer, where, None if given else rows, points)
        lines = render(out, ds, rest, verdict, rows, every_row, modal, points=points)
    budget = max_lines - len(first)
    hidden: tuple[str, ...] = ()
    while len(lines) > budget and len(hidden) < len(rest):  # the answer took the screen: the last tables go
        hidden = tuple(list(rest)[len(rest) - len(hidden) - 1:])  # first the whole verdict, in the report
        lines = render(out, ds, rest, verdict, rows, every_row, modal, full=False, hidden=hidden, points=points)
    if rest and len(hidden) == len(rest):  # no table follows: the details line says where they are
        first = render_answer(out, ds, found, verdict, answer, (False, *where[1:]), None if given else rows, points)
    print_lines(out, first + lines)
    return len(first) + len(lines)


def print_block_overview(out: Console, ds, store: str, budget: int, every_row: str) -> None:
    """:func:`print_overview` of a grid summarised block by block
    (:func:`boardsweep.pipeline.analysis.blocks.run_overview`): the spec's
    answer read once, its asked rows shown whatever the cut."""
    from ..analysis import answer_of, BLOCK_POINTS, run_overview

    answer = answer_of(ds)
    shown = run_overview(ds, max(3, budget), with_asked(ds, answer, shown_points), most=BLOCK_POINTS,
                                url=store)
    print_overview(out, shown.ds, store, budget, every_row=every_row, found=shown.found,
                   verdict=shown.verdict, points=shown.points, answer=answer)


def with_asked(ds, answer, shown_points):
    """``shown_points`` and the grid points ``answer`` (the spec's ``[answer]``,
    :func:`boardsweep.pipeline.analysis.answer.answer_of`) asks (at most
    :data:`overview.ANSWER_ROWS`): the asked rows are read and shown whatever
    the cut, on a grid summarised block by block too."""
    from ..analysis import asked_flat

    if answer is None or not answer.given:
        return shown_points
    asked = asked_flat(ds, answer)[:ANSWER_ROWS]
    return lambda verdict, points, rows: sorted(set(shown_points(verdict, points, rows)) | set(asked))


def print_lines(out: Console, lines: list[str]) -> None:
    """Print lines a console captured (their styles kept), one by one."""
    for line in lines:
        out.print(Text.from_ansi(line), soft_wrap=True)
