"""``python -m boardsweep``: the ``boardsweep`` command."""

from .pipeline.cli.entry import command_line

command_line()
