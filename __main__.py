"""``python -m boardsweep``: the ``boardsweep`` command."""

from boardsweep.pipeline.cli import main

main()
