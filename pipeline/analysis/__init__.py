"""The answers in a store: estimates, intervals, the verdict, variance and convergence:
the xarray layer over :mod:`boardsweep.core.stats` (array functions), and the ``ds.boardsweep`` accessor.

Code outside this folder imports from here (``from ..analysis import game_of``),
never from its modules: ``__all__`` is what the other folders use of it (a few
under names of their own, clear outside their module: ``headline_estimates``,
``headline_summary``, ``headline_verdict``, ``headline_tests``, ``convergence_of``,
``exact_compared``, ``compared_indices``, ``figure_words``).  The face is lazy
(PEP 562): a name's module (xarray, scipy, matplotlib) is imported when the name
is first asked for, so that importing the folder costs nothing.
"""

# ruff: noqa: F401 - the TYPE_CHECKING imports are this face's declaration of what it hands on

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

if TYPE_CHECKING:  # what type checkers and readers follow; at run time each name is imported on first use
    from .accessor import SweepAccessor
    from .answer import answer_of, asked_flat, asked_points, cap_note
    from .blocks import (block_chunks, BLOCK_POINTS, block_verdict, grid_blocks, holm_adjusted, kept_verdict,
                         ROW_BLOCK_POINTS, run_overview, shown_overview, verdict_on_workers)
    from .clt import CLT_MIN_COUNT, TEST_NAMES, TEST_TEXT
    from .comparisons import axis_comparisons, compared as compared_indices
    from .convergence import convergence as convergence_of, convergence_rate, frequencies
    from .dataset import (answer_counts, canonical_spec, distribution_variables, exact_state, exact_states, game_of,
                          grid_points, grid_points_at, grid_size, label_text, MIN_COUNT, point_params, run_shape_of,
                          z_score)
    from .decks import BETWEEN_DOMINATES, deck_pairs, SHARE_INTERVAL_TEXT, shuffle_decomposition
    from .detection import detectable
    from .draws import has_series, headline_diagnostics, headline_draws
    from .figures import answer_figure, words as figure_words, MANY_LABELS, MAX_PANELS, panel_choice, panel_spread
    from .headlines import (agreement_per_point, ALPHA, estimates as headline_estimates, summary as headline_summary,
                            tests as headline_tests, verdict as headline_verdict, of_variable as headlines_of_variable,
                            HOLM_TEXT, label_values, LEVEL)
    from .headtohead import head_to_head
    from .intervals import INTERVAL_NAMES, INTERVAL_TEXT
    from .mixing import acf_limit, autocorrelation, ess_reference, LAGS
    from .power import dry_run_lines
    from .query import compared as exact_compared, table_rows
    from .ranking import (flat_estimate, flat_label, half_width, largest_z, most_likely, playing, point_agreement,
                          point_replicates, ranked, row_largest, tested_z)
    from .reading import checked_store, open_store, read_finished, read_summary, read_sweep, select, steadily
    from .status import (entries_digest, grid_digest, none_notes, precision_entries, status_entries, status_marks,
                         StatusMarks)
    from .table_figures import (best_tests, compared_mean, comparison_figures, decomposition_figures,
                                distribution_figures, point_figures, point_ratios)
    from .work import planned_work, PlannedWork, precision_columns, precision_counts, store_counts
    from .variance import (batch_means, label_variance, MAX_DIAGNOSED, replicate_agreement, theoretical_variance,
                           variance_ratio)

#: This folder's modules -> the public names each gives the folder (the list above, for the run time).
_HOME = {
    "accessor": ("SweepAccessor",),
    "answer": ("answer_of", "asked_flat", "asked_points", "cap_note"),
    "blocks": ("block_chunks", "BLOCK_POINTS", "block_verdict", "grid_blocks", "holm_adjusted", "kept_verdict",
               "ROW_BLOCK_POINTS", "run_overview", "shown_overview", "verdict_on_workers"),
    "clt": ("CLT_MIN_COUNT", "TEST_NAMES", "TEST_TEXT"),
    "comparisons": ("axis_comparisons", "compared_indices"),
    "convergence": ("convergence_of", "convergence_rate", "frequencies"),
    "dataset": ("answer_counts", "canonical_spec", "distribution_variables", "exact_state", "exact_states", "game_of",
                "grid_points", "grid_points_at", "grid_size", "label_text", "MIN_COUNT", "point_params", "run_shape_of",
                "z_score"),
    "decks": ("BETWEEN_DOMINATES", "deck_pairs", "SHARE_INTERVAL_TEXT", "shuffle_decomposition"),
    "detection": ("detectable",),
    "draws": ("has_series", "headline_diagnostics", "headline_draws"),
    "figures": ("answer_figure", "figure_words", "MANY_LABELS", "MAX_PANELS", "panel_choice", "panel_spread"),
    "headlines": ("agreement_per_point", "ALPHA", "headline_estimates", "headline_summary", "headline_tests",
                  "headline_verdict", "headlines_of_variable", "HOLM_TEXT", "label_values", "LEVEL"),
    "headtohead": ("head_to_head",),
    "intervals": ("INTERVAL_NAMES", "INTERVAL_TEXT"),
    "mixing": ("acf_limit", "autocorrelation", "ess_reference", "LAGS"),
    "power": ("dry_run_lines",),
    "query": ("exact_compared", "table_rows"),
    "ranking": ("flat_estimate", "flat_label", "half_width", "largest_z", "most_likely", "playing", "point_agreement",
                "point_replicates", "ranked", "row_largest", "tested_z"),
    "reading": ("checked_store", "open_store", "read_finished", "read_summary", "read_sweep", "select", "steadily"),
    "status": ("entries_digest", "grid_digest", "none_notes", "precision_entries", "status_entries", "status_marks",
               "StatusMarks"),
    "table_figures": ("best_tests", "compared_mean", "comparison_figures", "decomposition_figures",
                      "distribution_figures", "point_figures", "point_ratios"),
    "work": ("planned_work", "PlannedWork", "precision_columns", "precision_counts", "store_counts"),
    "variance": ("batch_means", "label_variance", "MAX_DIAGNOSED", "replicate_agreement", "theoretical_variance",
                 "variance_ratio"),
}
#: Names this face gives under a name of its own (clearer outside their module, or one a module
#: of this folder bears): public name -> the module's.
_AS = {"compared_indices": "compared", "convergence_of": "convergence", "exact_compared": "compared", "figure_words":
       "words", "headline_estimates": "estimates", "headline_summary": "summary", "headline_tests": "tests",
       "headline_verdict": "verdict", "headlines_of_variable": "of_variable"}
__all__, __getattr__ = lazy(__name__, _HOME, _AS)

