"""Planning a sweep: how many replicates and turns a target standard error or
a detectable bias needs, before running it.

:func:`plan_run` answers, per grid point and headline, from the spread of
one replicate's estimate at the spec's run shape (``sd``):

* the standard error the spec will reach, ``sd / sqrt(R)``, and the bias its
  verdict's weakest test will detect with 80% power given that spread, each
  label planned with the test the verdict will use on it
  (:func:`boardsweep.pipeline.analysis.clt.uses_clt`, the verdict's own rule:
  z on the exact CLT s.e., or t across replicates; from a pilot store,
  :func:`boardsweep.pipeline.analysis.skew.hall_moments`, the verdict's own
  rule too: Hall's test of a skewed per-game mean, its power
  :func:`boardsweep.pipeline.analysis.skew.hall_detectable_bias` with the
  pilot's skewness and kurtosis at the spec's games; a row's ``test``)
  (:func:`boardsweep.core.power.detectable_bias` at Holm's least
  level ``alpha / m``, ``m`` the tests of the verdict's family,
  :func:`boardsweep.pipeline.analysis.family.spec_family`: the tests the
  run's verdict makes, decided by the same rule);
* for a target s.e. ``s``: the replicates that reach it, ``ceil((sd / s)^2)``,
  the replicates at which the precision rule's 90% upper bound
  (:func:`boardsweep.pipeline.plan.precision.upper_factor`) reads it as met, and
  the turns (the run shape's unit) per replicate that reach it with the spec's
  replicates;
* for a bias ``d``: the replicates whose t test detects it with 80% power
  (:func:`boardsweep.core.power.replicates_for_bias`), and the turns at the
  spec's replicates.

Where the spread comes from (``source``):

* ``exact CLT variance``: the game's ``extras["asymptotic_variance"]``
  (Monopoly: ``Var(f_hat) ~ sigma^2 / rolls``, the Markov chain's exact
  asymptotic variance), with one roll counted per turn: a lower bound on the
  rolls (doubles add about a sixth), so the replicates and turns planned are
  upper bounds, at most about 20% above what is needed;
* ``pilot``: a finished store of the same game (``pilot=``): each headline's
  ``sd`` there (per game where the s.e. is pooled over games, of one
  replicate's ratio where it comes from the replicates), scaled to the
  spec's run shape by ``1 / sqrt(turns)`` (not for shuffled decks);
* shuffled decks (a point whose replicate plays one deck order forever, the
  game's ``no_exact_reason``): the error does not shrink with turns, only
  with replicates; the plan says so, and plans replicates only.

Nothing is simulated and nothing is written: the CLT variance is one Markov
chain solve per point (at most :data:`MAX_POINTS`, spread over the grid, the
largest s.e. of those counting for the rest).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ...core import power as tpower
from .clt import TEST_NAMES

__all__ = ["MAX_POINTS", "DRY_RUN_POINTS", "CLT_TEXT", "PLAN_TEST_TEXT", "SHUFFLED_TEXT", "plan_run",
           "dry_run_lines"]

#: Grid points whose CLT variance is solved (spread evenly over larger grids).
MAX_POINTS = 64
#: Grid points whose CLT variance ``run --dry-run`` solves.
DRY_RUN_POINTS = 12
#: How the exact CLT variance is used, in words.
CLT_TEXT = ("the exact CLT variance of the game's Markov chain (one roll counted per turn: a lower bound on "
            "the rolls, so the numbers are upper bounds; each label's bias is that of the test the verdict will "
            "use on it: z on the CLT s.e. where it expects enough counts, else t across replicates)")
#: The test a planned bias is for, by its one name (a row's ``test``: the verdict's tests table's).
PLAN_TEST_TEXT = TEST_NAMES
#: Why more turns do not help with shuffled decks.
SHUFFLED_TEXT = ("shuffled decks: each replicate plays one deck order for all its turns, so more turns do not "
                 "shrink the error between deck orders; only more replicates do")


def _spec(spec) -> Any:
    from ..spec import Spec, load_spec

    return spec if isinstance(spec, Spec) else load_spec(spec)


def _turns(spec) -> int:
    """The run shape's units per replicate: the product of its counts (games x players x turns)."""
    return int(np.prod([int(v) for v in spec.run_shape.values()]))


