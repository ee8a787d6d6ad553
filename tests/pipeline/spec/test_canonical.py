"""A spec's canonical data: made once per spec, the one form that JSON and comparisons read."""

from __future__ import annotations

import json

from boardsweep.pipeline.spec.parse import parse_spec


def test_canonical_data_is_made_once(toy_spec_text):
    spec = parse_spec(toy_spec_text)
    assert spec.canonical_data is spec.canonical_data
    assert spec.canonical_json() is spec.canonical_json()
    assert json.loads(spec.canonical_json()) == spec.canonical_data


def test_canonical_gives_a_copy_to_change(toy_spec_text):
    spec = parse_spec(toy_spec_text)
    copy = spec.canonical()
    assert copy == spec.canonical_data and copy is not spec.canonical_data
    copy["grid"]["dice_sides"].append(99)
    copy["run"]["replicates"] = 0
    assert spec.canonical_data["grid"]["dice_sides"] == [2, 3] and spec.canonical_data["run"]["replicates"] == 4


def test_a_changed_spec_has_its_own_canonical_data(toy_spec_text):
    spec = parse_spec(toy_spec_text)
    before = spec.canonical_json()
    other = spec.replaced(block=1)
    assert other.canonical_data["tasks"]["replicates_per_task"] == 1
    assert spec.canonical_data["tasks"]["replicates_per_task"] == 2 and spec.canonical_json() == before
    assert not hasattr(spec, "with_block") and not hasattr(spec, "grid_chunks")  # a run's layout is its own value
