"""A self-contained report of a sweep store: one folder that opens offline.

``build_report(store, out_dir)`` writes into ``out_dir`` (default
:func:`default_out_dir`: ``results/x.zarr`` -> ``results/x.report``).  It
builds the report in a staging folder inside it, then replaces the earlier
report's files: only those the earlier report recorded in its manifest
(:data:`MANIFEST`, ``.boardsweep-report.json``) are removed, a file of the
report's names that no report wrote refuses the folder
(:class:`ReportFolderError`, exit 2), and a report killed midway leaves only
files the next run removes.

Every number comes from :mod:`boardsweep.pipeline.analysis.headlines` (one estimator:
the ratio of sums with its standard error, ``estimate, se, low, high, df,
exact, z, p``), and every flag, map and count of differences uses the
verdict's level :data:`headlines.ALPHA`.  The folder holds:

* ``index.html``: a summary first (the spec's description, the run shape,
  the date, the verdict), the headline answers (scalars as rows, the
  interval written ``estimate ± half-width``; each distribution as one row
  per grid point), then the figures and the other tables, each column defined;
* figures (PNG with an SVG copy), whose number depends on the grid's axes,
  never on its number of points: ``forest.png`` (each scalar headline per
  grid point and label with its interval; rows that do not fit are named in
  the caption, every row is in ``headlines.csv``), ``<headline>.png`` for a
  distribution over games (estimate vs exact pmf per grid point, with its
  goodness-of-fit p), and for a frequency table over labels
  ``frequency_heatmap.png``, ``z_heatmap.png``, ``difference_<axis>.png``
  (significant cells only, Welch and Holm at ALPHA); ``convergence.png`` and
  ``variance_ratio.png`` (each label's measured over CLT variance against the
  90% range of one label's ratio) where they apply;
* every table as CSV: ``headlines.csv`` (:func:`headlines.summary`, every
  row, plus ``p_holm``), ``distributions.csv`` (per grid point and
  distribution: top labels, worst deviation, the verdict's test),
  ``tests.csv`` (every test of the verdict with its Holm-adjusted p),
  ``points.csv``, ``frequencies.csv`` (the report variable per grid point
  and label), ``comparisons.csv`` (Welch/Holm tests between rule variants),
  ``variance.csv`` (per point, headline and label: replicate s.d., MCSE,
  ESS, exact CLT variance, deck parts; :func:`analysis.label_variance`),
  ``decomposition.csv`` (shuffled decks, per label: between- and within-deck
  variance, the paired deck test) and ``precision.csv`` where they apply;
* ``summary.json``: per grid point (keyed ``axis=value,...``): ``slope``,
  ``slope_basis``, ``variance_ratio``, ``batch_means_ratio``,
  ``max_abs_error``, ``total_variation``, ``max_abs_z``, ``worst_label``,
  ``exact`` (stored / none / pending), ``reference``, ``replicates``,
  ``top3``, ``modal`` and ``estimates`` ({headline: {label ("value" for a
  scalar): {estimate, se, low, high, exact}}}, labels that cannot occur left
  out); null where a value does not apply;
* ``report.json``: ``title``, ``description``, ``run_shape``, ``created``,
  ``store``, ``game``, ``sweep``, ``variable``, ``dim``, ``layout``,
  ``verdict`` (sentence and numbers), ``headlines``, ``figures`` (file ->
  caption), ``tables`` (name -> {csv, columns: {column: definition}}),
  ``comparisons``, ``decomposition``, ``notes`` (what could not be computed
  and why) and ``timing_s``.

Works for any game's store: what a game lacks (exact answers, theory, a
distribution variable) is said on the page, never a crash.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import shutil
import textwrap
import time
import warnings
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from ...core import stats
from ..analysis import convergence as analysis, headlines
from .display import count, plural
from ..errors import InputError
from ..store import metadata
from ..analysis.query import MIN_COUNT, distribution_variables, grid_points, load_sweep, z_score

__all__ = ["build_report", "default_out_dir", "pick_variable", "point_key", "ReportFolderError", "COLUMNS",
           "MANIFEST", "Z_AGREE", "MAX_THEORY_POINTS"]

#: |z| above which a label counts as disagreeing with its exact answer.
Z_AGREE = 5.0
#: The CLT theory (one Markov-chain solve per grid point) is computed up to this many points.
MAX_THEORY_POINTS = 64
#: Grid points whose frequency tables are also shown on the page (all are in frequencies.csv).
MAX_PAGE_POINTS = 8

#: Definition of every table column (axes columns are the grid's own).
COLUMNS: dict[str, str] = {
    "replicates": "finished replicates behind the estimate",
    "exact": "the exact value (empty where none exists)",
    "reference": "what the estimate is compared with: 'exact' (the stored exact answer), 'replicate decks' "
                 "(mean of the exact answers of the deck orders each replicate played) or empty",
    "max_abs_z": "largest |z| over labels, z = (estimate - reference) / s.e. (labels with s.e. 0 or a mean "
                 f"count below {MIN_COUNT} per replicate left out)",
    "worst_label": "the label with that largest |z|",
    "max_abs_error": "max |error|: largest |estimate - reference| over labels (frequency units)",
    "tv_distance": "TV distance: total variation distance sum |estimate - reference| / 2",
    "slope": "log-log slope of the error (basis) against steps on the upper half of the log-step range; "
             "-1/2 expected",
    "basis": "what the slope is fitted to: 'rms_error' (RMS error of one replicate against the exact answer) "
             "or 'sd' (RMS across-replicate sd, where no exact answer exists)",
    "variance_ratio": "points.csv: median over labels (each label's in variance.csv) of measured across-replicate "
                      "variance / Markov-chain CLT variance "
                      "(a variance from R replicates is sigma^2 chi2(R-1)/(R-1), whose median is 0.79 for R = 4 "
                      "and 0.91 for R = 8: that, not 1, is the reference)",
    "batch_means_ratio": "mean of each replicate's batch-means variance / CLT variance",
    "modal": "the game's short name of the most frequent labels (Monopoly: PE84's modal string, IN_JAIL "
             "merged into JAIL)",
    "top3": "the three most frequent labels",
    "label": "the label (location, rolls bin, seat, ...)",
    "name": "the label's full name",
    "estimate": "the estimate: ratio of sums over the finished replicates at the last checkpoint",
    "se": "standard error of the estimate ('units': pooled per game; 'replicates': from the spread of the "
          "replicates; see se_basis)",
    "low": "lower end of the 95% interval: estimate - t(0.975, df) s.e.; a share or histogram bin: the exact "
           "binomial (Clopper-Pearson) lower end",
    "high": "upper end of the 95% interval: estimate + t(0.975, df) s.e.; a share or histogram bin: the exact "
            "binomial (Clopper-Pearson) upper end",
    "z": "(estimate - exact) / s.e. (in frequencies.csv: (estimate - reference) / s.e.)",
    "comparison": "the axis compared and its two values a vs b, every other axis equal",
    "labels_tested": "labels tested: labels with a finite Welch test (both sides have >= 2 replicates)",
    "significant": f"labels whose Holm-adjusted p < {headlines.ALPHA} (the verdict's level; Holm over the labels "
                   "of the comparison)",
    "min_p_holm": "smallest Holm-adjusted p-value over the labels of the comparison (Holm's adjustment "
                  "multiplies the k-th smallest of m p-values by m - k + 1, keeping the order, at most 1)",
    "max_abs_difference": "largest |frequency(a) - frequency(b)| over labels",
    "at_label": "the label of that largest difference",
    "relative_difference": "that difference over frequency(b): (a - b) / b at that label (no Cohen's d: an sd "
                           "across replicates shrinks as runs grow, so difference / sd measures run size, "
                           "not effect)",
    "t_at_label": "Welch's t of that difference (difference / its standard error)",
    "total_var": "total across-replicate variance of the label's frequency",
    "between_var": "variance of the replicates' own exact answers (deck shuffles): the between-deck part",
    "sampling_var": "mean within-replicate sampling variance: the within-deck part, which more turns shrink",
    "within_var": "mean within-replicate sampling variance: the within-deck part, which more turns shrink",
    "between_share": "between / (between + sampling), per label (variance.csv, decomposition.csv); at least "
                     f"{analysis.BETWEEN_DOMINATES} means more turns will not shrink the error, only replicates",
    "paired_sd": "s.d. of the paired differences: each replicate's frequency minus the exact answer of its own "
                 "deck orders (the deck check's s.e. is this over sqrt(replicates), not the total replicate s.d.)",
    "paired_t": "paired t = mean difference / (paired_sd / sqrt(replicates)), df = replicates - 1",
    "paired_p": "two-sided p of paired_t before Holm's adjustment (the deck check adjusts over its own tests)",
    "replicate_sd": "s.d. of the replicates' own ratios (ddof 1)",
    "mcse": "Monte Carlo standard error on the replicates (arviz's mcse of the mean): replicate_sd / "
            "sqrt(replicates)",
    "units": "the summed denominator: games, events or turns",
    "ess": "effective sample size (arviz's N / tau): unit variance / mcse^2, the unit variance f (1 - f) of a "
           "frequency per event or the per-game variance; empty for a mean with no per-unit variance",
    "ess_per_unit": "ess / units: 1 / tau (1 for independent units, below 1 for a correlated chain)",
    "clt_variance": "the exact asymptotic (CLT) variance per unit of the store's per variable (Monopoly: per roll)",
    "clt_sd": "the replicate s.d. the exact CLT variance predicts: sqrt(mean over replicates of clt_variance / rolls)",
    "deck_difference": "mean over replicates of frequency - exact answer of the replicate's own deck orders",
    "deck_sd": "s.d. of those paired differences",
    "deck_t": "paired t: deck_difference / (deck_sd / sqrt(replicates))",
    "deck_df": "replicates - 1",
    "deck_p": "two-sided p of deck_t (raw, before any adjustment)",
    "more_turns": "whether more turns shrink this label's error: 'will not shrink it (between deck orders)' where "
                  f"between_share >= {analysis.BETWEEN_DOMINATES}",
    "headline": "the game's headline quantity (Game.headlines)",
    "sd": "per game ('units': sd of one game's value) or of one replicate's estimate ('replicates')",
    "df": "degrees of freedom of the t quantile and test: games - 1 ('units') or replicates - 1 ('replicates')",
    "test_df": "degrees of freedom of that test (chi2: merged bins - 1; t: as df)",
    "labels": "labels with an estimate (bins that nothing fell in and that cannot occur left out)",
    "worst_estimate": "the estimate at worst_label",
    "worst_exact": "the exact value at worst_label",
    "level": "level of the interval low..high",
    "se_basis": "'units': pooled per-game s.e. from stored sums of squares; 'replicates': from the spread of "
                "the replicates",
    "test": "'t': (estimate - exact) / s.e. against Student's t; 'chi2': Pearson goodness of fit of the pooled "
            "histogram counts, bins merged to expected counts >= 5",
    "statistic": "z (t test) or X^2 (chi-square)",
    "p": "p-value of the test before Holm's adjustment (two-sided for t); a small p alone is no disagreement: "
         "with many tests some are small by chance",
    "family": "'verdict': the store's tests, Holm-adjusted together (the verdict run and query print); "
              "'deck check': the report's comparison of points without a single exact answer with their "
              "replicates' own deck orders, Holm-adjusted among themselves, not part of the verdict",
    "detectable": "the bias (in the estimate's units) this t test detects with 80% power at Holm's least "
                  "level, alpha / tests, two-sided, with its df and s.e.",
    "p_holm": f"Holm-adjusted p-value over every test of its family (see family; the verdict's: every test of the "
              f"store, as run and query adjust it; the k-th smallest of "
              f"m p-values times m - k + 1, keeping the order, at most 1); below {headlines.ALPHA} the verdict "
              "flags it. Empty in headlines.csv where the row's test is its distribution's goodness of fit "
              "(see distributions.csv)",
    "replicates_used": "replicates the precision rule used at this grid point",
    "stderr_reached": "largest standard error of the game's estimates over them",
    "stderr_target": "the [precision] stderr target",
    "precision": "met: target reached; capped: max_replicates reached first; running: not finished",
}


#: Definitions that differ by table.
_TABLE_DEFINITIONS: dict[str, dict[str, str]] = {
    "points": {"exact": "exact answer: 'stored', 'none' (no single exact answer exists) or 'pending' (not "
                        "computed yet)"},
    "frequencies": {"exact": "the value the estimate is compared with (see reference; empty where none exists)",
                    "df": "degrees of freedom of the t quantile"},
    "variance": {"variance_ratio": "this label's replicate_sd^2 / clt_sd^2: chi2(R-1)/(R-1) if the CLT variance "
                                   "holds (90% range drawn in variance_ratio.png)",
                 "estimate": "the headline's estimate (ratio of sums over the finished replicates)",
                 "se": "the headline's standard error (pooled per game where the store has sums of squares; "
                       "else as mcse)"},
    "distributions": {"top3": "the three labels with the largest estimates, each with its estimate",
                      "test": "the verdict's test of this distribution: 'chi2' (goodness of fit) or the "
                              "per-label t test with the smallest p ('t, 40 labels': 40 labels tested)",
                      "statistic": "X^2 (chi2) or z of that label (t)",
                      "p": "p-value of that test before Holm's adjustment"},
}


def _define(table: str, column: str) -> str:
    """The definition of ``column`` in ``table`` (a grid axis where none is written)."""
    return _TABLE_DEFINITIONS.get(table, {}).get(column) or COLUMNS.get(column, "grid axis")


def _precision(ds, points, tables, summary) -> None:
    """With a [precision] target: a ``precision`` table and, per point of
    ``summary``, its replicates used, standard error reached and state."""
    from ..plan.precision import point_columns

    columns = point_columns(ds)
    if columns is None:
        return
    tables["precision"] = pd.DataFrame([{**p, **c} for p, c in zip(points, columns)])
    for p, c in zip(points, columns):
        summary[point_key(ds, p)]["precision"] = c

_TABLE_COLUMNS = {
    "points": ["replicates", "exact", "reference", "max_abs_z", "worst_label", "max_abs_error",
               "tv_distance", "slope", "basis", "variance_ratio", "batch_means_ratio", "modal", "top3"],
    "frequencies": ["label", "name", "estimate", "se", "low", "high", "df", "exact", "reference", "z"],
    "comparisons": ["comparison", "labels_tested", "significant", "min_p_holm", "max_abs_difference",
                    "at_label", "relative_difference", "t_at_label"],
    "decomposition": ["label", "total_var", "between_var", "sampling_var", "between_share", "paired_sd", "paired_t",
                      "paired_p"],
}


def pick_variable(ds: xr.Dataset) -> str | None:
    """The distribution variable to report: ``counts``, else one over
    ``location``, else the first; None when the store has none."""
    dists = distribution_variables(ds)
    if not dists:
        return None
    if "counts" in dists:
        return "counts"
    return next((v for v, d in dists.items() if d == "location"), next(iter(dists)))


def point_key(ds: xr.Dataset, point: dict[str, Any]) -> str:
    """``axis=value,...`` of a grid point (all parameters when there is no grid)."""
    items = point if point else analysis.point_params(ds, {})
    return ",".join(f"{k}={v}" for k, v in items.items())


def _num(x: Any) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _sel(obj, point):
    return obj.sel(point) if point else obj


# --- the report's folder -----------------------------------------------------------------

#: The report's record of the files it wrote into its folder (read by the next report there).
MANIFEST = ".boardsweep-report.json"
#: Where a report is built before it replaces the folder's earlier report (left by a killed run: removed).
_STAGING = ".boardsweep-report-partial"
#: Files every report writes: a folder holding one that no report recorded is refused before any work.
_ALWAYS = ("index.html", "summary.json", "report.json")


class ReportFolderError(InputError):
    """The report's folder holds files boardsweep did not write there, or cannot be written (exit 2)."""


