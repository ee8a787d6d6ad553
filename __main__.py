"""``python -m boardsweep``: the ``boardsweep`` command."""

from .pipeline.cli import main

main()
