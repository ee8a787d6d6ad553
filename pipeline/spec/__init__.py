"""The user's intent, frozen: a sweep spec parsed, validated and its grid resolved.

Nothing here decides how the sweep runs (that is :mod:`boardsweep.pipeline.plan`).

Code outside this folder imports from here (``from ..spec import Spec``), never
from its modules: ``__all__`` is what the other folders use of it (the shipped
examples under names of their own: ``example_names``, ``example_file``).  The
face is lazy (PEP 562): a name's module is imported when the name is first asked for.
"""

# ruff: noqa: F401 - the TYPE_CHECKING imports are this face's declaration of what it hands on

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

if TYPE_CHECKING:  # what type checkers and readers follow; at run time each name is imported on first use
    from .answer import Answer, check_answer, default_answer, recorded_table
    from .examples import (digest_file as example_digest_file, spec_file as example_file, names as example_names,
                           folder as examples_folder, is_bare, is_example, resolve_digest, resolve_spec)
    from .grid import grid_chunks, ResolvedGrid
    from .parse import load_spec, Spec
    from .tables import check_storable

#: This folder's modules -> the public names each gives the folder (the list above, for the run time).
_HOME = {
    "answer": ("Answer", "check_answer", "default_answer", "recorded_table"),
    "examples": ("example_digest_file", "example_file", "example_names", "examples_folder", "is_bare", "is_example",
                 "resolve_digest", "resolve_spec"),
    "grid": ("grid_chunks", "ResolvedGrid"),
    "parse": ("load_spec", "Spec"),
    "tables": ("check_storable",),
}
#: Names this face gives under a name of its own (clearer outside their module, or one a module
#: of this folder bears): public name -> the module's.
_AS = {"example_digest_file": "digest_file", "example_file": "spec_file", "example_names": "names",
       "examples_folder": "folder"}
__all__, __getattr__ = lazy(__name__, _HOME, _AS)