def default_out_dir(store: str) -> Path:
    """The report folder beside a local store: ``results/x.zarr`` ->
    ``results/x.report``; a store behind a URL: ``x.report`` in the working folder."""
    name = Path(store.rstrip("/")).name.removesuffix(".zarr") + ".report"
    if "://" in store and not store.startswith("file://"):
        return Path(name)
    return Path(store.removeprefix("file://").rstrip("/")).with_name(name)


def _recorded(out: Path) -> set[str]:
    """The files an earlier report recorded writing in ``out``: its manifest's
    list; for a report made before manifests, the files its ``report.json``
    names (page, figures with their SVG copies, tables)."""
    for name, read in ((MANIFEST, lambda m: m.get("files")), ("report.json", _legacy_files)):
        try:
            meta = json.loads((out / name).read_text())
        except (OSError, ValueError):
            continue
        files = read(meta) if isinstance(meta, dict) else None
        if isinstance(files, list):
            return {f for f in files if isinstance(f, str) and f == Path(f).name}
    return set()


def _legacy_files(meta: dict) -> list[str] | None:
    if not {"figures", "tables", "timing_s"} <= set(meta):
        return None
    figures = [f for name in meta["figures"] for f in (name, str(Path(name).with_suffix(".svg")))]
    return [*_ALWAYS, *figures, *(t["csv"] for t in meta["tables"].values())]


def _foreign(out: Path, names, recorded: set[str]) -> list[str]:
    return sorted(n for n in names if n not in recorded and os.path.lexists(out / n))


def _start(out: Path) -> tuple[Path, set[str]]:
    """Check ``out`` and make a fresh staging folder in it; return that and the
    files the earlier report there recorded.  Refused (nothing written): a page
    or table of the report's names that no boardsweep report recorded."""
    recorded = _recorded(out) if out.is_dir() else set()
    theirs = _foreign(out, _ALWAYS, recorded)
    if theirs:
        raise ReportFolderError(f"report folder {out} holds {', '.join(theirs)} that boardsweep did not write; "
                                "choose a new or empty folder with --out (nothing was written)")
    staging = out / _STAGING
    try:
        out.mkdir(parents=True, exist_ok=True)
        if staging.is_dir():  # a killed report's leftovers
            shutil.rmtree(staging)
        staging.mkdir()
    except OSError as exc:
        raise ReportFolderError(f"report folder {out}: cannot write the report there ({exc.strerror or exc})") from None
    return staging, recorded


def _write_manifest(out: Path, files, store: str | None, complete: bool) -> None:
    tmp = out / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps({"boardsweep_report": 1, "store": store, "complete": complete,
                               "files": sorted(files)}, indent=1))
    os.replace(tmp, out / MANIFEST)


def _publish(out: Path, staging: Path, recorded: set[str], store: str | None) -> list[str]:
    """Replace the earlier report's files in ``out`` by the new ones in
    ``staging``: only files a report recorded are removed, a file of the new
    report's names that none recorded refuses it (the staging folder removed).
    The manifest lists every file that may exist before any is removed or
    moved, so a report killed here leaves nothing the next run will not remove."""
    new = sorted(p.name for p in staging.iterdir())
    theirs = _foreign(out, new, recorded)
    if theirs:
        shutil.rmtree(staging)
        raise ReportFolderError(f"report folder {out} holds {', '.join(theirs[:3])} that boardsweep did not "
                                "write; choose a new or empty folder with --out (nothing was written)")
    _write_manifest(out, recorded | set(new), store, complete=False)
    for name in sorted(recorded - set(new)):
        path = out / name
        if path.is_file() or path.is_symlink():
            path.unlink()
    for name in new:
        os.replace(staging / name, out / name)
    _write_manifest(out, new, store, complete=True)
    staging.rmdir()
    return new


