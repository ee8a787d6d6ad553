"""The numbers the one-screen tables show (:mod:`boardsweep.pipeline.analysis.ranking`)
and the report's per-point figures (:mod:`boardsweep.pipeline.analysis.table_figures`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from boardsweep.pipeline.analysis import ranking, table_figures

NAN = float("nan")


def test_labels_are_ranked_largest_first_ties_in_label_order_nan_last():
    assert ranking.ranked(np.array([0.2, NAN, 0.5, 0.2, 0.1])) == [2, 0, 3, 4, 1]


def test_the_largest_z_is_the_largest_in_size_of_the_finite_ones():
    assert ranking.largest_z(np.array([1.0, -3.5, NAN, 2.0])) == 1
    assert ranking.largest_z(np.array([NAN, NAN])) is None


def test_a_rows_largest_value_and_most_likely_bin_skip_nan():
    assert ranking.row_largest(np.array([NAN, 0.3, 0.1])) == 0.3
    assert np.isnan(ranking.row_largest(np.array([NAN, NAN])))
    assert ranking.most_likely(np.array([0.1, NAN, 0.6, 0.3])) == 2 and ranking.most_likely(np.array([NAN])) is None
    assert ranking.playing(np.array([[NAN, 1.0, NAN], [NAN, 2.0, 0.5]])) == [1, 2]


def test_a_points_agreement_is_its_smallest_holm_p_against_alpha():
    p_holm = pd.DataFrame({"headline": ["a", "a", "a", "b"], "point": [0, 0, 2, 1], "p_holm": [0.5, 0.001, 0.3, 0.9]})
    assert ranking.point_agreement({"p_holm": p_holm, "alpha": 0.05}, "a", 3) == ["NO", "-", "yes"]


def test_a_points_figures_are_its_worst_z_top_labels_and_distance_from_the_exact_law():
    mean, ref = np.array([0.5, 0.3, 0.2]), np.array([0.4, 0.4, 0.2])
    fig = table_figures.point_figures(mean, ref, np.array([2.0, -2.5, 0.0]))
    assert fig["worst"] == 1 and fig["max_abs_z"] == 2.5 and fig["top"] == [0, 1, 2]
    assert fig["max_abs_error"] == pytest.approx(0.1) and fig["tv_distance"] == pytest.approx(0.1)
    assert table_figures.point_figures(mean, np.array([0.4, NAN, 0.2]), np.full(3, NAN))["tv_distance"] is None


def test_independent_decks_have_no_decomposition():
    assert table_figures.decomposition_figures(np.array([1.0, 2.0]), np.zeros(2), np.zeros(2)) is None
    worst, median = table_figures.decomposition_figures(np.array([1.0, 2.0, 3.0]), np.array([0.1, 0.5, 0.2]),
                                                        np.array([0.1, 0.25, 0.2]))
    assert worst == 1 and median == pytest.approx(0.2)
