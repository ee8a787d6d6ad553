"""A test game whose integer outputs are -1 in some cells, beside seats that do not play.

A ledger of 3 seats (``players`` 2 or 3 play; the third seat does not play
at ``players = 2``): ``balance`` per seat is -1 for the first seat (a sum of
money of exactly -1, as hk_monopoly's ``money`` can be on a user's board),
3 for the second and -1 for the third where it plays (every replicate
alike: a share of the seats' sum is -1/1 = -1 and 3/1 = 3 at ``players = 3``,
-1/2 and 3/2 at ``players = 2``, whatever the pooling);
``shortfall`` (no seat dim, so stored int64 whatever the players) is -1 at
every checkpoint.  The store must read each -1 back as -1 and each seat that
does not play as missing: the thing under test is the store, not a game.
"""

from __future__ import annotations

import numpy as np

from dataclasses import replace

from boardsweep.core.games import Game, Param, Variable

SEATS = ("seat 1", "seat 2", "seat 3")


def simulate(params, seed, run_shape, checkpoints):
    balance = np.full((len(checkpoints), len(SEATS)), -1, np.int64)
    balance[:, 1] = 3
    return {"balance": balance, "shortfall": np.full(len(checkpoints), -1, np.int64),
            "games": np.asarray(checkpoints, np.int64)}


def summarize(params, sim, run_shape):
    return {"balance": sim["balance"][-1].tolist()}


GAME = Game(
    name="ledger",
    description="A ledger of seats whose balances can be -1 (test game).",
    params=(Param("players", 3, "seats that play", minimum=2, maximum=3),),
    run_shape={"games": 4},
    checkpoint_of="games",
    coords={"seat": SEATS},
    variables={
        "balance": Variable(("checkpoint", "seat"), "int64", "each seat's balance, summed over games"),
        "shortfall": Variable(("checkpoint",), "int64", "the house's shortfall, summed over games"),
        "games": Variable(("checkpoint",), "int64", "games played"),
    },
    exact_variables={},
    simulate=simulate,
    summarize=summarize,
)


def _marked(params, seed, run_shape, checkpoints):
    """:func:`simulate`, the third seat's balance int64's least value (the
    store's mark of no value, which a run refuses) at ``players = 3``."""
    out = simulate(params, seed, run_shape, checkpoints)
    if params["players"] == 3:
        out["balance"][-1, 2] = np.iinfo(np.int64).min
    return out


MARKED = replace(GAME, name="ledger_marked", simulate=_marked)