def build_report(store: str | xr.Dataset, out_dir: str | Path | None = None, variable: str | None = None,
                 loaded: xr.Dataset | None = None) -> dict:
    """Write the report of ``store`` into ``out_dir``; return the summary dict.

    Parameters
    ----------
    store : str or xarray.Dataset
        The sweep store (path or URL), or a Dataset already read.
    out_dir : str or Path, optional
        The report folder; default :func:`default_out_dir` of ``store``.  An
        earlier report there is replaced: only the files its manifest
        (:data:`MANIFEST`) records are removed; a folder holding a file of the
        report's names that no report wrote is refused (:class:`ReportFolderError`).
    variable : str, optional
        The distribution variable of the figures (default :func:`pick_variable`).
    loaded : xarray.Dataset, optional
        ``store`` already read, e.g. by :func:`query.load_sweep`.
    """
    if out_dir is None:
        if isinstance(store, xr.Dataset):
            raise ValueError("build_report: out_dir is needed when the store is a Dataset")
        out_dir = default_out_dir(str(store))
    t0 = time.perf_counter()
    if isinstance(store, xr.Dataset):
        ds = store.load()
    else:
        ds = loaded if loaded is not None else load_sweep(str(store), check=False)
    final = Path(out_dir)
    out, recorded = _start(final)
    try:
        summary = _write(ds, store, out, variable, t0)
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    _publish(final, out, recorded, None if isinstance(store, xr.Dataset) else str(store))
    return summary


def _write(ds: xr.Dataset, store, out: Path, variable: str | None, t0: float) -> dict:
    """Every file of the report into ``out``; the summary dict."""
    import matplotlib

    matplotlib.use("Agg")
    variable = variable or pick_variable(ds)
    points = list(grid_points(ds))
    meta = _meta(ds, store, variable)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN cells of unfinished points
        found = _try(meta, "headline answers", headlines.estimates, ds) or {}
        heads = _summary(ds, found)
        shown_as_pmf = _pmf_headlines(found)
        if variable is None:
            meta["notes"].append("the store has no distribution variable (checkpoint, DIM): "
                                 "only the game's headline answers are reported")
            parts, tables = None, {}
            summary = {point_key(ds, p): _empty() for p in points}
            figures: dict[str, str] = {}
        else:
            parts = _analyse(ds, variable, points, meta, found)
            tables = _tables(ds, points, parts, meta)
            summary = _summarise(ds, points, parts, tables)
            figures = _figures(ds, parts, out, meta, heatmaps=parts["headline"] not in shown_as_pmf)
            if parts["headline"] in shown_as_pmf:
                meta["drawn"] = parts["headline"]
        _summary_estimates(ds, points, heads, summary)
        verdict = _verdict(ds, points, parts, tables.get("points", pd.DataFrame()), found)
        tests = verdict.pop("tests_table")
        meta["verdict"] = verdict
        meta["headlines"] = {name: {k: est.attrs[k] for k in ("description", "kind", "basis", "basis_text", "level")}
                             for name, est in found.items()}
        heads = _with_p_holm(ds, heads, tests)
        variance = _try(meta, "variance per label", _variance_table, ds, found, parts)
        tables = {"headlines": _headline_table(heads, found),
                  "distributions": _distribution_table(ds, heads, found, tests),
                  "tests": _tests_table(ds, points, tests), **tables, "variance": variance}
        meta["variance_text"] = _variance_words(meta)
        if parts is not None and parts.get("ratio") is not None:
            figures.update(_try(meta, "variance ratio per label", _variance_figure, ds, parts, out) or {})
        forest = _try(meta, "forest plot", _forest, ds, heads, found, out) or {}
        pmf = {}
        for name in shown_as_pmf:
            pmf.update(_try(meta, f"{name} figure", _pmf_figure, ds, found[name], out) or {})
        figures = {**forest, **pmf, **figures}
    _precision(ds, points, tables, summary)
    meta["figures"] = figures
    meta["tables"] = {}
    for name, df in tables.items():
        if df is None or df.empty:
            continue
        df.to_csv(out / f"{name}.csv", index=False)
        meta["tables"][name] = {"csv": f"{name}.csv",
                                "columns": {c: _define(name, c) for c in df.columns}}
    meta["timing_s"] = round(time.perf_counter() - t0, 2)
    page = _html(ds, meta, tables, figures)
    (out / "index.html").write_text(page)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    (out / "report.json").write_text(json.dumps(meta, indent=2, default=str))
    return summary


def _meta(ds, store, variable) -> dict:
    attrs = ds.attrs
    run_shape = {**analysis.run_shape_of(ds)}
    canonical = analysis._canonical(ds)
    run_shape["replicates"] = canonical.get("run", {}).get("replicates", ds.sizes.get("replicate"))
    description = attrs.get("description") or (analysis.game_of(ds).description
                                               if analysis.game_of(ds) is not None else "")
    return {
        "title": attrs.get("title") or f"sweep {attrs.get('sweep')} ({attrs.get('game')})",
        "description": description,
        "run_shape": run_shape,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "store_created": attrs.get("created"),
        "history": attrs.get("history", ""),
        "store": None if isinstance(store, xr.Dataset) else str(store),
        "game": attrs.get("game"), "sweep": attrs.get("sweep"),
        "spec_sha256": attrs.get("spec_sha256"), "git_revision": attrs.get("git_revision"),
        "grid": {a: [_py(v) for v in ds[a].values] for a in attrs.get("grid_axes", [])},
        "variable": variable, "notes": [],
    }


def _empty() -> dict:
    row = {k: None for k in ("slope", "slope_basis", "variance_ratio", "batch_means_ratio",
                             "max_abs_error", "total_variation", "max_abs_z", "worst_label", "exact",
                             "reference", "replicates", "top3", "modal")}
    row["estimates"] = {}
    return row


