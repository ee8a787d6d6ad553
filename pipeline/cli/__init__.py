"""The ``boardsweep`` command: click commands that call the Python API
(:mod:`boardsweep.pipeline.api`), and the entry point that starts fast.

Nothing in the package imports from here: the command is reached through its
entry point (``boardsweep.pipeline.cli.entry:command_line``, the ``boardsweep``
script and ``python -m boardsweep``), which ``__all__`` names.  The face is lazy
(PEP 562), as every folder's: importing it imports none of the command's modules.
"""

# ruff: noqa: F401 - the TYPE_CHECKING imports are this face's declaration of what it hands on

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

if TYPE_CHECKING:  # what type checkers and readers follow; at run time each name is imported on first use
    from .entry import command_line

#: This folder's modules -> the public names each gives the folder (the list above, for the run time).
_HOME = {
    "entry": ("command_line",),
}
_AS: dict[str, str] = {}
__all__, __getattr__ = lazy(__name__, _HOME, _AS)

