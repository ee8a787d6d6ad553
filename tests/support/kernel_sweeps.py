"""Many small sweeps, fast: a game's own simulator (its numba kernel) called
directly per replicate with fresh seeds, the arrays stacked replicate first,
so that calibration and power tests can feed the product's statistical
functions hundreds of independent sweeps in seconds."""

from __future__ import annotations

import numpy as np

from boardsweep.pipeline.spec.parse import parse_spec

from specs import spec_toml


def points(game: str, grid: dict, run: dict, params: dict | None = None) -> tuple[list[dict], dict, np.ndarray]:
    """The resolved parameters of a spec's grid points, its run shape and checkpoints (one: the end)."""
    spec = parse_spec(spec_toml(game, name=game, seed=1, checkpoints={"count": 1}, grid=grid, params=params,
                                run={**run, "replicates": 2}), f"{game}.toml")
    return ([p for _, p in spec.resolved_points()], dict(spec.run_shape),
            np.asarray(spec.checkpoints, dtype=np.int64))


def replicates(game, params: dict, run_shape: dict, checkpoints: np.ndarray, n: int, seed: int
               ) -> dict[str, np.ndarray]:
    """``n`` independent replicates (seed ``[seed, r]``): each variable at the last checkpoint, replicate first."""
    runs = [game.simulate(params, np.random.SeedSequence([seed, r]), run_shape, checkpoints) for r in range(n)]
    return {k: np.stack([np.asarray(o[k])[-1] for o in runs]).astype(np.float64) for k in runs[0]}
