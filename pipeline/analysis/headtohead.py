"""Strategies head to head: which one wins, by how much, and how many games the cap ended.

A game that declares ``extras["head_to_head"]`` (hk_monopoly) names the
parameters that take one value per seat (``per_seat``: ``buy_policy =
"always,never"``).  Where such a parameter is a grid axis, every value of it
that seats two different strategies A and B is a *line-up*; the line-ups of
one pair, in both seat orders, are pooled into one comparison:

* win share of A: the games a seat playing A won alone, over the games;
* ``difference = share(A) - share(B)``, the mean over the seat orders of
  each order's difference (each order weighs the same), its standard error
  per game, its ``level`` interval and the two-sided test of ``difference = 0``
  (:func:`boardsweep.core.stats.share_difference`); the p-values of every
  pair are also Holm-adjusted over the table;
* ``capped_share``: the share of games that the rounds cap ended (a
  two-seat game ends early exactly when a seat retires, ``ended_early``):
  where it is large, "wins" means "is the richer at the cap".

A pair whose line-ups do not put each strategy in each seat equally often is
not compared (its difference would mix the strategy with the seat's
advantage); it is named in ``attrs["unbalanced"]``.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from ...core import stats
from .dataset import game_of, point_params

__all__ = ["head_to_head", "HEAD_TO_HEAD_COLUMNS"]

#: The columns of :func:`head_to_head`'s table after the other grid axes.
HEAD_TO_HEAD_COLUMNS = ("a", "b", "lineups", "games", "share_a", "share_b", "tie_share", "difference", "se",
                        "low", "high", "z", "p", "p_holm", "capped_share", "cap")


def _seats(value: Any) -> list[str]:
    return [x.strip() for x in str(value).split(",")]


def _pairs(values: list[Any]) -> tuple[dict[tuple[str, str], list[int]], list[str]]:
    """Line-ups (indices along the axis) by pair (A, B) of strategies, A the
    one met first along the axis; and the pairs whose seat order is unbalanced."""
    order: list[str] = []
    groups: dict[tuple[str, str], list[int]] = {}
    for i, value in enumerate(values):
        seats = _seats(value)
        if len(seats) != 2 or seats[0] == seats[1]:
            continue
        order += [s for s in seats if s not in order]
        groups.setdefault(tuple(sorted(seats, key=order.index)), []).append(i)  # type: ignore[arg-type]
    balanced, unbalanced = {}, []
    for (a, b), members in groups.items():
        first = [_seats(values[i])[0] for i in members]
        (balanced.__setitem__((a, b), members) if first.count(a) == first.count(b)
         else unbalanced.append(f"{a} vs {b}"))
    return balanced, unbalanced


def _stratum(sel: xr.Dataset, names: dict, a_seat: int) -> tuple[float, float, float, float, float]:
    """Games won by the seat ``a_seat`` and by the other, games, ties and
    games ended early, summed over the finished replicates of one line-up."""
    done = sel["done"]
    wins = sel[names["wins"]].where(done).sum("replicate").values
    games = float(sel[names["games"]].where(done).sum("replicate"))
    ties = float(sel[names["ties"]].where(done).sum("replicate").values[0]) if names.get("ties") else np.nan
    early = float(sel[names["ended_early"]].where(done).sum("replicate").values[:2].sum())
    return float(wins[a_seat]), float(wins[1 - a_seat]), games, ties, early


def _row(ds: xr.Dataset, axis: str, names: dict, pair: tuple[str, str], members: list[int],
         where: dict[str, int], level: float) -> dict[str, Any]:
    values = ds[axis].values
    counts = np.array([_stratum(ds.isel({axis: i, **where}), names, _seats(values[i]).index(pair[0]))
                       for i in members])
    a, b, n, ties, early = counts.T
    found = stats.share_difference(a, b, n, level)
    point = {d: ds[d].values[k].item() for d, k in where.items()}
    cap = point_params(ds, {**point, axis: values[members[0]].item()}).get(names.get("cap", ""), np.nan)
    return {**point, "a": pair[0], "b": pair[1], "lineups": " | ".join(str(values[i]) for i in members),
            "games": int(n.sum()), "share_a": float(np.mean(a / n)), "share_b": float(np.mean(b / n)),
            "tie_share": float(np.mean(ties / n)), **{k: float(v) for k, v in found.items() if k != "df"},
            "capped_share": float(1.0 - np.mean(early / n)), "cap": cap}


def head_to_head(ds: xr.Dataset, axis: str | None = None, level: float = 0.95) -> pd.DataFrame | None:
    """The strategies of the per-seat grid axis ``axis`` (default: the first
    one the game names) compared pair by pair: one row per pair and per
    point of the other grid axes (:data:`HEAD_TO_HEAD_COLUMNS`).

    None where the game compares no strategies, no such axis is in the grid
    or no value of it seats two different strategies.  ``attrs``: ``axis``,
    ``level``, ``unbalanced`` (pairs left out), ``cap_name``.
    """
    game = game_of(ds)
    names = game.extras.get("head_to_head") if game is not None else None
    axes = list(ds.attrs.get("grid_axes", []))
    if not isinstance(names, dict):
        return None
    if axis not in names["per_seat"] or axis not in axes:
        axis = next((x for x in axes if x in names["per_seat"]), None)
    if axis is None:
        return None
    pairs, unbalanced = _pairs(list(ds[axis].values))
    if not pairs:
        return None
    keep = [v for v in (names["wins"], names["games"], names.get("ties"), names["ended_early"]) if v]
    mem = ds[[*keep, "done"]].isel(checkpoint=-1).compute()
    others = [x for x in axes if x != axis]
    rows = []
    for index in itertools.product(*(range(ds.sizes[x]) for x in others)):
        where = dict(zip(others, index))
        rows += [_row(mem, axis, names, pair, members, where, level) for pair, members in pairs.items()]
    table = pd.DataFrame(rows)
    table.insert(table.columns.get_loc("p") + 1, "p_holm", stats.holm(table["p"].to_numpy()))
    table.attrs = {"axis": axis, "level": level, "unbalanced": unbalanced, "cap_name": names.get("cap", "")}
    return table