def _unit(spec) -> tuple[str, int]:
    """The run-shape entry more of which shrinks an error (``turns``, ``games``) and its value."""
    name = spec.game.checkpoint_of
    return name, int(spec.run_shape[name])


def _clt_rows(spec, most: int) -> list[dict[str, Any]]:
    """Per grid point (at most MAX_POINTS): the spread of one replicate's
    frequency estimate from the exact CLT variance, largest over labels."""
    from ...core.games import headlines_of
    from .family import picked_points

    game = spec.game
    hook = game.extras.get("asymptotic_variance")
    headline = next((h for h in headlines_of(game) if h.kind == "distribution" and h.squares is None), None)
    if hook is None or headline is None:
        return []
    reason = game.extras.get("no_exact_reason")
    units = _turns(spec)
    rows = []
    points = spec.resolved_points()
    for i in picked_points(len(points), most):
        params = points[i][1]
        shuffled = bool(reason(params)) if reason is not None else False
        row = {"point": i, "params": params, "headline": headline.name, "basis": "replicates",
               "labels": None, "sd": math.nan, "source": "shuffled decks" if shuffled else "exact CLT variance",
               "turns_help": not shuffled}
        if not shuffled:
            try:
                variance = np.asarray(hook(params)["variance"], dtype=float)
            except Exception:  # noqa: BLE001 - no theory for this point: no plan from it
                continue
            if np.isfinite(variance).any():
                row["sd"] = float(np.sqrt(np.nanmax(variance) / units))
                row["labels"] = int(np.isfinite(variance).sum())
                row.update(_tests_by_kind(spec, headline, params, variance, units, len(points)))
        rows.append(row)
    return rows


def _tests_by_kind(spec, headline, params: dict[str, Any], variance: np.ndarray, units: int,
                   points: int) -> dict[str, float]:
    """The spread of one replicate's estimate, largest over the labels the
    verdict will test against the CLT variance (``sd_clt``) and over those it
    will t-test across replicates (``sd_t``), decided by
    :func:`boardsweep.pipeline.analysis.clt.uses_clt` on the exact frequency
    times the events (one per turn: a lower bound); NaN where it has none."""
    from .clt import uses_clt
    from .dataset import MIN_COUNT

    game = spec.game
    try:
        ex = np.asarray(game.exact(params, dict(spec.run_shape), np.asarray(spec.checkpoints, dtype=np.int64)[-1:])
                        [headline.exact], dtype=np.float64)
    except Exception:  # noqa: BLE001 - no exact answer here: nothing is tested
        return {"sd_clt": math.nan, "sd_t": math.nan}
    if game.exact_variables[headline.exact].dims[:1] == ("checkpoint",):
        ex = ex[-1]
    ref = ex / np.nansum(ex) if np.nansum(ex) > 0 else ex
    tested = ref * units >= MIN_COUNT  # the family's labels (mean count per replicate)
    clt = tested & uses_clt(variance, ref * units * spec.replicates, points)
    sd = np.sqrt(np.where(np.isfinite(variance), variance, np.nan) / units)
    found = {}
    for name, mask in (("sd_clt", clt), ("sd_t", tested & ~clt)):
        found[name] = float(np.nanmax(sd[mask])) if mask.any() and np.isfinite(sd[mask]).any() else math.nan
    return found


