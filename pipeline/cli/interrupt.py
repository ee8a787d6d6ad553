"""What a Ctrl-C's one line says: what the interrupted command keeps and the command that resumes it.

A command that keeps its work when interrupted (``run``: every finished task is in
the store) names it here (:func:`keeps`) before the work starts; the line the
command ends with (:func:`line`) then says so, with the command to resume,
instead of a bare ``boardsweep: interrupted``.
"""

from __future__ import annotations

import shlex
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["starts", "keeps", "line", "RECEIVED"]

#: Set by the first Ctrl-C (:mod:`.entry`'s handler).  A library that catches every
#: exception (``except BaseException``, a bare ``except:``) may swallow the
#: KeyboardInterrupt it raised; the command then still ends as interrupted
#: (:func:`boardsweep.pipeline.cli.commands.main`), not with exit code 0.
RECEIVED = threading.Event()

_KEPT: dict[str, str] = {}
_ARGS: list[str] = []


def starts(argv: list[str] | None) -> None:
    """A command starts with the arguments ``argv`` (None: this process's): nothing kept yet."""
    _KEPT.clear()
    _ARGS[:] = sys.argv[1:] if argv is None else list(argv)


def keeps(what: str, store: str | None = None) -> None:
    """The command keeps ``what`` if interrupted from now on (``the finished tasks, in
    results/x.zarr``); the same command line resumes it.  ``store``: the store that
    holds them, where a local one that is not made yet means nothing was written."""
    _KEPT.update(what=what, again=shlex.join(["boardsweep", *_ARGS]), store=store or "")


def _not_made(root: Path | None) -> bool:
    """The local store folder ``root`` (None: none, or on object storage, not
    asked) has no root ``zarr.json`` yet: the run made no store."""
    return root is not None and not (root / "zarr.json").is_file()


def line(first: str = "boardsweep: interrupted") -> str:
    """The interruption's one line: ``first``, then what is kept and how to resume, where a command said so;
    before its store was made, that nothing was written."""
    if not _KEPT:
        return first
    from ..urls import local_root  # pathlib: imported at the command's end, not at the CLI's start

    root = local_root(_KEPT["store"]) if _KEPT["store"] else None
    if _not_made(root):
        return f"{first}; nothing was written (no store at {_KEPT['store']} yet); `{_KEPT['again']}` starts it again"
    if _KEPT["store"] and root is None:  # on object storage: whether the run made its store is not asked
        return f"{first}; {_KEPT['what']} if any finished, are kept; `{_KEPT['again']}` resumes"
    return f"{first}; {_KEPT['what']} are kept; `{_KEPT['again']}` resumes"
