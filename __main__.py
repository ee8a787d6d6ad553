"""``python -m boardsweep``: the ``boardsweep`` command."""

from .pipeline.entry import command_line

command_line()
