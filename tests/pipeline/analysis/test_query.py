"""Query helpers on small hand-made arrays."""

from __future__ import annotations

import numpy as np
import xarray as xr

from boardsweep.pipeline.analysis.query import modal_string, top_k

LABELS = ["GO", "A1", "CC1", "A2", "T1", "R1", "B1", "CH1", "B2", "B3", "JAIL", "C1", "U1", "C2",
          "C3", "R2", "D1", "CC2", "D2", "D3", "FP", "E1", "CH2", "E2", "E3", "R3", "F1", "F2",
          "U2", "F3", "G2J", "G1", "G2", "CC3", "G3", "R4", "CH3", "H1", "T2", "H2", "IN_JAIL"]


def freq(values: dict[str, float]) -> xr.DataArray:
    data = np.full(len(LABELS), 0.02)
    for label, v in values.items():
        data[LABELS.index(label)] = v
    return xr.DataArray(data, dims="location", coords={"location": LABELS})


def test_modal_string_merges_in_jail_into_square_10():
    # IN_JAIL + JAIL beat E3 only once merged
    f = freq({"JAIL": 0.0236, "IN_JAIL": 0.0386, "E3": 0.0318, "GO": 0.0310})
    assert modal_string(f) == "102400"
    assert modal_string(f, merge={}) == "402400"


def test_modal_string_four_sided_example():
    assert modal_string(freq({"IN_JAIL": 0.07, "E3": 0.03, "R2": 0.031, "D2": 0.0305})) == "101518"


def test_top_k_ignores_nan():
    f = freq({"GO": np.nan, "H2": 0.5, "A1": 0.4})
    assert top_k(f, 2) == [("H2", 0.5), ("A1", 0.4)]


def test_z_is_missing_where_every_replicate_agrees():
    """A label no replicate reached (s.e. 0) has no z, not an infinite one;
    the other labels keep theirs."""
    from boardsweep.pipeline.analysis.query import compare_exact, worst_z

    counts = np.array([[[[0, 30, 70]]], [[[0, 40, 60]]], [[[0, 35, 65]]]])  # replicate, checkpoint, label
    ds = xr.Dataset(
        {"counts": (("replicate", "checkpoint", "square"), counts[:, 0]),
         "done": (("replicate",), np.ones(3, bool)),
         "exact_frequency": (("square",), np.array([1e-6, 0.35, 0.65 - 1e-6]))},
        attrs={"variables": ["counts"], "exact_variables": ["exact_frequency"], "grid_axes": []},
    )
    table = compare_exact(ds)
    z = table["z"].values
    assert np.isnan(z[0]) and np.isfinite(z[1:]).all()
    assert np.isclose(z[1], 0.0) and worst_z(table) == np.nanmax(np.abs(z))


def test_z_is_missing_where_counts_are_too_few():
    """Labels with a mean count below MIN_COUNT per replicate are not judged:
    replicates that landed 4, 4, 4 and 5 times give a tiny s.e."""
    from boardsweep.pipeline.analysis.dataset import MIN_COUNT
    from boardsweep.pipeline.analysis.query import compare_exact

    few = np.array([4, 4, 4, 5])
    many = np.array([500, 520, 480, 510])
    counts = np.stack([few, many - few, np.full(4, 1000)], axis=-1)[:, None, :]  # replicate, checkpoint, label
    ds = xr.Dataset(
        {"counts": (("replicate", "checkpoint", "square"), counts),
         "done": (("replicate",), np.ones(4, bool)),
         "exact_frequency": (("square",), np.array([0.01, 0.32, 0.67]))},
        attrs={"variables": ["counts"], "exact_variables": ["exact_frequency"], "grid_axes": []},
    )
    z = compare_exact(ds)["z"].values
    assert few.mean() < MIN_COUNT <= (many - few).mean()
    assert np.isnan(z[0]) and np.isfinite(z[1:]).all()


def grid() -> xr.Dataset:
    """A store-like Dataset with two grid axes (one with a value that holds a comma)."""
    return xr.Dataset(coords={"dice_sides": [4, 6, 8], "buy_policy": ["always", "never", "always,never"]},
                      attrs={"grid_axes": ["dice_sides", "buy_policy"]})


def test_sel_takes_several_values_of_one_axis():
    from boardsweep.pipeline.analysis import select

    ds = grid()
    assert select(ds, ("dice_sides=6,8",), ValueError) == {"dice_sides": [6, 8]}
    assert select(ds, ("dice_sides=8", "dice_sides=4"), ValueError) == {"dice_sides": [8, 4]}  # order kept
    assert select(ds, ("dice_sides=6", "dice_sides=6,4"), ValueError) == {"dice_sides": [6, 4]}  # once each
    assert select(ds, ("dice_sides=4", "buy_policy=never"), ValueError) == {"dice_sides": [4], "buy_policy": ["never"]}
    assert select(ds, ("buy_policy=always,never",), ValueError) == {"buy_policy": ["always,never"]}  # a whole value
    assert select(ds, ("buy_policy= never , always",), ValueError) == {"buy_policy": ["never", "always"]}


def test_sel_names_the_value_that_is_not_on_the_axis():
    import pytest

    from boardsweep.pipeline.analysis import select

    with pytest.raises(ValueError, match=r"'5' is not on axis 'dice_sides'; values: 4, 6, 8"):
        select(grid(), ("dice_sides=6,5",), ValueError)
    with pytest.raises(ValueError, match="no grid axis 'sides'"):
        select(grid(), ("sides=6",), ValueError)
