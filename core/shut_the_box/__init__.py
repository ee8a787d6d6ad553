"""shut_the_box: the dice-and-tiles game of Project Euler 640 (DESIGN 3.2).

Modules: ``rules`` (numba), ``simulate`` (Monte Carlo kernel), ``solve``
(the exact solver); ``game`` registers it through :mod:`boardsweep.core.games`.

The face hands nothing on: the pipeline reaches a game through its registration
(the ``boardsweep.games`` entry point names ``boardsweep.core.shut_the_box.game``),
never by importing from this folder (``tests/test_structure.py`` checks it).
"""

__all__: list[str] = []
