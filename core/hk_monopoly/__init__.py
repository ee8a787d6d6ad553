"""hk_monopoly: the 20-square HKD money game (DESIGN 3.3).

Modules: ``board`` (board files), ``rules`` (the turn rules, numba),
``simulate`` (Monte Carlo kernel), ``exact`` (movement chain), ``game``
(registration through :mod:`boardsweep.core.games`).
"""
