"""The report's verdict: the store's (:func:`headlines.verdict`, as ``run`` and ``query``
print it) with the counts of exact answers, and the deck check beside it."""

from __future__ import annotations


import numpy as np
import pandas as pd

from ....core import stats
from ...analysis import headline_verdict, HOLM_TEXT, LEVEL
from ...analysis import answer_counts
from ...words import count
from .grid import point_key, grid_axes, flat_points


def _deck_tests(ds, points, parts) -> pd.DataFrame:
    """Paired t tests (df = R - 1) of the points compared with the exact
    answers of the deck orders their replicates played, in
    :func:`headlines.tests` form: each replicate against its own decks, the
    s.e. from the spread of those differences (:func:`analysis.deck_pairs`),
    not from the total replicate spread, which holds the deck-to-deck part
    the pairing removes.  Labels too sparse for a t test (those without a z) are left out."""
    axes, dim = grid_axes(ds), parts["dim"]
    pairs = parts.get("pairs")
    if pairs is None:
        return pd.DataFrame(columns=["point", "headline", "label", "test", "statistic", "df", "p", "se"])
    z = flat_points(parts["z"], axes, [dim])
    t, df, p, se = (flat_points(pairs[k], axes, [dim]) for k in ("t", "df", "p", "stderr"))
    labels = [str(x) for x in ds[dim].values]
    rows = []
    for i, point in enumerate(points):
        if parts["ref_kind"].get(point_key(ds, point)) != "replicate decks":
            continue
        for j in np.flatnonzero(np.isfinite(z[i]) & np.isfinite(p[i])):
            rows.append({"point": i, "headline": "frequency (replicate decks, paired)", "label": labels[j],
                         "test": "t", "statistic": float(t[i][j]), "df": float(df[i][j]), "p": float(p[i][j]),
                         "se": float(se[i][j])})
    return pd.DataFrame(rows, columns=["point", "headline", "label", "test", "statistic", "df", "p", "se"])


def no_exact_notes(ds, points, parts) -> list[str]:
    """Why the points without a single exact answer have none (each reason once)."""
    return sorted({parts["states"][point_key(ds, p)][1].split(": ", 1)[-1] for p in points
                   if parts["states"][point_key(ds, p)][0] == "none"})


def report_verdict(ds, points, parts, pt: pd.DataFrame, found: dict, v: dict | None = None,
             none_notes: list[str] | None = None) -> dict:
    """The headline verdict (:func:`headlines.verdict`, Holm over every test
    of every point at family-wise ALPHA: the same family and text as ``run``
    and ``query``) with the counts of exact states, its stated power, and
    the deck check beside it.

    The deck check (points without a single exact answer against the mean
    exact answer of the deck orders their replicates played) is its own Holm
    family, not part of the verdict: its reference is not stored but solved
    here, only where that is affordable, so adding it would make the report
    test other hypotheses than ``run`` and ``query`` on the same store.
    ``v``: :func:`headlines.verdict` where the caller has it; ``none_notes``:
    why points have no single exact answer, where ``parts`` is not given."""
    v = headline_verdict(ds, found=found) if v is None else v
    deck = _deck_tests(ds, points, parts) if parts is not None else None
    states = answer_counts(pt["exact"].to_numpy() if "exact" in pt else [])
    out = {k: v[k] for k in ("alpha", "tests", "points", "agree", "min_p_holm", "at", "flagged")}
    out.update(with_reference=v["tested_points"], exact_stored=states["stored"],
               exact_none=states["none"], exact_pending=states["pending"],
               replicates_done=int(pt["replicates"].sum()) if "replicates" in pt else 0,
               point_agree=v["point_agree"], level=LEVEL)
    parts_text = [v["text"][0].upper() + v["text"][1:] + "."]
    if v["tests"]:
        parts_text.append(
            f"Every test of every grid point (headline means and shares: t tests against the exact value; "
            f"histograms over games: chi-square; frequencies estimated per replicate: one t test per "
            f"label with R-1 degrees of freedom) is Holm-adjusted together ({HOLM_TEXT}), so a correct "
            f"simulator reads 'disagree' anywhere with probability at most {v['alpha']:.0%}.")
    if v["power"]["text"]:
        parts_text.append(v["power"]["text"][0].upper() + v["power"]["text"][1:] + ".")
    tests = v["p_holm"].assign(family="verdict")
    if deck is not None and len(deck):
        deck["p_holm"] = stats.holm(deck["p"].to_numpy())
        tests = pd.concat([tests, deck.assign(family="deck check")], ignore_index=True)
        off = sorted({int(i) for i in deck.loc[deck["p_holm"] < v["alpha"], "point"]})
        parts_text.append(
            f"Deck check, not part of the verdict: {count(deck['point'].nunique(), 'point')} without a single "
            f"exact answer compared with the exact answers of the deck orders their replicates played "
            f"({count(len(deck), 'paired t test')}: each replicate against its own decks, the s.e. from the "
            f"spread of those differences; Holm-adjusted among themselves at {v['alpha']:.0%}): "
            + (f"{count(len(off), 'point')} differ" if off else "none differs")
            + "; only the report solves these references, so run and query print the verdict without them.")
    if out["exact_none"] and (parts is not None or none_notes):
        notes = no_exact_notes(ds, points, parts) if parts is not None else sorted(set(none_notes))
        parts_text.append(f"Why {count(out['exact_none'], 'point')} {'has' if out['exact_none'] == 1 else 'have'} "
                          f"no single exact answer: {'; '.join(notes)}.")
    if out["exact_pending"]:
        parts_text.append(f"{count(out['exact_pending'], 'point')}: exact answer not computed yet.")
    missing = int((pt["replicates"] == 0).sum()) if "replicates" in pt else 0
    if missing:
        parts_text.append(f"{count(missing, 'point')} {'has' if missing == 1 else 'have'} no finished "
                          "replicate yet.")
    out["text"] = " ".join(parts_text)
    out["power"] = {k: v["power"][k] for k in ("power", "level", "tests", "headlines", "few_replicates")}
    out["tests_table"] = tests
    return out
