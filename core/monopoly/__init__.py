"""monopoly: the 40-square board game (DESIGN 3.1).

Modules: ``board``, ``cards``, ``rules``, ``step`` and ``kernel`` (the turn,
numba), ``simulate`` (Monte Carlo kernel), ``exact`` (movement chain),
``tables``, ``variance`` and ``replay``; ``game`` registers it through
:mod:`boardsweep.core.games`.

The face hands nothing on: the pipeline reaches a game through its registration
(the ``boardsweep.games`` entry point names ``boardsweep.core.monopoly.game``),
never by importing from this folder (``tests/test_structure.py`` checks it).
"""

__all__: list[str] = []
