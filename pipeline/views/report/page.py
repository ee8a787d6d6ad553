"""``index.html``: the report's page, rendered from Jinja templates (its prose in
``templates/``), with the tables shown and their column definitions."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ...analysis import ALPHA, HOLM_TEXT
from ...words import count, fmt_interval
from .grid import grid_axes


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


def df_html(df: pd.DataFrame, limit: int | None = None) -> str:
    shown = df if limit is None else df.head(limit)
    shown = shown.apply(lambda c: c.where(c.notna(), np.nan) if c.dtype == object else c)  # None: "–"
    return shown.to_html(index=False, na_rep="–", float_format=_number, border=0, classes="t", escape=True)


def _page_headlines(ds, df: pd.DataFrame, meta: dict) -> pd.DataFrame:
    """The page's headline table: scalar headlines only (each label of a
    distribution is in the CSV and summarised in the distributions table),
    the interval as ``estimate ± half-width``, columns empty for every row left out."""
    scalar = [n for n, h in meta.get("headlines", {}).items() if h["kind"] != "distribution"]
    df = df[df["headline"].isin(scalar)]
    if df.empty:
        return df
    shown = df[[*grid_axes(ds), "headline", "label"]].copy()
    shown["95% interval"] = [fmt_interval(e, lo, hi, se) for e, lo, hi, se in  # as every command writes it
                             zip(df["estimate"], df["low"], df["high"], df["se"])]
    for c in ("se", "df", "exact", "z", "p", "p_holm", "replicates"):
        shown[c] = df[c]
    if not shown["label"].astype(bool).any():
        shown = shown.drop(columns="label")
    return shown.dropna(axis=1, how="all")


#: The table sections of the page, in order (headlines and distributions lead, before the figures).
SECTIONS = ("headlines", "distributions", "tests", "precision", "points", "comparisons", "decomposition",
            "variance", "frequencies")


def _templates(autoescape: bool):
    from jinja2 import Environment, PackageLoader, select_autoescape

    return Environment(loader=PackageLoader("boardsweep.pipeline.views", "templates"),
                       autoescape=select_autoescape(["html", "j2"]) if autoescape else False)


def _words(text: str) -> str:
    """The prose of a template as one line: its whitespace collapsed."""
    return " ".join(str(text).split())


def _intro(prose, name: str, meta: dict) -> str:
    """Section ``name``'s introduction (``templates/report_prose.j2``), with the
    standard errors' bases of the headlines it shows."""
    alpha, holm = f"{ALPHA:.0%}", HOLM_TEXT
    kinds = {"headlines": ("mean",), "distributions": ("distribution",)}.get(name, ())
    shown = {n: h for n, h in meta.get("headlines", {}).items() if h["kind"] in kinds}
    bases = [f"{n}: {h['basis_text']}" for n, h in shown.items()]
    intervals, tests = (_per_headline(shown, key) for key in ("interval", "test"))
    args = {"headlines": (alpha, holm, bases, intervals, tests), "distributions": (alpha, holm, bases), "tests": (alpha, holm),
            "comparisons": (alpha,), "frequencies": (MAX_PAGE_POINTS, meta.get("dim"), meta.get("drawn"))}
    return _words(getattr(prose, name)(*args.get(name, ())))


def _per_headline(shown: dict, key: str) -> str:
    """``key`` ("interval", "test") of the headlines ``shown``: one phrase
    where all share it, else each with its headlines."""
    by: dict[str, list[str]] = {}
    for name, h in shown.items():
        by.setdefault(h.get(key, ""), []).append(name)
    if len(by) == 1:
        return next(iter(by))
    return "; ".join(f"{', '.join(names)}: {what}" for what, names in by.items())


def page_html(ds, meta, tables, figures) -> str:
    """The page: the summary, the leading tables, the figures, the other tables and the notes."""
    env = _templates(autoescape=True)
    env.filters["fmt"] = _fmt
    env.filters["count"] = count
    prose = _templates(autoescape=False).get_template("report_prose.j2").module
    sections: list[dict] = []
    for name in SECTIONS:
        section = _section(ds, meta, tables, name, prose, leads=[s["id"] for s in sections])
        if section is not None:
            sections.append(section)
    return env.get_template("report.html.j2").render(
        meta=meta, figures=figures, sections=sections, attrs=ds.attrs,
        axes={a: meta["grid"][a] for a in meta["grid"]})


def _section(ds, meta: dict, tables: dict, name: str, prose, leads: list[str]) -> dict | None:
    """Table ``name``'s section of the page (None where the table is empty):
    its title, introduction, the rows shown and their column definitions."""
    df = tables.get(name)
    if df is None or df.empty:
        return None
    limit = 200 if name != "frequencies" else MAX_PAGE_POINTS * ds.sizes.get(meta.get("dim") or "", 1)
    df = _shown(ds, meta, name, df, limit)
    if df is None:  # distributions only: their table leads, and links this one
        return None
    also = "headlines.csv" if name == "distributions" and "headlines" not in leads else ""
    defined = meta["tables"][name]["columns"]
    extra = {"95% interval": _words(prose.interval_column)}
    return {"id": name, "title": prose.titles[name], "intro": _intro(prose, name, meta), "also": also,
            "csv": f"{name}.csv",
            "rows": meta.get("rows", {}).get(name, len(tables[name])), "shown": min(len(df), limit),
            "table": df_html(df, limit) if len(df) else "",
            "columns": {c: extra.get(c) or defined.get(c, "grid axis") for c in df.columns}}


def _shown(ds, meta: dict, name: str, df: pd.DataFrame, limit: int) -> pd.DataFrame | None:
    """The rows of table ``name`` the page shows (every row is in its CSV);
    None where the page leaves the headline table out."""
    if name == "frequencies":  # labels nothing fell in that cannot occur (e.g. 0 rolls): in the CSV only
        df = df.head(limit)
        df = df[~((df["estimate"] == 0) & ~(df["exact"] > 0))]
        return df.head(0) if meta.get("drawn") else df  # a distribution drawn as one: its bins in the CSV
    if name in ("decomposition", "variance"):  # per label in the CSV; the page: the labels that matter
        key = "between_share" if name == "decomposition" else "mcse"
        group = [*grid_axes(ds), *(["headline"] if name == "variance" else [])]
        df = df.sort_values(key, ascending=False, kind="stable", na_position="last")
        df = (df.groupby(group, sort=False).head(3 if name == "decomposition" else 1) if group else df.head(3))
        return df.sort_index()
    if name == "headlines":
        df = _page_headlines(ds, df, meta)
        return None if df.empty else df
    if name == "points" and "modal" in df and not (meta.get("answer") or {}).get("modal"):
        return df.drop(columns="modal")  # the modal string (PE84's) on the page only where the spec asks: in the CSV
    return df
