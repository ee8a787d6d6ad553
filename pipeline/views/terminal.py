"""What the commands print: games, progress bar, run summary, query rows, status.

Tables fit the console: a table too wide for a terminal is printed as one
narrower table per grid point, never with headers or numbers cut short.
Output that is not a terminal (a log file, a pipe: CI, cron) is not wrapped
at all, unless ``COLUMNS`` says how wide it is: every line is whole
(:data:`LOG_WIDTH`).  Standard errors have two significant digits
(``3.4e-05``); a legend under each table says what its cells mean.
"""

from __future__ import annotations

import json
import os
import textwrap
from typing import Any

from rich.console import Console
from rich.table import Table

from ..words import fmt_significant


#: -1 quiet (results and errors only), 0 normal, 1+ verbose.
_VERBOSITY = 0


#: What ``-`` means in every table.
NO_EXACT = "'-': no exact value for this grid point"


def verbosity() -> int:
    """-1 quiet, 0 normal, 1 and 2: ``-v`` and ``-vv``."""
    return _VERBOSITY


def set_verbosity(level: int) -> None:
    """Set how much the commands print (-1 quiet, 0 normal, >= 1 verbose)."""
    global _VERBOSITY
    _VERBOSITY = level


#: The width of output that is not a terminal (nor Jupyter) where ``COLUMNS`` is not set:
#: wide enough that no line boardsweep prints is wrapped (rich would wrap at 80).
LOG_WIDTH = 10_000


def console() -> Console:
    """The console every command prints to; where stdout cannot encode a
    character boardsweep prints, its text is spelled in ASCII before tables are
    laid out (so columns still line up).  Not a terminal, not Jupyter, no
    ``COLUMNS``: :data:`LOG_WIDTH` wide, so a log holds whole lines."""
    out = _AsciiConsole(highlight=False) if not _writes("±") else Console(highlight=False)
    if not out.is_terminal and not out.is_jupyter and not os.environ.get("COLUMNS"):
        out.width = LOG_WIDTH
    return out


class _AsciiConsole(Console):
    """A console whose strings are spelled with :data:`ASCII_SPELLINGS`."""

    def render_str(self, text: str, **kwargs: Any):  # type: ignore[override]
        return super().render_str(ascii_spelling(text), **kwargs)


def ascii_spelling(text: str) -> str:
    """``text`` with each character of :data:`ASCII_SPELLINGS` in its ASCII spelling."""
    return "".join(ASCII_SPELLINGS.get(c, c) for c in text) if not text.isascii() else text


def _writes(text: str) -> bool:
    """Whether stdout's encoding can write ``text``."""
    import sys

    try:
        text.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


#: The ASCII spelling of each character boardsweep prints outside ASCII, for an
#: output stream whose encoding cannot write it (``PYTHONIOENCODING=ascii``, a C locale).
ASCII_SPELLINGS = {"±": "+/-", "–": "-", "—": "-", "≥": ">=", "≤": "<=", "×": "x", "…": "...",
                   "≈": "~", "→": "->", "µ": "u", "·": "."}
_FALLBACK = "boardsweep-ascii"


