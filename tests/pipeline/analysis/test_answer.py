"""The question a store answers (:mod:`boardsweep.pipeline.analysis.answer`),
read without Python work per grid value."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from boardsweep.pipeline.analysis import answer
from boardsweep.pipeline.store import load_sweep
from boardsweep.pipeline.words import python_value

OLD_STORE = Path(__file__).resolve().parents[2] / "support" / "old_stores" / "format5_hk_monopoly.zarr"


def test_a_store_without_an_answer_table_is_answered_without_reading_its_axes_values(monkeypatch):
    """No ``[answer]``: the game's first headline against the first grid
    axis, found from the axes' names (a 500,000-value axis made a Python
    value per label, 0.3 s at 10^7 points)."""
    ds = load_sweep(OLD_STORE)
    calls = []
    monkeypatch.setattr(answer, "python_value", lambda v: calls.append(v) or python_value(v))
    found = answer.answer_of(ds)
    assert found is not None and found.axis == ds.attrs["grid_axes"][0] and not found.given
    assert calls == []


def test_an_axis_is_converted_whole_to_the_values_python_value_gives():
    for values in (np.arange(5, dtype=np.int64), np.linspace(0, 1, 4), np.array(["short", "long"]),
                   np.array([True, False]), np.array([1, "a"], dtype=object)):
        converted = answer._values(values)
        assert converted == tuple(python_value(v) for v in values)
        assert [type(v) for v in converted] == [type(python_value(v)) for v in values]
