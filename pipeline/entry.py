"""The ``boardsweep`` command's entry point, importing almost nothing itself.

The command's modules (click, numpy, the games, Dask's configuration) take
a few tenths of a second to import; a Ctrl-C meanwhile would print Python's
traceback of the import under way.  Here it ends the command in one line,
with exit code 130, as a Ctrl-C later does (:func:`boardsweep.pipeline.cli.main`).
"""

from __future__ import annotations

import os
import sys

__all__ = ["command_line"]


def command_line() -> None:
    """:func:`boardsweep.pipeline.cli.command_line`, imported under a Ctrl-C guard."""
    try:
        from .cli import command_line as run
    except KeyboardInterrupt:
        try:
            sys.stderr.write("boardsweep: interrupted\n")
            sys.stderr.flush()
        finally:
            os._exit(130)
    run()


if __name__ == "__main__":
    command_line()
