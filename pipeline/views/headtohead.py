"""Strategies head to head, as ``run``, ``query --summary`` and the report print them.

Draws :func:`boardsweep.pipeline.analysis.headtohead.head_to_head`'s table:
one row per pair of strategies (and point of the other grid axes), each
pair written winner first, the difference of win shares with its interval,
the Holm-adjusted p and the share of games the rounds cap ended; then the
answer in one sentence per pair.  No statistics here: the numbers are the
analysis table's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..words import decimals, fmt_p, fmt_to

__all__ = ["head_to_head_columns", "head_to_head_answer", "head_to_head_legend"]


def _oriented(row: pd.Series) -> dict[str, Any]:
    """The row written winner first: A the strategy with the larger share."""
    flip = row["difference"] < 0
    sign = -1.0 if flip else 1.0
    return {"a": row["b"] if flip else row["a"], "b": row["a"] if flip else row["b"],
            "share_a": row["share_b"] if flip else row["share_a"],
            "share_b": row["share_a"] if flip else row["share_b"],
            "difference": sign * row["difference"], "low": sign * (row["high"] if flip else row["low"]),
            "high": sign * (row["low"] if flip else row["high"])}


def _p(x: float) -> str:
    """A p-value to two significant digits; below 1e-6 as ``< 1e-6`` (more digits say nothing)."""
    return "< 1e-6" if np.isfinite(x) and x < 1e-6 else fmt_p(x)


def _percent(x: float) -> str:
    return "-" if not np.isfinite(x) else f"{x:.0%}" if x < 0.995 else f"{x:.1%}"


def head_to_head_columns(table: pd.DataFrame, others: list[str]) -> list[tuple[str, list[str], int]]:
    """(header, cells, drop) per column: the other grid axes, then the pair
    and its numbers; ``drop``: 0 always shown, higher left out first where too wide."""
    level = f"{table.attrs['level']:.0%}"
    rows = [_oriented(r) for _, r in table.iterrows()]
    d = [decimals(se) for se in table["se"]]
    return [*((axis, [str(v) for v in table[axis]], 0) for axis in others),
            ("A vs B", [f"{r['a']} vs {r['b']}" for r in rows], 0),
            ("A wins", [fmt_to(r["share_a"], k) for r, k in zip(rows, d)], 2),
            ("B wins", [fmt_to(r["share_b"], k) for r, k in zip(rows, d)], 3),
            (f"A - B [{level}]", [f"{fmt_to(r['difference'], k)} [{fmt_to(r['low'], k)}, "
                                  f"{fmt_to(r['high'], k)}]" for r, k in zip(rows, d)], 0),
            ("p Holm", [_p(p) for p in table["p_holm"]], 0),
            ("capped", [_percent(x) for x in table["capped_share"]], 0),
            ("games", [f"{int(n):,}" for n in table["games"]], 4)]


def head_to_head_legend(table: pd.DataFrame) -> str:
    """What the columns are, in one paragraph."""
    level = f"{table.attrs['level']:.0%}"
    cap = table.attrs.get("cap_name") or "cap"
    text = (f"each pair pooled over both seat orders (each order weighs the same); A wins: the share of games a "
            f"seat playing A won alone; A - B: the difference of win shares with its {level} t interval, s.e. "
            f"per game; p: test of no difference, Holm-adjusted over the {len(table)} pairs; capped: the share of games the {cap} "
            f"cap ended (nobody retired), won by the richer player at the cap")
    if table.attrs.get("unbalanced"):
        text += "; not compared (seat order unbalanced): " + ", ".join(table.attrs["unbalanced"])
    return text


def head_to_head_answer(table: pd.DataFrame, others: list[str], alpha: float = 0.05) -> list[str]:
    """The answer in one sentence per pair: who wins and by how much, or no
    difference found; and how many games the cap decided."""
    out = []
    for (_, row), r in zip(table.iterrows(), (_oriented(r) for _, r in table.iterrows())):
        k = decimals(row["se"])
        holm = f"Holm p {'' if row['p_holm'] < 1e-6 else '= '}{_p(row['p_holm'])}"
        where = "".join(f"{axis} = {row[axis]}, " for axis in others)
        span = f"{fmt_to(r['low'], k)} to {fmt_to(r['high'], k)}"
        if row["p_holm"] < alpha:
            said = (f"{r['a']} beats {r['b']}: its win share is higher by {fmt_to(r['difference'], k)} "
                    f"({table.attrs['level']:.0%} interval {span}, {holm})")
        else:
            said = (f"{r['a']} vs {r['b']}: no difference found (A - B = {fmt_to(r['difference'], k)}, "
                    f"{table.attrs['level']:.0%} interval {span}, {holm})")
        cap = f"{row['cap']}-round cap" if np.isfinite(_number(row["cap"])) else "cap"
        out.append(f"{where}{said}; {_percent(row['capped_share'])} of its games ended at the {cap}")
    return out


def _number(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")