def _pilot_rows(spec, pilot, scale: bool = True) -> list[dict[str, Any]]:
    """Per headline: the largest spread over the pilot store's points and
    labels, scaled to the spec's run shape (``scale``; not for shuffled decks,
    whose spread between deck orders does not shrink with turns)."""
    import xarray as xr

    from . import headlines
    from ..store import load_sweep

    ds = pilot if isinstance(pilot, xr.Dataset) else load_sweep(str(pilot), check=False)
    if ds.attrs.get("game") != spec.game_name:
        raise ValueError(f"pilot store is of game {ds.attrs.get('game')!r}, the spec's is {spec.game_name!r}")
    from .dataset import run_shape_of

    shape = run_shape_of(ds)
    pilot_units = int(np.prod([int(v) for v in shape.values()])) if shape else None
    units = _turns(spec)
    rows = []
    for name, est in headlines.estimates(ds).items():
        sd = est["sd"].values
        if not np.isfinite(sd).any():
            continue
        spread = float(np.nanmax(sd))
        if est.attrs["basis"] == "units":  # sd per game: one replicate's estimate is sd / sqrt(its games)
            spread /= math.sqrt(units)
        elif pilot_units and scale:  # sd of one pilot replicate: 1 / sqrt(turns) to the spec's
            spread *= math.sqrt(pilot_units / units)
        dim = est.attrs["dim"]
        gof = est.attrs["kind"] == "distribution" and est.attrs["basis"] == "units"  # one chi-square a point
        rows.append({"point": None, "params": None, "headline": name, "basis": est.attrs["basis"], "sd": spread,
                     "source": "pilot", "turns_help": True, "labels": 1 if gof or not dim else int(est.sizes[dim]),
                     "test": "chi2" if gof else "binomial" if est.attrs.get("test_kind") == "binomial" else "t",
                     **_pilot_hall(ds, name, est)})
    return rows


def _pilot_hall(ds, name: str, est) -> dict[str, Any]:
    """``moments``: the pilot's games' ``n``, ``m2``, ``m3``, ``m4`` per point
    (flat, finite) where the verdict tests headline ``name`` by Hall's test
    (:func:`boardsweep.pipeline.analysis.skew.hall_moments`, the verdict's own
    rule); nothing elsewhere."""
    from ...core.games import headlines_of
    from . import skew
    from .dataset import game_of

    game = game_of(ds)
    hs = headlines_of(game) if game is not None else ()
    h = next((g for g in hs if g.name == name), None)
    found = (skew.hall_moments(ds, h, hs, -1, ds["done"].astype(bool), est.attrs["basis"])
             if h is not None else None)
    if found is None:
        return {}
    flat = {k: np.ravel(found[k].values) for k in ("n", "m2", "m3", "m4")}
    keep = np.all([np.isfinite(v) for v in flat.values()], axis=0) & (flat["n"] > 3) & (flat["m2"] > 0)
    return {"moments": {k: v[keep] for k, v in flat.items()}} if keep.any() else {}


def _hall_bias(r: dict[str, Any], games: int, level: float, power: float) -> float:
    """The bias Hall's test sees with probability ``power`` at the weakest
    pilot point, planned at ``games`` games pooled: each point's per-game
    ``sd`` over ``sqrt(games)`` as the true s.e., its ``a`` and se_df at that
    size (:func:`boardsweep.pipeline.analysis.skew.hall_detectable_bias`,
    the verdict's formula, the s.e. known)."""
    from . import skew

    m, n = r["moments"], float(games)
    se = np.sqrt(m["m2"] * m["n"] / (m["n"] - 1.0) / n)
    a = skew.hall_a(n, m["m2"], m["m3"])
    nu = skew.se_df(n - 1.0, n, m["m2"], m["m4"])
    return float(np.nanmax(skew.hall_detectable_bias(se, nu, a, level, power, estimated=False)))


