"""The random streams' module re-exports the seed half (:mod:`boardsweep.core.seeds`)."""

from __future__ import annotations

from boardsweep.core import rng, seeds


def test_rng_gives_the_seeds_own_functions():
    for name in seeds.__all__:
        assert getattr(rng, name) is getattr(seeds, name), name
        assert name in rng.__all__
