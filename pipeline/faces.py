"""How a folder of pipeline/ hands on its public names, lazily (PEP 562).

A folder's ``__init__`` lists, module by module, the names the other folders
use of it (``_HOME``), and :func:`lazy` makes its ``__all__`` and its
module-level ``__getattr__``: a name's module is imported when the name is
first asked for, and the name is read from that module each time (nothing
kept in the face), so importing a folder imports none of its modules, a name
costs its own module alone, and a name is its module's as it stands now.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable, Mapping

__all__ = ["lazy"]


def lazy(package: str, home: Mapping[str, tuple[str, ...]],
         renamed: Mapping[str, str] | None = None) -> tuple[list[str], Callable[[str], Any]]:
    """(``__all__``, ``__getattr__``) of the folder ``package`` whose modules
    ``home`` (module -> its public names) give it its names; ``renamed``
    (public name -> the name in its module) for a name a module bears
    otherwise."""
    where = {name: module for module, names in home.items() for name in names}
    renamed = dict(renamed or {})

    def __getattr__(name: str) -> Any:
        """A public name, read from its module (imported on first use) each time it is asked for."""
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f".{where[name]}", package), renamed.get(name, name))

    return sorted(where), __getattr__
