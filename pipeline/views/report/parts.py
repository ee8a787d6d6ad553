"""The report variable analysed once for every table and figure: its convergence, CLT
theory, deck decomposition, comparisons between rule variants, references and z."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...analysis import convergence_of, convergence_rate, headlines_of_variable, axis_comparisons, compared_indices
from ...analysis import game_of, deck_pairs, shuffle_decomposition, batch_means, theoretical_variance, variance_ratio
from ...analysis import z_score
from ...errors import disk_full
from ...words import python_value
from .grid import point_key, grid_axes, flat_points, sel, exact_states_by_point


#: The CLT theory (one Markov-chain solve per grid point) is computed up to this many points.
MAX_THEORY_POINTS = 64
#: Values of a grid axis the report compares with its first (the comparisons table, the difference heatmaps).
MAX_COMPARED = 24


def attempt(meta: dict, what: str, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # report what failed, keep going; a full disk ends the report (ReportDiskFull)
        if disk_full(exc):
            raise
        meta["notes"].append(f"{what}: not available ({type(exc).__name__}: {exc})")
        return None


def _headline_of(ds, found: dict, variable: str, dim: str) -> str | None:
    """The distribution headline that estimates ``variable``'s frequencies over ``dim``, if any."""
    from ....core.games import headlines_of

    game = game_of(ds)
    for h in headlines_of(game) if game is not None else ():
        if h.numerator == variable and h.kind == "distribution" and h.name in found \
                and found[h.name].attrs.get("dim") == dim:
            return h.name
    return None


def analyse_parts(ds, variable, points, meta, found: dict, deck_orders: bool = False, progress=None,
             grid: int | None = None, compare: bool = True) -> dict:
    """Every analysis of the report variable; ``deck_orders``: also solve the
    exact answer of the deck orders each replicate played (a chain per game,
    about a second each: opt-in, announced through ``progress(line)``).
    ``grid``: the whole grid's points where ``ds`` is one block of it;
    ``compare``: also the comparisons between rule variants."""
    parts: dict[str, Any] = {"variable": variable, "deck_orders": deck_orders}
    parts["conv"] = conv = convergence_of(ds, variable)
    parts["dim"] = dim = conv.attrs["dim"]
    meta["dim"] = dim
    parts["rate"] = attempt(meta, "convergence rate", convergence_rate, conv) if "steps" in conv else None
    game = game_of(ds)
    has_theory = game is not None and "asymptotic_variance" in game.extras
    parts["theory"] = parts["ratio"] = parts["batch"] = None
    grid = len(points) if grid is None else grid
    if has_theory and grid > MAX_THEORY_POINTS:
        meta["notes"].append(f"CLT variance (variance ratio, batch means, theory band) computed only for grids "
                             f"of at most {MAX_THEORY_POINTS} points (one chain solve each); this grid has "
                             f"{grid}")
    elif has_theory:
        parts["theory"] = theory = attempt(meta, "theoretical variance", theoretical_variance, ds, variable)
        if theory is not None:
            parts["ratio"] = attempt(meta, "variance ratio", variance_ratio, ds, variable, theory)
            parts["batch"] = attempt(meta, "batch means", batch_means, ds, variable, theory)
    parts["decomp"] = parts["pairs"] = None
    if deck_orders and game is not None and "replicate_exact" in game.extras:
        parts["decomp"] = _deck_orders(ds, variable, meta, progress)
    if parts["decomp"] is not None:
        parts["pairs"] = attempt(meta, "paired deck test", deck_pairs, ds, parts["decomp"], variable)
    parts["compare"] = (attempt(meta, "axis comparisons", _comparisons, ds, variable, meta) or {}) if compare else {}
    parts["modal"] = game.extras.get("modal") if game is not None else None
    parts["states"] = exact_states_by_point(ds, points)
    parts["reference"], parts["ref_kind"] = _references(ds, points, parts, meta)
    # one estimator (ratio of sums, its s.e. and df): the headline's where the variable is a headline's
    parts["headline"] = name = _headline_of(ds, found, variable, dim)
    est = found[name] if name is not None else headlines_of_variable(ds, variable)
    parts["mean"], parts["se"], parts["df"] = est["estimate"], est["se"], est["df"]
    parts["low"], parts["high"] = est["low"], est["high"]  # the interval est's attrs name
    parts["est"] = est  # its attrs name its interval and test (the captions' words: views.interval_words)
    # no z where the replicates all agree (s.e. 0) or a label's counts are too few (query.z_score);
    # the s.e. the verdict's test uses (test_se: the exact CLT s.e. where the test is the CLT's)
    parts["z"] = z_score(parts["mean"] - parts["reference"], est["test_se"] if "test_se" in est else parts["se"],
                         ds[variable].isel(checkpoint=-1).mean("replicate"))
    if "exact" in est and "replicate decks" not in parts["ref_kind"].values():  # no z where the verdict's
        parts["z"] = parts["z"].where(np.isfinite(est["exact"]))  # exact answer does not apply (exact_unless)
    return parts