def _spell(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    text = exc.object[exc.start:exc.end]
    return "".join(ASCII_SPELLINGS.get(c, "?") for c in text), exc.end


def fit_streams() -> list[tuple[Any, str]]:
    """Let stdout and stderr write what their encoding cannot: each such
    character in its ASCII spelling (``±`` as ``+/-``, others as ``?``) rather
    than a UnicodeEncodeError.  Returns [(stream, its former errors)] for
    :func:`restore_streams`; streams that can write ``±`` are left alone."""
    import codecs
    import sys

    try:
        codecs.lookup_error(_FALLBACK)
    except LookupError:
        codecs.register_error(_FALLBACK, _spell)
    changed = []
    for stream in (sys.stdout, sys.stderr):
        encoding, errors = getattr(stream, "encoding", None), getattr(stream, "errors", None)
        if not encoding or errors != "strict" or not hasattr(stream, "reconfigure"):
            continue
        try:
            "±".encode(encoding)
            continue
        except UnicodeEncodeError:
            pass
        except LookupError:  # an encoding Python does not know: not ours to change
            continue
        try:
            stream.reconfigure(errors=_FALLBACK)
        except (OSError, ValueError):  # a closed stream, or one that cannot change now
            continue
        changed.append((stream, errors))
    return changed


def restore_streams(changed: list[tuple[Any, str]]) -> None:
    """Undo :func:`fit_streams` (a Python caller of the CLI keeps its streams as they were)."""
    for stream, errors in changed:
        try:
            stream.reconfigure(errors=errors)
        except (OSError, ValueError):
            pass


def info(out: Console, text: str, soft_wrap: bool = False) -> None:
    """Print an informational line (not under -q); ``soft_wrap``: never cut
    (a line holding a path or a command to copy)."""
    if _VERBOSITY >= 0:
        out.print(text, soft_wrap=soft_wrap)








def _is_stderr(name: str) -> bool:
    """Whether a summary entry holds a standard error (two significant digits)."""
    return "std_error" in name or "stderr" in name or name.endswith("_se")


def _summary_cell(name: str, value: Any) -> str:
    if isinstance(value, float):
        return fmt_significant(value, 2 if _is_stderr(name) else 6)
    return str(value)


def print_summary(summary: dict[str, Any], dims: dict[str, tuple] | None = None) -> None:
    """Print a game's JSON-ready summary (``simulate``, ``exact``, ``replay``):
    its single values as ``name: value`` lines, then one table per set of
    labels, with a column per result over those labels (win share, its
    interval, final money: one table of seats), turned a quarter where only
    that fits the console, split by results where neither does.  ``dims`` ({dim: labels})
    names the label column; standard errors have two significant digits,
    other numbers six."""
    out = console()
    groups: dict[tuple, list[str]] = {}
    for key, value in summary.items():
        if isinstance(value, dict) and value and all(not isinstance(v, (dict, list)) for v in value.values()):
            groups.setdefault(tuple(str(k) for k in value), []).append(key)
        elif isinstance(value, (dict, list)):
            out.print(f"[bold]{key}[/bold]: {json.dumps(value)}", markup=True)
        else:
            out.print(f"[bold]{key}[/bold]: {_summary_cell(key, value)}")
    for labels, names in groups.items():
        dim = next((d for d, known in (dims or {}).items() if set(labels) <= {str(x) for x in known}), "label")
        records = [{dim: label, **{n: _summary_cell(n, summary[n][label]) for n in names}}
                   for label in labels]
        flipped = [{dim: n, **{label: r[n] for label, r in zip(labels, records)}} for n in names]
        if _width(records, [dim, *names]) > out.width and _width(flipped, [dim, *labels]) <= out.width:
            out.print(_table(None, [dim, *labels], flipped, set(labels)))
            continue
        for part in _fitting(records, dim, names, out.width):  # too wide either way: results split
            out.print(_table(None, [dim, *part], records, set(part)))


def _fitting(records: list[dict[str, str]], dim: str, names: list[str], width: int) -> list[list[str]]:
    """``names`` in consecutive groups whose tables (``dim`` column first) fit ``width``."""
    parts: list[list[str]] = [[]]
    for name in names:
        if parts[-1] and _width(records, [dim, *parts[-1], name]) > width:
            parts.append([])
        parts[-1].append(name)
    return parts


def _width(records: list[dict[str, str]], columns: list[str]) -> int:
    """Width of a rich table of these columns, borders and padding included."""
    return 1 + sum(3 + max([len(c), *(len(r[c]) for r in records)]) for c in columns)


def _table(title: str | None, columns: list[str], records: list[dict[str, str]],
           right: set[str]) -> Table:
    table = Table(title=title)
    for c in columns:
        table.add_column(c, justify="right" if c in right else "left", no_wrap=True,
                         min_width=max([len(c), *(len(r[c]) for r in records)]))
    for r in records:
        table.add_row(*(r[c] for c in columns))
    return table


def print_records(out: Console, title: str | None, records: list[dict[str, str]], group_by: list[str],
                  caption: str | None = None, right: set[str] | None = None) -> None:
    """Print ``records`` (rows of strings) as one table if it fits the console,
    else one table per value of the ``group_by`` columns under a heading line,
    else as ``column: value`` lines; full headers and values in every case."""
    columns = list(records[0]) if records else [*group_by]
    right = right or set()
    if isinstance(out, _AsciiConsole):  # widths measured as printed: `+/-` for `±`
        records = [{c: ascii_spelling(v) for c, v in r.items()} for r in records]
    if _width(records, columns) <= out.width or not group_by:
        if _width(records, columns) <= out.width:
            out.print(_table(title, columns, records, right))
            if caption:
                out.print(caption, markup=False)
            return
    rest = [c for c in columns if c not in group_by]
    groups: dict[tuple, list[dict[str, str]]] = {}
    for r in records:
        groups.setdefault(tuple(r[c] for c in group_by), []).append(r)
    if title:
        out.print(f"[bold]{title}[/bold]")
    for key, rows in groups.items():
        out.print(", ".join(f"{c}={v}" for c, v in zip(group_by, key)))
        if rest and _width(rows, rest) <= out.width:
            out.print(_table(None, rest, rows, right))
        else:
            for r in rows:
                out.print("  " + "  ".join(f"{c}: {r[c]}" for c in rest))
    if caption:
        out.print(caption, markup=False)


def wrap_to_width(text: str, indent: str, hang: str = "") -> str:
    """``text`` wrapped to the console width; continuation lines get ``hang`` more."""
    width = max(console().width, 40)
    return textwrap.fill(text, width, initial_indent=indent, subsequent_indent=indent + hang,
                         break_on_hyphens=False)
