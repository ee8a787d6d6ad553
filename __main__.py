"""``python -m boardsweep``: the ``boardsweep`` command."""

from .pipeline.cli import command_line

command_line()
