"""The ``boardsweep`` command: click commands that call the Python API
(:mod:`boardsweep.pipeline.api`), and the entry point that starts fast.

Nothing in the package imports from here: the command is reached through its
entry point (``boardsweep.pipeline.cli.entry:command_line``, the ``boardsweep``
script and ``python -m boardsweep``), which ``__all__`` names.  The face is lazy
(PEP 562), as every folder's: importing it imports none of the command's modules.
"""

# ruff: noqa: F401 - the TYPE_CHECKING imports are this face's declaration of what it hands on

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and readers follow; at run time each name is imported on first use
    from .entry import command_line

#: This folder's modules -> the public names each gives the folder (the list above, for the run time).
_HOME = {
    "entry": ("command_line",),
}
_AS: dict[str, str] = {}
_WHERE = {name: module for module, names in _HOME.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    """A public name, read from its module (imported on first use) each time it is asked for (PEP 562):
    importing the folder imports none of its modules, a name costs its own module alone, and the name is
    the module's as it stands now, as a direct import of that module gave it (kept nowhere else)."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_WHERE[name]}", __name__), _AS.get(name, name))

