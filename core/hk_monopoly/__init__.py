"""hk_monopoly: the 20-square HKD money game (DESIGN 3.3).

Modules: ``board`` (board files), ``rules`` (the turn rules, numba),
``simulate`` (Monte Carlo kernel), ``exact`` (movement chain), ``game``
(registration through :mod:`boardsweep.core.games`).

The face hands nothing on: the pipeline reaches a game through its registration
(the ``boardsweep.games`` entry point names ``boardsweep.core.hk_monopoly.game``),
never by importing from this folder (``tests/test_structure.py`` checks it).
"""

__all__: list[str] = []
