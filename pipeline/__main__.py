"""Allow ``python -m pipeline`` as a synonym of the ``boardsweep`` command."""

from pipeline.cli import main

main()
