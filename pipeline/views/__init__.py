"""What a user sees: terminal output (banner, progress, summary, status, query rows)
and the report.

Code outside this folder imports from here (``from ..views import print_rows``),
never from its modules nor from :mod:`.report` (whose ``build_report`` and
``default_out_dir`` are handed on here): ``__all__`` is what the other folders
use of it.  The face is lazy (PEP 562): a name's module (rich, xarray, and for
the report matplotlib) is imported when the name is first asked for, so that
importing the folder costs nothing.
"""

# ruff: noqa: F401 - the TYPE_CHECKING imports are this face's declaration of what it hands on

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

if TYPE_CHECKING:  # what type checkers and readers follow; at run time each name is imported on first use
    from .display import announce, exact_words, run_summary, TaskBar, WaitingLine
    from .games import print_game, print_games
    from .query_rows import print_block_summary, print_headline_summary, print_rows, summary_record
    from .report import build_report, default_out_dir, report_points
    from .status import print_status
    from .terminal import console, fit_streams, info, print_summary, restore_streams, set_verbosity, verbosity
    from .variable import pick_variable

#: This folder's modules -> the public names each gives the folder (the list above, for the run time).
_HOME = {
    "display": ("announce", "exact_words", "run_summary", "TaskBar", "WaitingLine"),
    "games": ("print_game", "print_games"),
    "query_rows": ("print_block_summary", "print_headline_summary", "print_rows", "summary_record"),
    "report": ("build_report", "default_out_dir", "report_points"),
    "status": ("print_status",),
    "terminal": ("console", "fit_streams", "info", "print_summary", "restore_streams", "set_verbosity", "verbosity"),
    "variable": ("pick_variable",),
}
_AS: dict[str, str] = {}
__all__, __getattr__ = lazy(__name__, _HOME, _AS)

