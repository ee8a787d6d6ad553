"""Run the ``boardsweep`` CLI in-process, as the tests' one way to call it."""

from __future__ import annotations


def run_cli(*args: str) -> int:
    """Call ``boardsweep.pipeline.cli.commands.main`` with ``args``; return its exit code (0 if it returns)."""
    from boardsweep.pipeline.cli.commands import main

    try:
        main(list(args))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0