def _try(meta: dict, what: str, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # report what failed, keep going
        meta["notes"].append(f"{what}: not available ({type(exc).__name__}: {exc})")
        return None


def _py(value):
    return value.item() if isinstance(value, np.generic) else value


# --- analysis ------------------------------------------------------------------------


def _headline_of(ds, found: dict, variable: str, dim: str) -> str | None:
    """The distribution headline that estimates ``variable``'s frequencies over ``dim``, if any."""
    from ...core.games import headlines_of

    game = analysis.game_of(ds)
    for h in headlines_of(game) if game is not None else ():
        if h.numerator == variable and h.kind == "distribution" and h.name in found \
                and found[h.name].attrs.get("dim") == dim:
            return h.name
    return None


def _analyse(ds, variable, points, meta, found: dict) -> dict:
    parts: dict[str, Any] = {"variable": variable}
    parts["conv"] = conv = analysis.convergence(ds, variable)
    parts["dim"] = dim = conv.attrs["dim"]
    meta["dim"] = dim
    parts["rate"] = _try(meta, "convergence rate", analysis.convergence_rate, conv) if "steps" in conv else None
    game = analysis.game_of(ds)
    has_theory = game is not None and "asymptotic_variance" in game.extras
    parts["theory"] = parts["ratio"] = parts["batch"] = None
    if has_theory and len(points) > MAX_THEORY_POINTS:
        meta["notes"].append(f"CLT variance (variance ratio, batch means, theory band) computed only for grids "
                             f"of at most {MAX_THEORY_POINTS} points (one chain solve each); this grid has "
                             f"{len(points)}")
    elif has_theory:
        parts["theory"] = theory = _try(meta, "theoretical variance", analysis.theoretical_variance, ds, variable)
        if theory is not None:
            parts["ratio"] = _try(meta, "variance ratio", analysis.variance_ratio, ds, variable, theory)
            parts["batch"] = _try(meta, "batch means", analysis.batch_means, ds, variable, theory)
    parts["decomp"] = parts["pairs"] = None
    if game is not None and "replicate_exact" in game.extras:
        parts["decomp"] = _try(meta, "shuffle decomposition", analysis.shuffle_decomposition, ds, variable)
    if parts["decomp"] is not None:
        parts["pairs"] = _try(meta, "paired deck test", analysis.deck_pairs, ds, parts["decomp"], variable)
    parts["compare"] = _try(meta, "axis comparisons", analysis.axis_comparisons, ds, variable) or {}
    parts["modal"] = game.extras.get("modal") if game is not None else None
    parts["states"] = _exact_states(ds, points)
    parts["reference"], parts["ref_kind"] = _references(ds, points, parts, meta)
    # one estimator (ratio of sums, its s.e. and df): the headline's where the variable is a headline's
    parts["headline"] = name = _headline_of(ds, found, variable, dim)
    est = found[name] if name is not None else headlines.of_variable(ds, variable)
    parts["mean"], parts["se"], parts["df"] = est["estimate"], est["se"], est["df"]
    parts["low"], parts["high"] = est["low"], est["high"]  # t, or exact binomial for a histogram's bins
    # no z where the replicates all agree (s.e. 0) or a label's counts are too few (query.z_score)
    parts["z"] = z_score(parts["mean"] - parts["reference"], parts["se"],
                         ds[variable].isel(checkpoint=-1).mean("replicate"))
    return parts


def _exact_states(ds, points) -> dict[str, tuple[str, str]]:
    """:func:`metadata.exact_state` of every point, read in one pass."""
    states, texts = metadata.exact_states(ds)
    return {point_key(ds, p): (str(s), str(t)) for p, s, t in zip(points, states.ravel(), texts.ravel())}


def _references(ds, points, parts, meta):
    """The value each estimate is compared with, per grid point and label:
    the stored exact answer; else, where the game gives the exact answer of
    the environment each replicate played (deck orders), their mean."""
    conv, dim = parts["conv"], parts["dim"]
    ref = conv["exact"].isel(checkpoint=-1).copy()
    finite = np.isfinite(_flat(ref, _axes(ds), [dim])).all(1)
    kind = {}
    dec = parts["decomp"]
    for i, p in enumerate(points):
        key = point_key(ds, p)
        state = parts["states"][key][0]
        if state == "stored" and finite[i]:
            kind[key] = "exact"
        elif state == "none" and dec is not None:
            rep = _sel(dec["replicate_exact"], p).mean("replicate")
            if bool(np.isfinite(rep.values).all()):
                ref.loc[p] = rep.transpose(*ref.sel(p).dims).values if p else rep.values
                kind[key] = "replicate decks"
    game = analysis.game_of(ds)
    if game is not None and "replicate_exact" in game.extras and any(
            parts["states"][point_key(ds, p)][0] == "none" for p in points):
        if dec is None:
            meta["notes"].append(
                "points without a single exact answer: the exact answers of the deck orders each replicate "
                "played were not computed (the run shape allows it only for a few games per replicate and "
                "at most 256 replicate solves); those points are compared with nothing")
        else:
            meta["notes"].append(
                "points without a single exact answer are compared with the mean of the exact answers of "
                "the deck orders each replicate played ('replicate decks')")
    return ref, kind


# --- tables ------------------------------------------------------------------------------


def _axes(ds) -> list[str]:
    return list(ds.attrs.get("grid_axes", []))


def _tables(ds, points, parts, meta) -> dict[str, pd.DataFrame]:
    return {
        "points": _point_table(ds, points, parts),
        "frequencies": _frequency_table(ds, points, parts),
        "comparisons": _comparison_table(ds, parts, meta),
        "decomposition": _decomposition_table(ds, points, parts, meta),
    }


def _flat(da: xr.DataArray, axes: list[str], extra: list[str] | None = None) -> np.ndarray:
    """``da`` as an array (points in grid order, then ``extra`` dims)."""
    dims = [*axes, *(extra or [])]
    values = da.transpose(*dims).values if dims else da.values
    return values.reshape((-1, *values.shape[len(axes):])) if axes else values[None, ...]


def _point_table(ds, points, parts) -> pd.DataFrame:
    axes, dim = _axes(ds), parts["dim"]
    conv = parts["conv"]
    last = conv.isel(checkpoint=-1)
    labels = metadata.label_text(ds[dim])
    ref = _flat(parts["reference"], axes, [dim])
    mean = _flat(parts["mean"], axes, [dim])
    z = _flat(parts["z"], axes, [dim])
    reps = _flat(last["replicates"], axes)
    rate = parts["rate"]
    ratio = parts["ratio"]
    vr = _flat(ratio["ratio"].isel(checkpoint=-1).median(dim), axes) if ratio is not None else None
    batch = parts["batch"]
    bm = _flat(batch["ratio"].mean([d for d in batch["ratio"].dims if d not in axes]), axes) \
        if batch is not None and "ratio" in batch else None
    slope = _flat(rate["slope"], axes) if rate is not None else None
    basis = _flat(rate["basis"], axes) if rate is not None else None
    rows = []
    for i, p in enumerate(points):
        key = point_key(ds, p)
        err = mean[i] - ref[i]
        has_ref = bool(np.isfinite(err).all())
        zi = np.abs(z[i])
        worst = int(np.nanargmax(zi)) if np.isfinite(zi).any() else None
        order = np.argsort(-np.nan_to_num(mean[i], nan=-np.inf), kind="stable")[:3]
        row = {**p, "replicates": int(reps[i]), "exact": parts["states"][key][0],
               "reference": parts["ref_kind"].get(key, ""),
               "max_abs_z": _num(zi[worst]) if worst is not None else None,
               "worst_label": labels[worst] if worst is not None else "",
               "max_abs_error": _num(np.abs(err).max()) if has_ref else None,
               "tv_distance": _num(0.5 * np.abs(err).sum()) if has_ref else None,
               "slope": None, "basis": "", "variance_ratio": None, "batch_means_ratio": None,
               "modal": "", "top3": ""}
        if rate is not None:
            row["slope"], row["basis"] = _num(slope[i]), str(basis[i])
        if vr is not None:
            row["variance_ratio"] = _num(vr[i])
        if bm is not None:
            row["batch_means_ratio"] = _num(bm[i])
        if reps[i]:
            row["top3"] = " ".join(labels[j] for j in order)
            if parts["modal"] is not None:
                row["modal"] = parts["modal"](np.asarray(mean[i], dtype=float))
        rows.append(row)
    return pd.DataFrame(rows, columns=[*axes, *_TABLE_COLUMNS["points"]])


def _label_names(ds, dim) -> list[str]:
    name = f"{dim}_name"
    if name in ds.coords:
        return [str(x) for x in ds[name].values]
    return [str(x) for x in ds[dim].values]


def _frequency_table(ds, points, parts) -> pd.DataFrame:
    axes, dim = _axes(ds), parts["dim"]
    labels = metadata.label_text(ds[dim])
    names = _label_names(ds, dim)
    mean, se = _flat(parts["mean"], axes, [dim]), _flat(parts["se"], axes, [dim])
    ref, z = _flat(parts["reference"], axes, [dim]), _flat(parts["z"], axes, [dim])
    df = _flat(parts["df"].broadcast_like(parts["mean"]), axes, [dim])
    low, high = _flat(parts["low"], axes, [dim]), _flat(parts["high"], axes, [dim])
    n, k = mean.shape
    grid = {a: np.repeat([p[a] for p in points], k) for a in axes}
    kinds = np.repeat([parts["ref_kind"].get(point_key(ds, p), "") for p in points], k)
    df = pd.DataFrame({**grid, "label": np.tile(labels, n), "name": np.tile(names, n),
                       "estimate": mean.ravel(), "se": se.ravel(), "low": low.ravel(),
                       "high": high.ravel(), "df": df.ravel(), "exact": ref.ravel(),
                       "reference": kinds, "z": z.ravel()})
    return df


def _comparison_table(ds, parts, meta) -> pd.DataFrame:
    dim = parts["dim"]
    rows, meta["comparisons"] = [], []
    freq = analysis.frequencies(ds, parts["variable"]).isel(checkpoint=-1)
    for (axis, a, b), res in parts["compare"].items():
        fb = freq.sel({axis: b}).mean("replicate")
        others = [x for x in res["p"].dims if x != dim]
        for idx in np.ndindex(*(res.sizes[x] for x in others)):
            at = dict(zip(others, idx))
            sub, base = res.isel(at), fb.isel(at).values
            where = {x: _py(sub[x].values.item()) for x in others}
            diff = np.abs(sub["difference"].values)
            j = int(np.nanargmax(diff)) if np.isfinite(diff).any() else None
            sig = [str(lab) for lab, p in zip(sub[dim].values, sub["p_holm"].values) if p < headlines.ALPHA]
            row = {**where, "comparison": f"{axis}: {a} vs {b}",
                   "labels_tested": int(sub["p"].notnull().sum()), "significant": len(sig),
                   "min_p_holm": _num(sub["p_holm"].min()),
                   "max_abs_difference": _num(diff[j]) if j is not None else None,
                   "at_label": str(sub[dim].values[j]) if j is not None else "",
                   "relative_difference": _num(sub["difference"].values[j] / base[j])
                   if j is not None and base[j] > 0 else None,
                   "t_at_label": _num(sub["t"].values[j]) if j is not None else None}
            rows.append(row)
            meta["comparisons"].append({**row, "axis": axis, "a": a, "b": b, "significant_labels": sig})
    if not rows:
        return pd.DataFrame()
    df = pd.DataFrame(rows)
    front = [c for c in df.columns if c not in _TABLE_COLUMNS["comparisons"]]
    return df[["comparison", *front, *_TABLE_COLUMNS["comparisons"][1:]]]


def _summary(ds, found: dict) -> pd.DataFrame:
    """:func:`headlines.summary` under the column names every table uses
    (``estimate``, ``se``), without bins that nothing fell in and whose exact
    value is 0 (e.g. 0 rolls)."""
    table = headlines.summary(ds, found=found) if found else pd.DataFrame(columns=["headline", "estimate"])
    if table.empty:
        return table
    return table[table["estimate"].notna() & ~((table["estimate"] == 0) & ~(table["exact"] > 0))]


def _pmf_headlines(found: dict) -> list[str]:
    """Distributions over independent games (histograms with a goodness of
    fit): drawn as distributions, one panel per grid point, not as rows."""
    return [n for n, e in found.items() if e.attrs["kind"] == "distribution" and "gof_p" in e]


def _point_index(ds, df: pd.DataFrame) -> np.ndarray:
    """The flat grid-point index (grid order) of each row of ``df``."""
    axes = _axes(ds)
    if not axes:
        return np.zeros(len(df), dtype=int)
    where = {tuple(_py(p[a]) for a in axes): i for i, p in enumerate(grid_points(ds))}
    return np.array([where[tuple(_py(v) for v in row)] for row in df[axes].itertuples(index=False)], dtype=int)


def _with_p_holm(ds, heads: pd.DataFrame, tests: pd.DataFrame) -> pd.DataFrame:
    """``heads`` with ``p_holm``: the verdict's Holm-adjusted p of each row's test
    (a histogram's rows: its goodness of fit's, in the distributions table)."""
    heads = heads.copy()
    heads["p_holm"] = np.nan
    if heads.empty or tests is None or tests.empty:
        return heads
    key = pd.Series(list(zip(tests["point"], tests["headline"], tests["label"].astype(str))))
    holm = dict(zip(key, tests["p_holm"]))
    idx = _point_index(ds, heads)
    heads["p_holm"] = [holm.get((i, h, str(lab)), np.nan)
                       for i, h, lab in zip(idx, heads["headline"], heads["label"])]
    return heads


def _headline_table(heads: pd.DataFrame, found: dict) -> pd.DataFrame:
    """Every row of the headline answers (scalars first, then each label of a
    distribution): the CSV behind the page's compact tables."""
    if heads.empty:
        return heads
    kinds = {name: est.attrs["kind"] for name, est in found.items()}
    order = heads["headline"].map(lambda h: kinds.get(h) == "distribution")
    return heads.assign(_d=order).sort_values("_d", kind="stable").drop(columns="_d")


def _distribution_table(ds, heads: pd.DataFrame, found: dict, tests: pd.DataFrame) -> pd.DataFrame:
    """One row per grid point and distribution headline: its three most
    frequent labels, the label furthest from its exact value (largest |z|)
    and the test the verdict makes of it (a goodness of fit, or the smallest
    p of the per-label t tests), with its Holm-adjusted p."""
    axes = _axes(ds)
    dists = [n for n, e in found.items() if e.attrs["kind"] == "distribution"]
    rows = []
    if heads.empty or not dists:
        return pd.DataFrame()
    idx = _point_index(ds, heads)
    for name in dists:
        dim = found[name].attrs["dim"]
        # as every table writes labels (a histogram's last bin counting every larger value: >=N)
        texts = dict(zip(headlines.label_values(ds, dim), metadata.label_text(ds[dim]))) if dim else {}

        def text(label, texts=texts) -> str:
            return texts.get(str(label), str(label))

        mine = heads["headline"] == name
        for i in dict.fromkeys(idx[mine.to_numpy()]):
            g = heads[mine & (idx == i)]
            point = {a: g[a].iloc[0] for a in axes}
            top = g.sort_values("estimate", ascending=False, kind="stable").head(3)
            z = g["z"].abs()
            worst = g.loc[z.idxmax()] if z.notna().any() else None
            row = {**point, "headline": name, "labels": len(g),
                   "top3": ", ".join(f"{text(lab)}: {v:.3g}" for lab, v in zip(top["label"], top["estimate"])),
                   "worst_label": text(worst["label"]) if worst is not None else "",
                   "worst_estimate": _num(worst["estimate"]) if worst is not None else None,
                   "worst_exact": _num(worst["exact"]) if worst is not None else None,
                   "max_abs_z": _num(z.max()) if worst is not None else None,
                   "test": "", "statistic": None, "test_df": None, "p": None, "p_holm": None}
            mine_tests = tests[(tests["point"] == i) & (tests["headline"] == name)] \
                if tests is not None and len(tests) else pd.DataFrame()
            if len(mine_tests):
                t = mine_tests.loc[mine_tests["p"].idxmin()]
                n = len(mine_tests)
                row.update(test="chi2" if t["test"] == "chi2" else f"t, {n} {plural('label', n)}",
                           statistic=_num(t["statistic"]), test_df=_num(t["df"]), p=_num(t["p"]),
                           p_holm=_num(t["p_holm"]))
            rows.append(row)
    df = pd.DataFrame(rows)
    if not df.empty and df["test"].eq("").all():
        df = df.drop(columns=["test", "statistic", "test_df", "p", "p_holm", "worst_exact", "max_abs_z"])
    return df


def _tests_table(ds, points, tests: pd.DataFrame) -> pd.DataFrame:
    """Every test of the verdict, smallest p first, with its grid point."""
    if tests is None or tests.empty:
        return pd.DataFrame()
    axes = _axes(ds)
    where = pd.DataFrame([{a: p[a] for a in axes} for p in points]) if axes else None
    t = tests.sort_values("p", kind="stable").reset_index(drop=True)
    front = where.iloc[t["point"].to_numpy()].reset_index(drop=True) if where is not None else pd.DataFrame()
    return pd.concat([front, t.drop(columns="point")], axis=1)


def _decomposition_table(ds, points, parts, meta) -> pd.DataFrame | None:
    """Shuffled decks, per grid point and label: total = between-deck +
    sampling variance, and the paired deck test (each replicate against its
    own decks).  ``meta["decomposition"]``: per point, the label with the
    largest between-deck share, and the labels where more turns will not
    shrink the error."""
    dec, dim = parts["decomp"], parts["dim"]
    meta["decomposition"] = {}
    if dec is None:
        return None
    axes, labels = _axes(ds), metadata.label_text(ds[dim])
    cols = {k: _flat(dec[k], axes, [dim]) for k in ("total", "between", "sampling", "between_share")}
    pairs = parts.get("pairs")
    paired = {k: _flat(pairs[k], axes, [dim]) for k in ("sd", "t", "p")} if pairs is not None else {}
    rows = []
    for i, p in enumerate(points):
        between = cols["between"][i]
        if not np.isfinite(cols["total"][i]).any() or not np.nanmax(np.nan_to_num(between, nan=0.0)) > 0:
            continue  # independent decks: every replicate plays the same chain
        share = cols["between_share"][i]
        worst = int(np.nanargmax(np.where(np.isfinite(share), share, -np.inf)))
        stuck = [labels[j] for j in np.flatnonzero(share >= analysis.BETWEEN_DOMINATES)]
        meta["decomposition"][point_key(ds, p)] = {
            "label": labels[worst], "between_share": _num(share[worst]),
            "median_between_share": _num(np.nanmedian(share)), "labels_between_dominates": stuck,
            "total_var": _num(cols["total"][i][worst]), "between_var": _num(between[worst]),
            "sampling_var": _num(cols["sampling"][i][worst])}
        for j, label in enumerate(labels):
            if not np.isfinite(cols["total"][i][j]):
                continue
            rows.append({**p, "label": label, "total_var": _num(cols["total"][i][j]),
                         "between_var": _num(between[j]), "sampling_var": _num(cols["sampling"][i][j]),
                         "between_share": _num(share[j]),
                         **{f"paired_{k}": _num(v[i][j]) for k, v in paired.items()}})
    return pd.DataFrame(rows) if rows else None


def _variance_table(ds, found: dict, parts) -> pd.DataFrame | None:
    """:func:`analysis.label_variance`: every headline label's replicate
    s.d., MCSE, ESS, exact CLT variance and deck parts (variance.csv)."""
    if not found:
        return None
    if parts is None:
        return analysis.label_variance(ds, found)
    return analysis.label_variance(ds, found, parts.get("ratio"), parts.get("decomp"), parts["variable"],
                                   parts.get("theory"))


def _variance_words(meta: dict) -> str:
    """Where more turns will not shrink an error, in one sentence (the page's summary)."""
    dec = meta.get("decomposition") or {}
    stuck = {k: v for k, v in dec.items() if v["labels_between_dominates"]}
    if not stuck:
        return ""
    key, worst = max(stuck.items(), key=lambda kv: kv[1]["between_share"] or 0.0)
    return (f"More turns will not shrink the error at {count(len(stuck), 'point')} with shuffled decks: each "
            f"replicate plays one deck order for all its turns, and the variance between deck orders is at "
            f"least half of the replicate variance for {count(len(worst['labels_between_dominates']), 'label')} "
            f"at {key} (largest: {worst['between_share']:.2f} at {worst['label']}); only more replicates "
            f"(deck orders) shrink it. Per label: decomposition.csv, variance.csv.")


def _summary_estimates(ds, points, heads: pd.DataFrame, summary: dict) -> None:
    """Every headline's estimates into ``summary`` per point: {headline: {label
    ("value" for a scalar): {estimate, se, low, high, exact}}}."""
    axes = _axes(ds)
    for key, g in heads.groupby([*axes], sort=False) if axes else [((), heads)]:
        key = key if isinstance(key, tuple) else (key,)
        row = summary[point_key(ds, dict(zip(axes, (_py(k) for k in key))))]
        for name, h in g.groupby("headline", sort=False):
            row["estimates"][name] = {
                (str(r["label"]) or "value"): {c: _num(r[c]) for c in ("estimate", "se", "low", "high", "exact")}
                for r in h.to_dict("records")}


def _summarise(ds, points, parts, tables) -> dict:
    pt, ft = tables["points"], tables["frequencies"]
    dim = parts["dim"]
    k = ds.sizes[dim]
    summary = {}
    for i, p in enumerate(points):
        r = pt.iloc[i]
        row = _empty()
        row.update(slope=_num(r["slope"]), slope_basis=r["basis"] or None,
                   variance_ratio=_num(r["variance_ratio"]), batch_means_ratio=_num(r["batch_means_ratio"]),
                   max_abs_error=_num(r["max_abs_error"]), total_variation=_num(r["tv_distance"]),
                   max_abs_z=_num(r["max_abs_z"]), worst_label=r["worst_label"] or None,
                   exact=r["exact"], reference=r["reference"] or None, replicates=int(r["replicates"]))
        f = ft.iloc[i * k:(i + 1) * k]
        if row["replicates"]:
            top = f.sort_values("estimate", ascending=False, kind="stable").head(3)
            row["top3"] = [{"label": lab, "frequency": _num(v)} for lab, v in zip(top["label"], top["estimate"])]
            row["modal"] = r["modal"] or None
        if parts["headline"] is None:  # the headlines' own estimates are added by _summary_estimates
            row["estimates"] = {"frequency": {
                lab: {"estimate": _num(e), "se": _num(se), "low": _num(lo), "high": _num(hi), "exact": _num(x)}
                for lab, e, se, lo, hi, x in zip(f["label"], f["estimate"], f["se"], f["low"], f["high"],
                                                 f["exact"])}}
        summary[point_key(ds, p)] = row
    return summary


def _deck_tests(ds, points, parts) -> pd.DataFrame:
    """Paired t tests (df = R - 1) of the points compared with the exact
    answers of the deck orders their replicates played, in
    :func:`headlines.tests` form: each replicate against its own decks, the
    s.e. from the spread of those differences (:func:`analysis.deck_pairs`),
    not from the total replicate spread, which holds the deck-to-deck part
    the pairing removes.  Labels too sparse for a t test (those without a z) are left out."""
    axes, dim = _axes(ds), parts["dim"]
    pairs = parts.get("pairs")
    if pairs is None:
        return pd.DataFrame(columns=["point", "headline", "label", "test", "statistic", "df", "p", "se"])
    z = _flat(parts["z"], axes, [dim])
    t, df, p, se = (_flat(pairs[k], axes, [dim]) for k in ("t", "df", "p", "stderr"))
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


def _verdict(ds, points, parts, pt: pd.DataFrame, found: dict) -> dict:
    """The headline verdict (:func:`headlines.verdict`, Holm over every test
    of every point at family-wise ALPHA: the same family and text as ``run``
    and ``query``) with the counts of exact states, its stated power, and
    the deck check beside it.

    The deck check (points without a single exact answer against the mean
    exact answer of the deck orders their replicates played) is its own Holm
    family, not part of the verdict: its reference is not stored but solved
    here, only where that is affordable, so adding it would make the report
    test other hypotheses than ``run`` and ``query`` on the same store."""
    v = headlines.verdict(ds, found=found)
    deck = _deck_tests(ds, points, parts) if parts is not None else None
    states = pt["exact"].value_counts().to_dict() if "exact" in pt else {}
    out = {k: v[k] for k in ("alpha", "tests", "points", "agree", "min_p_holm", "at", "flagged")}
    out.update(with_reference=v["tested_points"], exact_stored=int(states.get("stored", 0)),
               exact_none=int(states.get("none", 0)), exact_pending=int(states.get("pending", 0)),
               replicates_done=int(pt["replicates"].sum()) if "replicates" in pt else 0,
               point_agree=v["point_agree"], level=headlines.LEVEL)
    parts_text = [v["text"][0].upper() + v["text"][1:] + "."]
    if v["tests"]:
        parts_text.append(
            f"Every test of every grid point (headline means and shares: t tests against the exact value; "
            f"histograms over games: chi-square; frequencies estimated per replicate: one t test per "
            f"label with R-1 degrees of freedom) is Holm-adjusted together ({headlines.HOLM_TEXT}), so a correct "
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
    if parts is not None and out["exact_none"]:
        notes = sorted({parts["states"][point_key(ds, p)][1].split(": ", 1)[-1] for p in points
                        if parts["states"][point_key(ds, p)][0] == "none"})
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


# --- figures -----------------------------------------------------------------------------


def _layout(ds) -> tuple[str | None, list[str], list[dict]]:
    """The x axis (numeric with most values, else most values), the facet axes
    and the facets (every combination of the facet axes' values)."""
    axes = _axes(ds)
    if not axes:
        return None, [], [{}]
    numeric = [a for a in axes if ds[a].dtype.kind in "iuf"]
    x = max(numeric or axes, key=lambda a: ds.sizes[a])
    others = [a for a in axes if a != x]
    facets = [dict(zip(others, vals)) for vals in product(*([_py(v) for v in ds[a].values] for a in others))]
    return x, others, facets


def _facet_grid(n: int, w: float, h: float, ylabels: bool = True):
    """A grid of ``n`` panels (at most 4 per row), a colour-bar slot on the right.
    Fixed margins (no layout engine: it costs seconds per figure on big grids)."""
    import matplotlib.pyplot as plt

    cols = min(4, n)
    rows = -(-n // cols)
    W, H = w * cols + 1.6, h * rows + 1.0
    fig, axs = plt.subplots(rows, cols, figsize=(W, H), squeeze=False)
    fig.subplots_adjust(left=(1.0 if ylabels else 0.6) / W, right=1 - 1.5 / W, bottom=0.75 / H,
                        top=1 - 0.75 / H, wspace=0.35 if ylabels else 0.3, hspace=0.75 * 3.2 / h)
    for ax in list(axs.flat)[n:]:
        ax.axis("off")
    return fig, list(axs.flat)[:n]


def _colorbar(fig, img, label: str) -> None:
    W, H = fig.get_size_inches()
    cax = fig.add_axes((1 - 1.2 / W, 0.3, 0.18 / W, 0.4))
    fig.colorbar(img, cax=cax, label=label)


def _facet_title(facet: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in facet.items()) or "all grid points"


def _save(fig, out: Path, name: str, title: str) -> str:
    import matplotlib.pyplot as plt

    width_in, height_in = fig.get_size_inches()
    lines = textwrap.wrap(title, max(int(width_in * 9), 30))  # characters that fit at 13 pt
    fig.suptitle("\n".join(lines), fontsize=13, y=1 - 0.12 / height_in, va="top")
    # the panels start below the title's lines and the first row's own titles
    top = 1 - (0.12 + 0.25 * len(lines) + 0.35) / height_in
    if fig.subplotpars.top > top:
        fig.subplots_adjust(top=top)
    fig.savefig(out / name, dpi=150)
    fig.savefig((out / name).with_suffix(".svg"))  # the same figure as vector graphics, for print
    plt.close(fig)
    return name


#: Share of each point's mass that the heatmaps' leading labels cover.
DRAWN_MASS = 0.999


def _trim_labels(values: np.ndarray, labels: list[str]) -> int:
    """How many leading labels to draw: enough to hold :data:`DRAWN_MASS` of
    every point's mean frequencies (a long tail, e.g. Shut the Box's rare
    long games, would otherwise fill the figure with empty rows)."""
    mass = np.nan_to_num(np.abs(values)).reshape(-1, len(labels))
    totals = mass.sum(1)
    rows = mass[totals > 0] / totals[totals > 0, None]
    if rows.size == 0:
        return len(labels)
    needed = (np.cumsum(rows, axis=1) < DRAWN_MASS - 1e-12).sum(1) + 1
    return int(min(len(labels), needed.max()))


def _heatmap(ax, data: np.ndarray, xvals, labels, cmap, vmin, vmax, xlabel, ylabel, first: bool = True):
    import matplotlib.pyplot as plt

    cm = plt.get_cmap(cmap).with_extremes(bad="#d9d9d9")
    img = ax.imshow(np.ma.masked_invalid(data), aspect="auto", cmap=cm, vmin=vmin, vmax=vmax,
                    interpolation="nearest", origin="upper")
    step = max(1, -(-len(labels) // 42))
    if first:  # the labels once per row of panels
        ax.set_yticks(range(0, len(labels), step), labels[::step], fontsize=7)
        ax.set_ylabel(ylabel, fontsize=9)
    else:
        ax.set_yticks([])
    xs = list(xvals)
    xstep = max(1, -(-len(xs) // 14))
    ax.set_xticks(range(0, len(xs), xstep), [str(v) for v in xs[::xstep]], fontsize=8)
    ax.set_xlabel(xlabel, fontsize=9)
    return img


def _field(da: xr.DataArray, facet: dict, x: str | None, dim: str) -> np.ndarray:
    """(labels, x values) array of one facet."""
    sub = _sel(da, facet)
    return sub.transpose(dim, x).values if x else sub.values[:, None]


def _figures(ds, parts, out: Path, meta: dict, heatmaps: bool = True) -> dict[str, str]:
    """The figures of the report variable: heatmaps per label and grid point
    (unless ``heatmaps`` is False: a distribution drawn as one, see
    :func:`_pmf_figure`), then its convergence and variance ratio."""
    x, others, facets = _layout(ds)
    meta["layout"] = {"x": x, "facets": others, "panels_per_figure": len(facets)}
    if not heatmaps:
        return _line_figures(ds, parts, out, x, facets, [_py(v) for v in ds[x].values] if x else ["-"]) \
            if "steps" in parts["conv"] else {}
    dim = parts["dim"]
    labels = [str(v) for v in ds[dim].values]
    xvals = [_py(v) for v in ds[x].values] if x else ["-"]
    xlabel = x or "(single grid point)"
    keep = _trim_labels(parts["mean"].values, labels)
    labels_k = labels[:keep]
    figs: dict[str, str] = {}
    h = max(3.2, 0.11 * min(keep, 60) + 1.2)
    trimmed = "" if keep == len(labels) else (
        f" Rows: the first {keep} of {len(labels)} {dim} labels, holding {DRAWN_MASS:.1%} of every "
        "point's frequency; the rest are left out.")
    w = max(3.6, min(6.0, 0.16 * len(xvals) + 2.2))

    fig, axs = _facet_grid(len(facets), w, h)
    # the 99th percentile: a few extreme cells (jail with 2-sided dice) would darken every other
    mean = parts["mean"]
    vmax = float(np.nanpercentile(mean.values, 99)) if np.isfinite(mean.values).any() else 1.0
    img = None
    for i, (ax, facet) in enumerate(zip(axs, facets)):
        img = _heatmap(ax, _field(mean, facet, x, dim)[:keep], xvals, labels_k, "viridis", 0, vmax,
                       xlabel, dim, i % 4 == 0)
        ax.set_title(_facet_title(facet), fontsize=9)
    how = "ratio of sums over the finished replicates"
    _colorbar(fig, img, "relative frequency (capped at the 99th percentile)")
    name = _save(fig, out, "frequency_heatmap.png",
                 f"Relative frequencies of the {plural(dim)} ({how}, last checkpoint)")
    figs[name] = f"Relative frequency ({how}) per {dim} (rows) and {xlabel} (columns); one panel per " \
                 f"combination of {', '.join(others) or 'the grid'}. Grey: not computed yet." + trimmed

    z = parts["z"]
    if np.isfinite(z.values).any():
        figs.update(_z_figure(ds, parts, out, meta, (x, xvals, xlabel, facets, labels_k, keep, w, h), trimmed))
    else:  # no exact answer anywhere: no figure of empty panels
        meta["notes"].append("z_heatmap.png left out: no grid point has both an exact answer and a finished "
                             "replicate")

    cat = [a for a in others if ds.sizes[a] >= 2]
    for axis in cat:
        a, b = (_py(v) for v in ds[axis].values[:2])
        res = parts["compare"].get((axis, a, b))
        diff = mean.sel({axis: a}) - mean.sel({axis: b})
        rest = [f for f in facets if f.get(axis) == a]
        fig, axs = _facet_grid(len(rest), w, h)
        # in standard errors of the difference; cells not significant after Holm are masked (grey)
        t_stat = res["t"] if res is not None else diff * np.nan
        shown = t_stat.where(res["p_holm"] < headlines.ALPHA) if res is not None else t_stat
        finite = np.abs(shown.values[np.isfinite(shown.values)])
        if not finite.size:  # no label differs anywhere: a figure of empty panels says nothing
            import matplotlib.pyplot as plt

            plt.close(fig)
            meta["notes"].append(f"difference_{axis}.png left out: no label differs between {axis}={a} and "
                                 f"{axis}={b} (Welch, Holm-adjusted p < {headlines.ALPHA:.0%}; see the comparisons "
                                 "table)")
            continue
        lim = float(np.percentile(finite, 95))  # one outlier must not whiten the rest
        for i, (ax, facet) in enumerate(zip(axs, rest)):
            sub = {k: v for k, v in facet.items() if k != axis}
            data = _field(shown, sub, x, dim)[:keep]
            img = _heatmap(ax, np.clip(data, -lim, lim), xvals, labels_k, "PuOr_r", -lim, lim, xlabel, dim,
                           i % 4 == 0)
            if not np.isfinite(data).any():
                ax.text(0.5, 0.5, f"no label differs\n(Welch, Holm {headlines.ALPHA:.0%})", transform=ax.transAxes, ha="center",
                        va="center", fontsize=9, bbox={"facecolor": "white", "alpha": 0.9, "edgecolor": "#999"})
            ax.set_title(_facet_title(sub), fontsize=9)
        _colorbar(fig, img, f"({a} - {b}) / s.e. of the difference (clipped at ±{lim:.3g})")
        name = _save(fig, out, f"difference_{axis}.png",
                     f"{axis}: {a} minus {b} in standard errors, significant labels only "
                     f"(Welch, Holm-adjusted p < {headlines.ALPHA:.0%})")
        figs[name] = (f"Difference of mean frequencies between {axis}={a} and {axis}={b}, every other axis "
                      "equal, in standard errors of the difference (Welch's t); labels whose difference is not "
                      f"significant at the verdict's level (Holm-adjusted p < {headlines.ALPHA:.0%}, Holm over "
                      "the labels of the panel) are grey; the colour "
                      "scale is symmetric about 0 (differences, relative differences and t in the comparisons table).")

    if "steps" in parts["conv"]:
        figs.update(_line_figures(ds, parts, out, x, facets, xvals))
    return figs


def _z_figure(ds, parts, out: Path, meta: dict, layout: tuple, trimmed: str) -> dict[str, str]:
    """``z_heatmap.png``: z per label and axis value, a panel without an exact answer saying why."""
    x, xvals, xlabel, facets, labels_k, keep, w, h = layout
    dim, z, figs = parts["dim"], parts["z"], {}
    fig, axs = _facet_grid(len(facets), w, h)
    for i, (ax, facet) in enumerate(zip(axs, facets)):
        data = _field(z, facet, x, dim)[:keep]
        img = _heatmap(ax, np.clip(data, -6, 6), xvals, labels_k, "RdBu_r", -6, 6, xlabel, dim, i % 4 == 0)
        ax.set_title(_facet_title(facet), fontsize=9)
        if not np.isfinite(data).any():
            reason = _facet_reason(ds, parts, facet)
            meta.setdefault("panels_without_exact", {})[_facet_title(facet)] = reason
            ax.text(0.5, 0.5, "\n".join(textwrap.wrap(reason, 34)), transform=ax.transAxes, ha="center",
                    va="center", fontsize=8, bbox={"facecolor": "white", "alpha": 0.9, "edgecolor": "#999"})
    _colorbar(fig, img, "z = (estimate - exact) / s.e. (clipped at ±6)")
    name = _save(fig, out, "z_heatmap.png",
                 f"Standardised error by {dim}: blue below, red above the exact answer")
    figs[name] = (f"z = (estimate - exact) / standard error per {dim} and {xlabel} (t with R-1 degrees of "
                  "freedom: with few replicates |z| of 3-5 happen by chance; the verdict judges with "
                  "Holm-adjusted p-values, see the tests table). A panel without an exact answer says why; grey "
                  "cells have none." + trimmed)
    return figs


#: Rows a forest plot panel shows at most (grid points x labels): the first ones and every flagged one.
FOREST_ROWS = 96


def _shown_rows(t: pd.DataFrame, limit: int) -> pd.DataFrame:
    """At most ``limit`` rows of ``t`` in their order: every row the verdict
    flags (Holm-adjusted p < ALPHA), then the first others."""
    if len(t) <= limit:
        return t
    flagged = t["p_holm"].notna() & (t["p_holm"] < headlines.ALPHA)
    keep = flagged.copy()
    room = max(limit - int(flagged.sum()), 0)
    keep[t.index[~flagged][:room]] = True
    return t[keep].head(limit) if keep.sum() > limit else t[keep]


def _forest(ds, heads: pd.DataFrame, found: dict, out: Path) -> dict[str, str]:
    """``forest.png`` (+ SVG): each scalar headline per grid point (and seat),
    its 95% interval as a bar; with an exact value, as the relative error
    (estimate / exact - 1, %) with 0 marked; without, the estimate itself.
    Red: rows the verdict flags.  A panel with more than :data:`FOREST_ROWS`
    rows shows the first and the flagged ones, and the caption says so."""
    import matplotlib.pyplot as plt

    scalar = [n for n, e in found.items() if e.attrs["kind"] != "distribution"]
    table = heads[heads["headline"].isin(scalar)] if len(heads) else heads
    if table.empty:
        return {}
    axes = _axes(ds)
    names = list(dict.fromkeys(table["headline"]))
    shown = {n: _shown_rows(table[table["headline"] == n], FOREST_ROWS) for n in names}
    tallest = max(len(t) for t in shown.values())
    fig, axs = plt.subplots(1, len(names), figsize=(5.6 * len(names), 0.22 * tallest + 2.0), squeeze=False)
    notes = []
    for ax, name in zip(axs[0], names):
        t = shown[name]
        relative = bool(t["exact"].notna().all() and (t["exact"] != 0).all())
        if relative:
            x, lo, hi = (100 * (t[c] / t["exact"] - 1) for c in ("estimate", "low", "high"))
            ax.axvline(0, color="black", lw=1)
            ax.set_xlabel("(estimate / exact - 1), %  (0: the exact value)", fontsize=10)
        else:
            x, lo, hi = t["estimate"], t["low"], t["high"]
            ax.set_xlabel(f"{name} (no exact value)", fontsize=10)
        flagged = (t["p_holm"].notna() & (t["p_holm"] < headlines.ALPHA)).to_numpy()
        y = np.arange(len(t))[::-1]
        ax.errorbar(x, y, xerr=[x - lo, hi - x], fmt="o", ms=4, color="#1f5f9f", ecolor="#1f5f9f", capsize=2)
        if flagged.any():
            ax.plot(np.asarray(x)[flagged], y[flagged], "o", ms=7, color="#c33")
        labels = [", ".join(str(r[a]) for a in axes) + (f" {r['label']}" if r["label"] else "")
                  for r in t.to_dict("records")]
        ax.set_yticks(y, labels, fontsize=8)
        ax.set_ylim(-0.8, len(t) - 0.2)
        ax.set_title(f"{name}: estimate and 95% t interval", fontsize=10)
        ax.set_ylabel(", ".join(axes) + (" and label" if t["label"].astype(bool).any() else ""), fontsize=9)
        ax.tick_params(axis="x", labelsize=9)
        ax.grid(axis="x", color="#ddd")
        total = int((table["headline"] == name).sum())
        if len(t) < total:
            notes.append(f"{name} shows {len(t)} of its {total} rows (every flagged row, then the first ones)")
    fig.tight_layout()
    fig.savefig(out / "forest.png", dpi=150)
    fig.savefig(out / "forest.svg")
    plt.close(fig)
    grid = ", ".join(axes) or "the single point"
    caption = ("Forest plot of the headline answers: one row per grid point (" + grid + ") and label, the "
               "dot the estimate, the bar its 95% t interval; where an exact value exists the axis is the "
               "relative error (estimate / exact - 1) and a bar that misses 0 misses the exact answer "
               "(about 1 in 20 do by chance: that alone is no disagreement). Red: a row the verdict flags, "
               f"its Holm-adjusted p below {headlines.ALPHA:.0%}. SVG: forest.svg.")
    if notes:
        caption += " Not every row fits: " + "; ".join(notes) + ". Every row is in headlines.csv."
    else:
        caption += " Every row of headlines.csv is shown."
    return {"forest.png": caption}


#: Grid points a distribution figure shows at most (one panel each).
PMF_PANELS = 36


def _pmf_figure(ds, est: xr.Dataset, out: Path) -> dict[str, str]:
    """``<headline>.png`` (+ SVG): a distribution over games per grid point,
    the estimate (dots, 95% t interval) against the exact pmf (line), titled
    with its goodness-of-fit p.  Each panel shows the bins holding
    :data:`DRAWN_MASS` of its estimate and exact mass; a last bin counting
    every larger value (``overflow_bin``) is written in the panel."""

    name, dim = est.attrs["name"], est.attrs["dim"]
    points = list(grid_points(ds))
    order = [*_axes(ds), dim]
    mean = est["estimate"].transpose(*order).values.reshape(len(points), -1)
    se = est["se"].broadcast_like(est["estimate"]).transpose(*order).values.reshape(len(points), -1)
    df = est["df"].broadcast_like(est["estimate"]).transpose(*order).values.reshape(len(points), -1)
    exact = est["exact"].broadcast_like(est["estimate"]).transpose(*order).values.reshape(len(points), -1)
    p = est["gof_p"].transpose(*_axes(ds)).values.ravel() if _axes(ds) else est["gof_p"].values.ravel()
    labels = np.asarray(ds[dim].values)
    over = ds[dim].attrs.get("overflow_bin")
    body = labels != over if over is not None else np.ones(len(labels), dtype=bool)
    rows_with = [i for i in range(len(points)) if np.isfinite(mean[i]).any()]
    shown = rows_with[:PMF_PANELS]
    fig, axs = _facet_grid(len(shown), 3.6, 2.6)
    fig.subplots_adjust(hspace=0.8, wspace=0.3)
    from scipy.stats import t as student

    for ax, i in zip(axs, shown):
        # this panel's range: the body bins holding DRAWN_MASS of its estimate and exact mass
        mass = np.where(body, np.nan_to_num(np.fmax(mean[i], np.nan_to_num(exact[i]))), 0.0)
        cum = np.cumsum(mass) / max(mass.sum(), 1e-300)
        first = int(np.argmax(mass > 0)) if (mass > 0).any() else 0
        last = int(np.searchsorted(cum, DRAWN_MASS - 1e-12)) + 1
        cut = np.arange(first, max(last, first + 1))
        cut = cut[(np.nan_to_num(mean[i, cut]) > 0) | (np.nan_to_num(exact[i, cut]) > 0)]  # no impossible bins
        x = labels[cut]
        half = student.ppf(0.975, np.where(df[i, cut] > 0, df[i, cut], np.nan)) * se[i, cut]
        ax.fill_between(x, mean[i, cut] - np.nan_to_num(half), mean[i, cut] + np.nan_to_num(half), step="mid",
                        color="#a8c6e6", lw=0, label="95% interval")
        ax.plot(x, mean[i, cut], "o", ms=2, color="#1f5f9f", label="estimate")
        if np.isfinite(exact[i, cut]).any():
            ax.plot(x, exact[i, cut], "-", color="black", lw=0.8, label="exact")
        title = _facet_title(points[i]) if points[i] else "the single point"
        if np.isfinite(p[i]):
            title += f"\nchi-square p = {p[i]:.2g}"
        ax.set_title(title, fontsize=8)
        if over is not None and (np.nan_to_num(mean[i][~body]) > 1e-3).any():
            ax.text(0.98, 0.95, f"≥{over}: {float(mean[i][~body][0]):.3g}" + (
                f" (exact {float(exact[i][~body][0]):.3g})" if np.isfinite(exact[i][~body]).all() else ""),
                    transform=ax.transAxes, ha="right", va="top", fontsize=7,
                    bbox={"facecolor": "white", "alpha": 0.9, "edgecolor": "#999"})
        ax.tick_params(labelsize=7)
        ax.set_xlabel(dim, fontsize=8)
    if shown:
        axs[0].legend(fontsize=7, loc="center right")
        axs[0].set_ylabel("share of games", fontsize=8)
    desc = est.attrs.get("description", name)
    fname = _save(fig, out, f"{name}.png", f"{desc[0].upper()}{desc[1:]}: estimate vs exact")
    caption = (f"{desc[0].upper()}{desc[1:]}, one panel per grid point: dots the estimated share of games in "
               f"each {dim} bin with its 95% t interval (band), the line the exact distribution; the title "
               "gives the p-value of Pearson's chi-square goodness of fit of the pooled counts (bins merged to "
               "expected counts >= 5) before Holm's adjustment (the distributions table gives it adjusted). "
               f"Each panel's range holds {DRAWN_MASS:.1%} of its estimated and exact mass; the bins beyond it "
               "are left out of the figure"
               + (f", and the last bin, {over} or more {dim}, is written in the panel where it holds more than "
                  "0.1%" if over is not None else "") + ".")
    if len(rows_with) > len(shown):
        caption += (f" {len(shown)} of {len(rows_with)} grid points shown; every bin of every point is in "
                    "headlines.csv.")
    return {fname: caption}


def _facet_reason(ds, parts, facet) -> str:
    states = [metadata.exact_state(ds, {**facet, **({} if not p else p)})
              for p in ([{}] if not [a for a in _axes(ds) if a not in facet] else
                        [dict(zip([a for a in _axes(ds) if a not in facet], [_py(ds[a].values[0])
                                                                            for a in _axes(ds) if a not in facet]))])]
    state, text = states[0]
    if state == "pending":
        return "exact answer not computed yet"
    if state == "stored":
        return "no finished replicates yet"
    return text.split(":")[0] + ": " + text.split(":", 1)[1].split(";")[0] if ":" in text else text


def _variance_figure(ds, parts, out: Path) -> dict[str, str]:
    """``variance_ratio.png``: each label's measured replicate variance over
    the variance the exact CLT predicts, at the last checkpoint, per grid
    point; the grey band is the 90% range of one label's ratio,
    ``chi2(R-1)/(R-1)``, which is what each dot is (no median drawn against
    a band made for one label)."""
    import matplotlib.pyplot as plt
    from matplotlib import colors
    from scipy.stats import chi2

    ratio, dim = parts["ratio"]["ratio"].isel(checkpoint=-1), parts["dim"]
    reps = parts["conv"].isel(checkpoint=-1)["replicates"]
    x, _, facets = _layout(ds)
    xvals = [_py(v) for v in ds[x].values] if x else [None]
    labels = metadata.label_text(ds[dim])
    norm = colors.Normalize(0, max(len(xvals) - 1, 1))
    cmap = plt.get_cmap("viridis")
    empty = [_facet_title(f) for f in facets if not np.isfinite(_field(ratio, f, x, dim)).any()]
    facets = [f for f in facets if _facet_title(f) not in empty]  # no empty panel: the caption names them
    if not facets:
        return {}
    fig, axs = _facet_grid(len(facets), 6.0, 3.2)
    drawn, inside, total, rs = False, 0, 0, set()
    for ax, facet in zip(axs, facets):
        values = _field(ratio, facet, x, dim)  # (labels, x values)
        r = np.ravel(_sel(reps, facet).values)  # (x values,): replicates per point
        here = False
        for j, xv in enumerate(xvals):
            y = values[:, j]
            n = int(r[j]) if r.size > j and np.isfinite(r[j]) else 0
            good = np.isfinite(y) & (y > 0)
            if not good.any() or n < 2:
                continue
            lo, hi = chi2.ppf([0.05, 0.95], n - 1) / (n - 1)
            inside += int(((y[good] >= lo) & (y[good] <= hi)).sum())
            total += int(good.sum())
            rs.add(n)
            ax.plot(np.flatnonzero(good), y[good], "o", ms=3, color=cmap(norm(j)),
                    label=f"{x}={xv}" if x else None)
            here = drawn = True
        if here:
            for n in sorted(rs):
                lo, hi = chi2.ppf([0.05, 0.95], n - 1) / (n - 1)
                ax.axhspan(lo, hi, color="#ddd", zorder=0)
            ax.axhline(1.0, color="black", lw=0.8)
            ax.set_yscale("log")
            ax.set_xticks(range(len(labels)))
            ax.set_xticklabels(labels, rotation=90, fontsize=5)
            ax.set_ylabel("measured var / CLT var", fontsize=9)
            ax.set_title(_facet_title(facet), fontsize=9)
            if x:
                ax.legend(fontsize=7, title=x, title_fontsize=7)
        else:
            ax.set_visible(False)
            empty.append(_facet_title(facet))
    if not drawn:
        plt.close(fig)
        return {}
    r_text = ", ".join(str(n) for n in sorted(rs))
    title = (f"Each label's replicate variance over the exact CLT variance, last checkpoint (grey: the 90% range "
             f"of one label's ratio, chi2(R-1)/(R-1), R = {r_text}; line: 1)")
    caption = (f"{title}. {inside} of {total} label ratios lie in the band (90% expected where the CLT variance "
               f"holds); each label's value is in variance.csv.")
    if empty:
        caption += f" Left out, no theory or no finished replicates: {'; '.join(empty)}."
    return {_save(fig, out, "variance_ratio.png", title): caption}


def _line_figures(ds, parts, out, x, facets, xvals) -> dict[str, str]:
    import matplotlib.pyplot as plt
    from matplotlib import cm, colors

    conv, dim = parts["conv"], parts["dim"]
    steps_name = conv.attrs.get("steps", "steps")
    norm = colors.Normalize(0, max(len(xvals) - 1, 1))
    cmap = plt.get_cmap("viridis")
    figs = {}
    has_err = bool(np.isfinite(conv["rms_error"].values).any())
    sd_rms = np.sqrt((conv["sd"] ** 2).mean(dim))
    specs = [("convergence.png", "RMS error of one replicate" if has_err else "RMS across-replicate sd",
              "Log-log convergence (dashed: across-replicate sd where no exact answer exists; dotted: the "
              "Monte Carlo rate, slope -1/2)")]
    for name, ylabel, title in specs:
        fig, axs = _facet_grid(len(facets), 4.2, 3.2)
        fig.subplots_adjust(wspace=0.45)
        drawn, empty = False, []
        for ax, facet in zip(axs, facets):
            all_steps = _field(conv["steps"], facet, x, "checkpoint").T
            all_err = _field(conv["rms_error"], facet, x, "checkpoint").T
            all_sd = _field(sd_rms, facet, x, "checkpoint").T
            ax.set_yscale("log")
            ax.set_xscale("log")
            here = False
            for j, xv in enumerate(xvals):
                steps = all_steps[j]
                ok = np.isfinite(steps) & (steps > 0)
                err, sd = all_err[j], all_sd[j]
                y, style = (err, "-") if np.isfinite(err[ok]).any() else (sd, "--")
                good = ok & np.isfinite(y) & (y > 0)
                if good.any():
                    ax.plot(steps[good], y[good], style, color=cmap(norm(j)), lw=1.2, marker=".", ms=3,
                            label=f"{x}={xv}" if x else None)
                    drawn = here = True
            if name == "convergence.png" and here:  # the Monte Carlo rate, through the last point drawn
                lines = ax.get_lines()
                xs, ys = lines[-1].get_data()
                ref = np.array([xs[0], xs[-1]], float)
                ax.plot(ref, ys[-1] * np.sqrt(xs[-1] / ref), ":", color="black", lw=1,
                        label="slope -1/2" if not x else None)
            ax.set_title(_facet_title(facet), fontsize=9)
            ax.set_xlabel(f"{steps_name}, mean per replicate", fontsize=9)
            ax.set_ylabel(ylabel, fontsize=9)
            ax.tick_params(labelsize=8)
            if not here:  # no empty panel: the caption says which were left out
                ax.set_visible(False)
                empty.append(_facet_title(facet))
        if x and len(xvals) > 8:
            sm = cm.ScalarMappable(norm=colors.Normalize(min(xvals), max(xvals)), cmap=cmap) \
                if ds[x].dtype.kind in "iuf" else cm.ScalarMappable(norm=norm, cmap=cmap)
            _colorbar(fig, sm, x)
        elif x and drawn:
            next(ax for ax in axs if ax.get_visible()).legend(fontsize=8, title=x, title_fontsize=8)
        if not drawn:  # nothing to draw anywhere: no figure
            plt.close(fig)
            continue
        caption = title if not empty else (
            f"{title}. Left out, nothing to draw ({'no theory for these parameters or ' if 'ratio' in name else ''}"
            f"no finished replicates): {'; '.join(empty)}")
        figs[_save(fig, out, name, title)] = caption
    return figs


# --- HTML --------------------------------------------------------------------------------


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
