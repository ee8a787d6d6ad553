"""A self-contained report of a sweep store: one folder that opens offline.

The package: :mod:`.build` assembles it; :mod:`.parts` analyses the report variable;
:mod:`.tables` and :mod:`.columns` (what each column means), :mod:`.summary` and
:mod:`.verdict` make its tables; :mod:`.panels`, :mod:`.heatmaps`, :mod:`.forest`,
:mod:`.pmf`, :mod:`.convergence_figure` and :mod:`.variance_figure` its figures;
:mod:`.page` its page (prose in ``templates/``); :mod:`.folder` replaces an earlier
report in its folder.

``build_report(store, out_dir)`` writes into ``out_dir`` (default
:func:`default_out_dir`: ``results/x.zarr`` -> ``results/x.report``).  It
builds the report in a staging folder inside it, then replaces the earlier
report's files: only those the earlier report recorded in its manifest
(:data:`MANIFEST`, ``.boardsweep-report.json``) are removed, a file of the
report's names that no report wrote refuses the folder
(:class:`ReportFolderError`, exit 2), and a report killed midway leaves only
files the next run removes.  A grid of more than one block
(:data:`.blockwise.REPORT_BLOCK_POINTS`; ``build_report(..., block_points=N)``)
is read block by block (:mod:`.blockwise`): the same tables and
``summary.json``, written as each block is read; its figures, comparisons
and answer from a sub-grid of at most one block.  A grid of more than
:data:`.sample.TABLE_POINTS` points is read in blocks too, and its
per-point tables and ``summary.json`` hold the rows of a bounded sample
(:mod:`.sample`; the verdict over every point) unless
``build_report(..., every=True)`` (``report --all``) asks for every point's.

Every number comes from :mod:`boardsweep.pipeline.analysis.headlines` (one estimator:
the ratio of sums with its standard error, ``estimate, se, low, high, df,
exact, z, p``), and every flag, map and count of differences uses the
verdict's level :data:`headlines.ALPHA`.  The folder holds:

* ``index.html``: a summary first (the spec's description, the run shape,
  the date, the verdict), the headline answers (scalars as rows, the
  interval written ``estimate ± half-width``; each distribution as one row
  per grid point), then the figures and the other tables, each column defined;
* figures (PNG with an SVG copy), whose number depends on the grid's axes,
  never on its number of points, each of at most
  :data:`~boardsweep.pipeline.analysis.figures.MAX_PANELS` panels (one per
  combination of the other axes: the asked ones first, then evenly spaced;
  the caption says how many of how many): ``forest.png`` (each scalar headline per
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
  and label), ``comparisons.csv`` (Welch/Holm tests between rule variants: each axis's
  first value against at most :data:`.parts.MAX_COMPARED` others),
  ``variance.csv`` (per point, headline and label: replicate s.d., MCSE,
  ESS, exact CLT variance, deck parts; :func:`analysis.label_variance`; for
  grids of at most :data:`.tables.MAX_VARIANCE_POINTS` points),
  ``decomposition.csv`` (shuffled decks, per label: between- and within-deck
  variance, the paired deck test), ``precision.csv`` and ``head_to_head.csv``
  (strategies of a per-seat axis pair by pair: :func:`analysis.headtohead.head_to_head`)
  where they apply;
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

from ...errors import ReportFolderError
from ..variable import pick_variable
from .build import build_report, report_points
from .columns import COLUMNS
from .folder import STAGING, MANIFEST, default_out_dir  # noqa: F401  (STAGING: tests)
from .grid import point_key
from .parts import MAX_THEORY_POINTS
from .tables import variance_words  # noqa: F401  (tests)

__all__ = ["build_report", "report_points", "default_out_dir", "pick_variable", "point_key", "ReportFolderError", "COLUMNS",
           "MANIFEST", "MAX_THEORY_POINTS"]