def _comparisons(ds, variable: str, meta: dict) -> dict:
    """:func:`comparisons.axis_comparisons` against at most :data:`MAX_COMPARED`
    values of each axis (the notes say where fewer than all)."""
    comparison_notes(ds, meta)
    return axis_comparisons(ds, variable, most=MAX_COMPARED)


def comparison_notes(ds, meta: dict) -> None:
    """Where an axis is compared with fewer than all its values, said in ``meta``'s notes."""
    for axis in grid_axes(ds):
        values, others = ds[axis].values, len(compared_indices(ds.sizes[axis], MAX_COMPARED))
        if others < len(values) - 1:
            meta["notes"].append(f"comparisons of {axis}: its first value {python_value(values[0])} against "
                                 f"{others} of its {len(values) - 1:,} other values (evenly spaced, the last "
                                 f"among them; at most {MAX_COMPARED} an axis)")


def _deck_orders(ds, variable, meta, progress):
    """:func:`decks.shuffle_decomposition`, with a line before and after it through ``progress``."""
    import time

    say = progress or (lambda line: None)
    done = int(ds["done"].sum())
    say(f"deck orders: solving the exact answer of the deck orders of {done} replicates (a chain per game, "
        "about a second each)...")
    t0 = time.perf_counter()
    found = attempt(meta, "shuffle decomposition", shuffle_decomposition, ds, variable)
    say(f"deck orders: {'done' if found is not None else 'not available (see the notes)'} in "
        f"{time.perf_counter() - t0:.1f} s")
    return found


def _references(ds, points, parts, meta):
    """The value each estimate is compared with, per grid point and label:
    the stored exact answer; else, where the game gives the exact answer of
    the environment each replicate played (deck orders), their mean."""
    conv, dim = parts["conv"], parts["dim"]
    ref = conv["exact"].isel(checkpoint=-1).copy()
    finite = np.isfinite(flat_points(ref, grid_axes(ds), [dim])).all(1)
    kind = {}
    dec = parts["decomp"]
    for i, p in enumerate(points):
        key = point_key(ds, p)
        state = parts["states"][key][0]
        if state == "stored" and finite[i]:
            kind[key] = "exact"
        elif state == "none" and dec is not None:
            rep = sel(dec["replicate_exact"], p).mean("replicate")
            if bool(np.isfinite(rep.values).all()):
                ref.loc[p] = rep.transpose(*ref.sel(p).dims).values if p else rep.values
                kind[key] = "replicate decks"
    game = game_of(ds)
    if game is not None and "replicate_exact" in game.extras and any(
            parts["states"][point_key(ds, p)][0] == "none" for p in points):
        if dec is None and not parts.get("deck_orders"):
            meta["notes"].append(
                "points without a single exact answer are compared with nothing: the exact answers of the deck "
                "orders each replicate played take a chain solve per game (about a second each), so the report "
                "solves them only when asked: boardsweep report STORE --deck-orders")
        elif dec is None:
            meta["notes"].append(
                "points without a single exact answer: the exact answers of the deck orders each replicate "
                "played were not computed (the run shape allows it only for a few games per replicate and "
                "at most 256 chain solves, one per game of every replicate); those points are compared with nothing")
        else:
            meta["notes"].append(
                "points without a single exact answer are compared with the mean of the exact answers of "
                "the deck orders each replicate played ('replicate decks')")
    return ref, kind
