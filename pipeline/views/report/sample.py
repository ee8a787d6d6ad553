"""The grid points whose rows a report of a large grid writes: a bounded sample.

A report of a grid of more than :data:`TABLE_POINTS` points read in blocks
writes its per-point tables (headlines, distributions, tests, points,
frequencies, variance, precision) and ``summary.json`` for at most
:data:`TABLE_POINTS` + :data:`NAMED_POINTS` + ``ANSWER_ROWS`` points, however
large the grid: an evenly spaced sub-grid (:func:`sampled_axes`: each axis's
first and last value among those kept, the longest axis halved until the
sub-grid holds at most :data:`TABLE_POINTS`), then each point the spec's
``[answer]`` asks and the first :data:`NAMED_POINTS` the verdict flags (worst
first) that the sub-grid lacks.  The verdict still tests every point and its
counts (:func:`grid_counts`) read every point; ``report --all`` writes every
point's rows.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...analysis import panel_spread
from ...analysis import exact_states

__all__ = ["TABLE_POINTS", "NAMED_POINTS", "asked_points", "sampled_axes", "table_regions", "grid_counts",
           "sample_text", "sampled_words"]

#: The evenly spaced sub-grid's most points: some 10 KB of tables each for the money game (about 10 MB).
TABLE_POINTS = 1_000
#: The verdict's flagged points (worst first) whose rows are written besides the sub-grid.
NAMED_POINTS = 20


def asked_points(ds) -> np.ndarray:
    """The flat indices of the grid points the spec's ``[answer]`` asks (at most :data:`overview.ANSWER_ROWS`)."""
    from ...analysis import answer_of, asked_flat
    from ..overview import ANSWER_ROWS

    answer = answer_of(ds)
    if answer is None or not answer.given:
        return np.zeros(0, dtype=np.int64)
    return np.asarray(asked_flat(ds, answer)[:ANSWER_ROWS], dtype=np.int64)


def sampled_axes(shape: tuple[int, ...], most: int = TABLE_POINTS) -> list[np.ndarray]:
    """Each axis's kept indices: all of them, the longest axis's evenly spaced
    half kept (:func:`panel_spread`: its first and last among them), or as
    many as then fit where that is more, until the sub-grid, their product,
    holds at most ``most`` points (so more than ``most / 2`` where the grid has more)."""
    kept = [np.arange(n) for n in shape]
    while math.prod(len(k) for k in kept) > max(most, 1):
        longest = int(np.argmax([len(k) for k in kept]))
        n = len(kept[longest])
        fits = max(most, 1) // (math.prod(len(k) for k in kept) // n)
        kept[longest] = panel_spread(shape[longest], max(1, n // 2, fits))  # evenly over the whole axis
    return kept


def table_regions(ds, flagged: list[int], most: int = TABLE_POINTS) -> list[dict[str, np.ndarray]]:
    """The regions ({axis: indices}) whose rows the report writes: the
    sub-grid of :func:`sampled_axes`, then each asked or flagged point
    (the first :data:`NAMED_POINTS` of ``flagged``, flat indices) outside it, as a grid of one point."""
    axes = list(ds.attrs.get("grid_axes", []))
    shape = tuple(ds.sizes[a] for a in axes)
    kept = sampled_axes(shape, most)
    regions = [dict(zip(axes, kept))]
    named = list(dict.fromkeys([*asked_points(ds).tolist(), *[int(i) for i in flagged[:NAMED_POINTS]]]))
    for flat in named:
        where = np.unravel_index(flat, shape)
        if not all(np.isin(i, k) for i, k in zip(where, kept)):
            regions.append({a: np.array([i]) for a, i in zip(axes, where)})
    return regions


def grid_counts(ds) -> tuple[pd.DataFrame, list[str]]:
    """What the verdict counts at every grid point, without its tables: (a
    frame of one row a point in grid order, ``exact`` (its state) and
    ``replicates`` (finished: ``done`` summed over replicates); why the points
    without a single exact answer have none, each reason once)."""
    axes = list(ds.attrs.get("grid_axes", []))
    states, texts = exact_states(ds)
    done = ds["done"].transpose(*axes, "replicate").values.reshape(-1, ds.sizes["replicate"])
    flat = states.reshape(-1)
    none = flat == "none"
    notes = sorted({str(t).split(": ", 1)[-1] for t in texts.reshape(-1)[none]})
    frame = pd.DataFrame({"exact": pd.Categorical(flat.astype(str)), "replicates": done.sum(1).astype(np.int64)})
    return frame, notes


def sample_text(written: int, total: int, most: int = TABLE_POINTS) -> str:
    """How the rows written were chosen, for the page and ``report.json``."""
    return (f"the per-point tables and summary.json hold {written:,} of the grid's {total:,} points: an evenly "
            f"spaced sub-grid of at most {most:,} (each axis's first and last value among those kept), the "
            f"points the spec's [answer] asks and the first {NAMED_POINTS} the verdict flags; the verdict tests "
            "and counts every point; boardsweep report --all writes every point's rows")


def sampled_words(caption: str) -> str:
    """A figure's caption, its claim that the tables hold every point made the sample's."""
    return (caption.replace("every grid point is in", "the sampled grid points (the notes say which) are in")
            .replace("every bin of every point is in", "every bin of the sampled points is in"))