def _hall_games(r: dict[str, Any], bias: float, level: float, power: float, most: int = 10**9) -> int | None:
    """The fewest games pooled at which Hall's test sees ``bias`` with
    probability ``power`` at every pilot point (:func:`_hall_bias` at most
    ``bias``; it falls as the games grow), or None above ``most``."""
    def sees(n: int) -> bool:
        with warnings.catch_warnings():  # too few games for a df: all NaN, not seen
            warnings.simplefilter("ignore", RuntimeWarning)
            return _hall_bias(r, n, level, power) <= bias

    lo, hi = 2, 4
    while not sees(hi):
        if hi >= most:
            return None
        lo, hi = hi, min(2 * hi, most)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if sees(mid) else (mid, hi)
    return hi


def _rule_replicates(sd: float, target: float, most: int = 100_000) -> int | None:
    """The fewest replicates at which the precision rule's 90% upper bound of
    an s.e. at its expected value ``sd / sqrt(R)`` is at most ``target``."""
    from ..plan import upper_factor

    for r in range(2, most + 1):
        if sd * sd / r * float(upper_factor(r - 1)) <= target * target:
            return r
    return None


def plan_run(spec, stderr: float | None = None, detectable: float | None = None, pilot=None,
             alpha: float | None = None, power: float = tpower.POWER, max_points: int = MAX_POINTS
             ) -> dict[str, Any]:
    """How many replicates and turns a target s.e. or a detectable bias needs.

    Parameters
    ----------
    spec : Spec or str
        The sweep spec (or the path of its TOML file).
    stderr : float, optional
        Target standard error (the estimate's units, as ``[precision] stderr``).
    detectable : float, optional
        The bias the verdict should detect with probability ``power``.
    pilot : str or xarray.Dataset, optional
        A finished store of the same game whose spread stands in where the
        game has no exact CLT variance (and for shuffled decks).
    alpha : float, optional
        Family-wise level of the verdict (default :data:`headlines.ALPHA`).
    power : float
        Power at which a bias counts as detected.
    max_points : int
        Grid points whose CLT variance is solved (about 0.3 s each), evenly
        spread; the largest spread over them stands for the grid.

    Returns
    -------
    dict
        ``rows``: one dict per (grid point, headline) with ``source``,
        ``basis``, ``sd`` (one replicate's spread at the spec's shape),
        ``se`` (at the spec's replicates), ``detectable`` (its 80%-power bias),
        ``replicates_for_stderr``, ``replicates_rule`` (where the 90% upper
        bound reads it as met), ``turns_for_stderr`` (the run shape's
        ``unit`` entry, e.g. turns or games, per replicate at the spec's
        replicates; None where more of it does not help),
        ``replicates_for_bias``, ``turns_for_bias``; ``tests`` (``m``: the
        tests the run's verdict makes, :func:`boardsweep.pipeline.analysis.family.spec_family`), ``level`` (``alpha / tests``), ``unit``, ``sources`` and
        ``text``: lines that say it, the source first.
    """
    from . import headlines
    from .family import spec_family

    spec = _spec(spec)
    alpha = headlines.ALPHA if alpha is None else alpha
    rows = _rows(spec, pilot, max_points)
    m = spec_family(spec, max_points)["tests"]
    level = alpha / m
    for r in rows:
        _plan_row(spec, r, level, power, stderr, detectable)
    sources = sorted({r["source"] for r in rows})
    return {"rows": rows, "tests": m, "level": level, "alpha": alpha, "power": power, "sources": sources,
            "unit": _unit(spec)[0],
            "text": _text(spec, rows, m, alpha, power, stderr, detectable)}


def _rows(spec, pilot, max_points: int) -> list[dict[str, Any]]:
    """The rows planned from: the exact CLT variance, and the pilot store's
    spread where that has none (and for shuffled decks)."""
    rows = _clt_rows(spec, max_points)
    if pilot is not None:
        have = {r["headline"] for r in rows if math.isfinite(r["sd"])}
        shuffled = any(r["source"] == "shuffled decks" for r in rows)
        for r in _pilot_rows(spec, pilot, scale=not shuffled):
            if r["headline"] not in have or shuffled:
                r["turns_help"] = not shuffled
                rows.append(r)
    return [r for r in rows if math.isfinite(r["sd"]) or r["source"] == "shuffled decks"]


