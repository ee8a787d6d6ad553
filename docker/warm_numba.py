"""Compile and cache every numba kernel once, at image build time.

Runs each game's simulation (and exact solver, where it has one) on a tiny run
shape for its default parameters and for every value of each choice parameter,
so the kernels' cache files in ``NUMBA_CACHE_DIR`` exist before a worker
starts: workers load compiled code instead of compiling it.
"""

from __future__ import annotations

import sys
import time

from boardsweep.core.games import ParameterError, game_names, get_game


def variants(game) -> list[dict]:
    """Default parameters, then each choice parameter set to each of its values."""
    out: list[dict] = [{}]
    for p in game.params:
        for value in p.choices or ():
            if value != p.default:
                out.append({p.name: value})
    return out


def shapes(game) -> list[dict]:
    """The smallest run shape, then every count at 2 (kernels may be compiled
    apart for one and for several of a thing, e.g. Monopoly's players)."""
    out = []
    for least in (1, 2):
        shape = game.resolve_run_shape({k: max(least, game.run_shape_minimum.get(k, 1)) for k in game.run_shape})
        shape[game.checkpoint_of] = max(shape[game.checkpoint_of], 4)
        out.append(shape)
    return out


def warm(name: str) -> int:
    """Run game ``name`` once per parameter variant and run shape; return how many ran."""
    game = get_game(name)
    ran = 0
    for given in variants(game):
        try:
            params = game.resolve_params(given)
        except ParameterError:
            continue  # a value only valid together with another parameter
        for i, shape in enumerate(shapes(game)):
            checkpoints = game.default_checkpoints(shape, 2)
            game.simulate(params, 0, shape, checkpoints)
            if game.exact is not None and i == 0:
                game.exact(params, shape, checkpoints)
        ran += 1
    return ran


def main() -> None:
    for name in game_names():
        t0 = time.perf_counter()
        ran = warm(name)
        print(f"numba cache warmed: {name} ({ran} variants, {time.perf_counter() - t0:.1f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
