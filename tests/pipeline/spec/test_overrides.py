"""``--set KEY=VALUE`` on a spec: :func:`boardsweep.pipeline.spec.overrides.apply_overrides`
and :func:`load_spec` with overrides."""

from __future__ import annotations

import pytest

from boardsweep.pipeline.errors import SpecError
from boardsweep.pipeline.spec.parse import apply_overrides, load_spec, parse_spec


@pytest.mark.parametrize("item,expected", [
    ("run.replicates=16", {"run": {"replicates": 16}}),
    ("grid.dice_sides=4,6", {"grid": {"dice_sides": [4, 6]}}),
    ("grid.dice_sides=4", {"grid": {"dice_sides": [4]}}),
    ("grid.dice_sides=[4, 6]", {"grid": {"dice_sides": [4, 6]}}),
    ("grid.deck_policy=independent,shuffled_cycle", {"grid": {"deck_policy": ["independent", "shuffled_cycle"]}}),
    ("params.tally=per_landing", {"params": {"tally": "per_landing"}}),
    ('description="a, b"', {"description": "a, b"}),
    ("precision.stderr=1e-4", {"precision": {"stderr": 1e-4}}),
    ("storage_options.client_kwargs.region_name=eu", {"storage_options": {"client_kwargs": {"region_name": "eu"}}}),
])
def test_values_are_read_as_toml_lists_or_text(item, expected):
    assert apply_overrides({}, [item]) == expected


def test_effective_spec_is_recorded_and_parses_again(write_spec, monopoly_spec_text):
    path = write_spec(monopoly_spec_text)
    spec = load_spec(path, ["run.replicates=2", "grid.dice_sides=4,8"])
    assert spec.replicates == 2 and spec.grid["dice_sides"] == (4, 8)
    assert spec.source == f"{path} (--set run.replicates=2, --set grid.dice_sides=4,8)"
    assert spec.text.startswith(f"# {path}, with --set run.replicates=2 --set grid.dice_sides=4,8\n")
    again = parse_spec(spec.text)  # the text the store records is the effective spec
    assert again.canonical() == spec.canonical()
    assert load_spec(path).canonical() != spec.canonical()


def test_override_errors_name_the_key(write_spec, monopoly_spec_text):
    path = write_spec(monopoly_spec_text)
    with pytest.raises(SpecError, match=r"run\.turns: 0 is not allowed"):
        load_spec(path, ["run.turns=0"])
    with pytest.raises(SpecError, match="expected KEY=VALUE"):
        load_spec(path, ["=3"])


def test_docstring_examples_run():
    import doctest

    from boardsweep.pipeline.spec import overrides as spec

    result = doctest.testmod(spec)
    assert result.attempted >= 2 and result.failed == 0