def _plan_row(spec, r: dict[str, Any], level: float, power: float, stderr: float | None,
              detectable: float | None) -> None:
    """Adds to row ``r`` its s.e., detectable bias, and the replicates and
    turns a target s.e. or bias needs (None where it does not apply)."""
    units, reps = _turns(spec), spec.replicates
    per = _unit(spec)[1]
    sd = r["sd"]
    r.update(replicates=reps, se=math.nan, detectable=math.nan, replicates_for_stderr=None,
             replicates_rule=None, turns_for_stderr=None, replicates_for_bias=None, turns_for_bias=None)
    if not math.isfinite(sd) or sd <= 0:
        return
    df = reps - 1 if r["basis"] == "replicates" else reps * units - 1
    r["se"] = sd / math.sqrt(reps)
    r["test"] = r.get("test", "t")  # the verdict's test (a pilot's chi-square has no single bias: none planned)
    r["detectable"] = (float(tpower.detectable_bias(r["se"], df, level, power)) if df >= 1 and r["test"] != "chi2"
                       else math.nan)
    if "sd_clt" in r:  # the verdict's own choice per label: z on the known CLT s.e., else t across replicates
        by_test = {"z": float(tpower.detectable_bias(r["sd_clt"] / math.sqrt(reps), math.inf, level, power)),
                   "t": float(tpower.detectable_bias(r["sd_t"] / math.sqrt(reps), df, level, power))
                   if df >= 1 else math.nan}
        found = {k: v for k, v in by_test.items() if math.isfinite(v)}
        if found:
            r["test"] = max(found, key=found.get)  # the weakest test
            r["detectable"] = found[r["test"]]
    if "moments" in r:  # the verdict's Hall test of a skewed mean: its own power, the weak side
        r["test"], r["detectable"] = "skew_t", _hall_bias(r, reps * units, level, power)
    if stderr:
        r["replicates_for_stderr"] = max(2, math.ceil((sd / stderr) ** 2))
        r["replicates_rule"] = (_rule_replicates(sd, stderr) if r["basis"] == "replicates"
                                else r["replicates_for_stderr"])
        if r["turns_help"]:
            r["turns_for_stderr"] = math.ceil(per * (r["se"] / stderr) ** 2)
    if detectable:
        if r["test"] == "z":  # a known s.e.: no df penalty, sd / sqrt(R) sees lam sd / sqrt(R)
            lam = float(tpower.detectable_bias(1.0, math.inf, level, power))
            r["replicates_for_bias"] = max(2, math.ceil((lam * r["sd_clt"] / detectable) ** 2))
        elif r["basis"] == "replicates":
            r["replicates_for_bias"] = tpower.replicates_for_bias(sd, detectable, level, power)
            lam = float(tpower.detectable_bias(1.0, df, level, power)) if df >= 1 else math.nan
        else:  # games are the unit: df is large whatever the replicates
            lam = float(tpower.detectable_bias(1.0, 10**6, level, power))
            r["replicates_for_bias"] = max(1, math.ceil((lam * sd / detectable) ** 2))
        se = r["sd_clt"] / math.sqrt(reps) if r["test"] == "z" else r["se"]
        if r["turns_help"] and math.isfinite(lam):
            r["turns_for_bias"] = math.ceil(per * (lam * se / detectable) ** 2)
        if r["test"] == "skew_t":  # Hall's test's own power, not the t factor: the games it needs pooled
            games = _hall_games(r, detectable, level, power)
            r["replicates_for_bias"] = None if games is None else max(2, math.ceil(games / units))
            r["turns_for_bias"] = (None if games is None or not r["turns_help"]
                                   else math.ceil(per * games / (reps * units)))


def _worst(rows: list[dict[str, Any]], key: str) -> dict[str, Any] | None:
    found = [r for r in rows if r.get(key) is not None and not (isinstance(r[key], float) and math.isnan(r[key]))]
    return max(found, key=lambda r: r[key]) if found else None


