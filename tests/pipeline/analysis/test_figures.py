"""analysis.figures.panel_choice: which combinations of the other grid axes a figure draws."""

from __future__ import annotations

from boardsweep.pipeline.analysis.figures import MAX_PANELS, panel_choice


def test_every_combination_where_they_fit_in_grid_order():
    combos, total = panel_choice([["a", "b"], [1, 2, 3]])
    assert total == 6 and combos == [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2), ("b", 3)]
    assert panel_choice([]) == ([()], 1)


def test_a_large_grid_draws_the_asked_combinations_first_then_evenly_spaced_ones():
    values = [["short", "long"], list(range(500))]
    asked = [[True, False], [v in (7, 300) for v in range(500)]]  # short at 7 and at 300
    combos, total = panel_choice(values, asked)
    assert total == 1000 and len(combos) == MAX_PANELS
    assert {("short", 7), ("short", 300)} <= set(combos)
    assert combos == sorted(combos, key=lambda c: (values[0].index(c[0]), c[1]))  # grid order
    assert ("short", 0) in combos and ("long", 499) in combos  # the rest spread from the first to the last
    assert len(set(combos)) == MAX_PANELS


def test_more_asked_combinations_than_panels_are_spread_over_the_asked_ones():
    values = [["short", "long"], list(range(500))]
    combos, _ = panel_choice(values, [[False, True], [True] * 500])
    assert len(combos) == MAX_PANELS and all(c[0] == "long" for c in combos)
    assert combos[0] == ("long", 0) and combos[-1] == ("long", 499)
