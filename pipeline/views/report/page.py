"""``index.html``: the report's page, rendered from Jinja templates (its prose in
``templates/``), with the tables shown and their column definitions."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ...analysis import headlines
from ...words import count
from .grid import _axes


#: Grid points whose frequency tables are also shown on the page (all are in frequencies.csv).
MAX_PAGE_POINTS = 8


def _fmt(x: Any) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def _number(v: float) -> str:
    """4 significant digits; whole numbers (degrees of freedom, counts) in full."""
    return f"{v:.0f}" if float(v).is_integer() and abs(v) < 1e15 else f"{v:.4g}"


def _df_html(df: pd.DataFrame, limit: int | None = None) -> str:
    shown = df if limit is None else df.head(limit)
    shown = shown.apply(lambda c: c.where(c.notna(), np.nan) if c.dtype == object else c)  # None: "–"
    return shown.to_html(index=False, na_rep="–", float_format=_number, border=0, classes="t", escape=True)


def _interval(est: float, low: float, high: float) -> str:
    """``estimate ± half-width`` of a symmetric t interval, ``estimate [low,
    high]`` of an uneven one (an exact binomial interval near 0 or 1), in 4
    significant digits."""
    if not (math.isfinite(est) and math.isfinite(low) and math.isfinite(high)):
        return "–"
    up, down = high - est, est - low
    if abs(up - down) > 0.05 * max(up, down):
        return f"{est:.4g} [{low:.4g}, {high:.4g}]"
    return f"{est:.4g} ± {(high - low) / 2:.2g}"


def _page_headlines(ds, df: pd.DataFrame, meta: dict) -> pd.DataFrame:
    """The page's headline table: scalar headlines only (each label of a
    distribution is in the CSV and summarised in the distributions table),
    the interval as ``estimate ± half-width``, columns empty for every row left out."""
    scalar = [n for n, h in meta.get("headlines", {}).items() if h["kind"] != "distribution"]
    df = df[df["headline"].isin(scalar)]
    if df.empty:
        return df
    shown = df[[*_axes(ds), "headline", "label"]].copy()
    shown["95% interval"] = [_interval(e, lo, hi) for e, lo, hi in zip(df["estimate"], df["low"], df["high"])]
    for c in ("se", "df", "exact", "z", "p", "p_holm", "replicates"):
        shown[c] = df[c]
    if not shown["label"].astype(bool).any():
        shown = shown.drop(columns="label")
    return shown.dropna(axis=1, how="all")


def _html(ds, meta, tables, figures) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("boardsweep.pipeline.views", "templates"),
                      autoescape=select_autoescape(["html", "j2"]))
    env.filters["fmt"] = _fmt
    env.filters["count"] = count
    sections = []
    alpha = headlines.ALPHA
    holm = (f"p_holm is the p-value after Holm's adjustment over all the verdict's tests ({headlines.HOLM_TEXT}); "
            f"the verdict flags a test whose p_holm is below {alpha:.0%}, so with many tests a small p alone is "
            "no disagreement.")
    titles = {"headlines": "Headline answers: estimate ± 95% interval, exact, z",
              "distributions": "Distributions: most frequent labels, worst deviation, goodness of fit",
              "tests": "The verdict's tests, smallest p first", "points": "Every grid point",
              "comparisons": "Do rule variants differ? Welch tests, Holm, relative differences",
              "decomposition": "Shuffled decks: between-deck and within-deck variance, the paired deck test",
              "variance": "Variance per label: replicate s.d., MCSE, ESS, exact CLT variance",
              "frequencies": "Frequencies with 95% intervals", "precision": "Precision target per grid point"}
    intros = {
        "headlines": "The quantities the game exists to answer, per grid point: the estimate (ratio of sums over "
                     "the finished replicates) ± the half-width of its 95% t interval (df degrees of freedom), "
                     "its standard error se, the exact value, z = (estimate - exact) / se and its two-sided "
                     "p-value. " + holm + " Columns empty for every row are left out; the CSV also has "
                     "low, high, sd and every label of the distributions.",
        "distributions": "One row per grid point and distribution: its three most frequent labels with their "
                         "estimated shares, the label furthest from its exact value (largest |z|), and the test "
                         "the verdict makes of it: Pearson's chi-square goodness of fit of the pooled counts "
                         "where games are independent, else the smallest p of one t test per label. " + holm +
                         " Every label's estimate, interval and z: headlines.csv.",
        "tests": "Every comparison with an exact answer that the verdict makes, smallest p first. " + holm,
        "points": "One row per grid point; the grid axes are the first columns.",
        "comparisons": "Welch's t-test per label of the replicate means at the last checkpoint between two "
                       "values of one axis, every other axis equal; p-values Holm-adjusted over the labels "
                       f"of each comparison, a label counted as different below {alpha:.0%} (the verdict's "
                       "level).",
        "decomposition": "Each replicate plays its own deck shuffles for all its turns, whose exact answer is "
                         "known: total variance = between-deck + within-deck (sampling), per label. Where the "
                         "between-deck part dominates, more turns will not shrink the error; only more replicates "
                         "(deck orders) will. The paired deck test compares each replicate with its own decks: "
                         "its s.e. is the s.d. of those differences over sqrt(replicates), free of the deck-to-deck "
                         "spread. Shown here: the 3 labels with the largest between-deck share per point.",
        "variance": "Per grid point, headline and label: the s.d. of the replicates' own estimates, the Monte Carlo "
                    "standard error on the replicates (mcse = replicate_sd / sqrt(R)), the effective sample "
                    "size (arviz's N / tau: the independent units, games or turns, whose mean would be as "
                    "precise), the exact CLT variance where the game has it, with the replicate s.d. it predicts "
                    "and their ratio, and for shuffled decks the between- and within-deck parts. Shown here: the "
                    "label with the largest mcse per point and headline.",
        "frequencies": f"The first {MAX_PAGE_POINTS} grid points are shown here, without labels that nothing "
                       "fell in and whose exact frequency is 0; every point and label is in the CSV.",
        "precision": "Replicates were added per grid point until the largest standard error of the game's "
                     "estimates was at most the target; 'capped' points reached max_replicates first.",
    }
    for section, kinds in (("headlines", ("mean",)), ("distributions", ("distribution",))):
        bases = [f"{name}: {h['basis_text']}" for name, h in meta.get("headlines", {}).items() if h["kind"] in kinds]
        if bases:
            intros[section] += " Standard errors here: " + "; ".join(bases) + "."
    extra = {"95% interval": "estimate ± t(0.975, df) se: the 95% interval low..high (both in the CSV); a share "
                             "or histogram bin: its exact binomial interval, written [low, high] where uneven"}
    for name in ("headlines", "distributions", "tests", "precision", "points", "comparisons", "decomposition",
                 "variance", "frequencies"):
        df = tables.get(name)
        if df is None or df.empty:
            continue
        limit = 200 if name != "frequencies" else MAX_PAGE_POINTS * ds.sizes.get(meta.get("dim") or "", 1)
        if name == "frequencies":  # labels nothing fell in that cannot occur (e.g. 0 rolls): in the CSV only
            df = df.head(limit)
            df = df[~((df["estimate"] == 0) & ~(df["exact"] > 0))]
        also = ""
        if name in ("decomposition", "variance"):  # per label in the CSV; the page: the labels that matter
            key = "between_share" if name == "decomposition" else "mcse"
            group = [*_axes(ds), *(["headline"] if name == "variance" else [])]
            df = df.sort_values(key, ascending=False, kind="stable", na_position="last")
            df = (df.groupby(group, sort=False).head(3 if name == "decomposition" else 1) if group else df.head(3))
            df = df.sort_index()
        if name == "headlines":
            df = _page_headlines(ds, df, meta)
            if df.empty:  # distributions only: their table leads, and links this one
                continue
        if name == "distributions" and "headlines" not in [x["id"] for x in sections]:
            also = "headlines.csv"
        if name == "frequencies" and meta.get("drawn"):  # a distribution drawn as one: its bins in the CSV
            df = df.head(0)
            intros[name] = (f"Every {meta.get('dim')} bin of every grid point, estimate, se, interval and z, "
                            f"is in the CSV, drawn in {meta['drawn']}.png; none is listed here.")
        defined = meta["tables"][name]["columns"]
        sections.append({"id": name, "title": titles[name], "intro": intros[name], "also": also,
                         "csv": f"{name}.csv", "rows": len(tables[name]), "shown": min(len(df), limit),
                         "table": _df_html(df, limit) if len(df) else "",
                         "columns": {c: extra.get(c) or defined.get(c, "grid axis") for c in df.columns}})
    return env.get_template("report.html.j2").render(
        meta=meta, figures=figures, sections=sections, attrs=ds.attrs,
        axes={a: meta["grid"][a] for a in meta["grid"]})