def _text(spec, rows, m, alpha, power, stderr, detectable) -> list[str]:
    if not rows:
        return [f"no plan: {spec.game_name} has no exact CLT variance; give a finished pilot store "
                "(boardsweep.plan_run(spec, pilot=...))"]
    lines = []
    sources = {r["source"] for r in rows}
    if "exact CLT variance" in sources:
        lines.append(f"planned from {CLT_TEXT}")
    if "pilot" in sources:
        lines.append("planned from the pilot store's spread, scaled to this run shape (1 / sqrt(turns))")
    if "shuffled decks" in sources:
        lines.append(SHUFFLED_TEXT + ("" if "pilot" in sources else
                                      " (their spread is not known before a run: plan from a pilot store)"))
    worst = _worst(rows, "se")
    if worst is not None:
        lines.append(f"at {spec.replicates} replicates: largest s.e. {worst['se']:.2g} ({worst['headline']}); "
                     f"{power:.0%} power against a bias of {_worst(rows, 'detectable')['detectable']:.2g} "
                     f"in it (Holm's {alpha:.0%}/{m}, {PLAN_TEST_TEXT[_worst(rows, 'detectable')['test']]})")
    if stderr:
        need = _worst(rows, "replicates_rule")
        if need is not None:
            lines.append(f"s.e. {stderr:g}: {need['replicates_for_stderr']} replicates reach it, the precision "
                         f"rule (its 90% upper bound) stops at about {need['replicates_rule']}"
                         + _or_turns(spec, rows, "turns_for_stderr"))
    if detectable:
        need = _worst(rows, "replicates_for_bias")
        if need is not None:
            lines.append(f"bias {detectable:g} at {power:.0%} power: {need['replicates_for_bias']} replicates"
                         + _or_turns(spec, rows, "turns_for_bias"))
    return lines


def _or_turns(spec, rows: list[dict[str, Any]], key: str) -> str:
    """``; or N turns a replicate at R replicates`` where more turns help everywhere, else nothing."""
    turns = _worst(rows, key)
    if turns is None or not all(r["turns_help"] for r in rows):
        return ""
    return f"; or {turns[key]:,} {spec.game.checkpoint_of} a replicate at {spec.replicates} replicates"


def dry_run_lines(spec) -> list[str]:
    """One or two lines for ``run --dry-run``: what the spec's run will be able
    to see, from the exact CLT variance where the game has one (nothing where
    it has none); the CLT variance of at most :data:`DRY_RUN_POINTS` points
    (about 0.3 s each), evenly spread."""
    try:
        spec = _spec(spec)
        if "asymptotic_variance" not in spec.game.extras:  # nothing to plan from before a run
            return []
        plan = plan_run(spec, max_points=DRY_RUN_POINTS)
    except Exception:  # noqa: BLE001 - a dry run says what it can, and goes on
        return []
    rows = plan["rows"]
    shuffled = "shuffled decks: more replicates shrink the deck-to-deck error, more turns do not"
    worst, seen = _worst(rows, "se"), _worst(rows, "detectable")
    if worst is None or seen is None:
        return [shuffled] if rows else []
    points = len(spec.resolved_points())
    some = f", {DRY_RUN_POINTS} of {points} points" if points > DRY_RUN_POINTS else ""
    first = (f"largest s.e. {worst['se']:.2g}; {plan['power']:.0%} power to see a bias of {seen['detectable']:.2g} "
             f"(Holm's {plan['alpha']:.0%}/{plan['tests']}{some}, {PLAN_TEST_TEXT[seen['test']]})")
    if any(r["source"] == "shuffled decks" for r in rows):
        return [first.replace(")", ", independent decks)"), shuffled]
    return [first, "from the exact CLT variance (upper bounds); more: boardsweep.plan_run(spec, stderr=, "
                   "detectable=)"]
