"""A long grid axis is parsed whole: each value validated once, the game's
check once per combination of each group it declares, and no ``stat`` per
value (:mod:`boardsweep.pipeline.spec.grid`, :func:`boardsweep.pipeline.spec.tables.maybe_files`).
Counted, not timed: on the code before, each count was twice or more."""

from __future__ import annotations

import pathlib
import re
from collections import Counter

import pytest

from boardsweep.core import schema as core_schema
from boardsweep.core.hk_monopoly import game as hk
from boardsweep.pipeline.errors import SpecError
from boardsweep.pipeline.spec.parse import parse_spec
from specs import spec_toml

#: Values of the long axis: 4 x 10^5 grid points with the two jail strategies.
POLICIES = 200_000


def long_spec(policies: list[str]) -> str:
    return spec_toml("hk_monopoly", name="long", params={"rounds": 5},
                     grid={"jail_strategy": ["short", "long"], "buy_policy": policies},
                     run={"replicates": 1, "games": 1}, checkpoints={"count": 1}, tasks={"points_per_task": 50_000})


def reserves(n: int) -> list[str]:
    return [f"reserve:{10 * i}" for i in range(n)]


@pytest.fixture
def calls(monkeypatch) -> Counter:
    """Counts of each parameter's validations (by name), of hk_monopoly's
    per-seat checks (``expand``) and of ``Path.is_file``."""
    counts: Counter = Counter()
    validate, expand, is_file = core_schema.Param.validate, hk._expand, pathlib.Path.is_file

    def counted_validate(self, value):
        counts[self.name] += 1
        return validate(self, value)

    def counted_expand(name, values, players):
        counts["expand"] += 1
        return expand(name, values, players)

    def counted_is_file(self):
        counts["is_file"] += 1
        return is_file(self)

    monkeypatch.setattr(core_schema.Param, "validate", counted_validate)
    monkeypatch.setattr(hk, "_expand", counted_expand)
    monkeypatch.setattr(pathlib.Path, "is_file", counted_is_file)
    return counts


def test_a_long_axis_is_validated_once_per_value_and_checked_per_group(calls, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = parse_spec(long_spec(reserves(POLICIES)))
    assert spec.shape == (2, POLICIES) and spec.grid["buy_policy"][-1] == f"reserve:{10 * (POLICIES - 1)}"
    assert spec.files == {}
    assert calls["buy_policy"] == POLICIES  # was 2 x: the axis validated again when resolved
    # (players, buy_policy) and (players, jail_strategy) apart, two per-seat checks each: was 4 x POLICIES
    assert calls["expand"] == 2 * (POLICIES + 2)
    assert calls["is_file"] <= 2  # one listing of the working folder: was one stat per value


def test_a_bad_value_deep_in_a_long_axis_is_named_by_its_index(tmp_path, monkeypatch):
    policies = reserves(POLICIES)
    policies[123_456] = "reserve:x"
    with pytest.raises(SpecError, match=re.escape("<spec>: grid.buy_policy[123456]: 'reserve:x' is not allowed; "
                                                  "expected 'always', 'never' or 'reserve:R'")):
        parse_spec(long_spec(policies))


def test_a_per_seat_list_that_does_not_fit_names_its_point():
    policies = reserves(1_000)
    policies[3] = "always,never"  # two values for four players
    with pytest.raises(SpecError) as caught:
        parse_spec(long_spec(policies))
    assert str(caught.value) == (
        "<spec>: grid: at jail_strategy='short', buy_policy='always,never': parameter 'buy_policy': 2 per-seat "
        "values given for players=4; expected one value for every seat or exactly 4 comma-separated values")


def test_a_grid_axis_named_as_one_of_the_stores_arrays_is_refused_in_one_line(tmp_path, capsys):
    """The money game's ``rounds`` is both a parameter and an output (rounds
    played): as a grid axis it named a coordinate and an array alike, and the
    run ended in "unexpected ValueError ... found in both data_vars and coords".
    Now a run refuses it first (exit 2, nothing made); planning it is fine."""
    from clirun import run_cli

    text = spec_toml("hk_monopoly", params={"players": 2}, grid={"rounds": [50, 100]},
                     run={"replicates": 2, "games": 10})
    path = tmp_path / "s.toml"
    path.write_text(text)
    assert len(parse_spec(text, "s.toml").resolved_points()) == 2  # parsed and planned: nothing stored
    store = tmp_path / "s.zarr"
    assert run_cli("run", str(path), "--store", str(store)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.fullmatch(
        r"boardsweep: error: .*s\.toml: grid\.rounds: hk_monopoly's store already has an array or dimension "
        r"named 'rounds' .* \(`--set params\.rounds=VALUE`\)", err[0]), err
    assert not store.exists()


@pytest.mark.parametrize("name", ["quickstart", "pe84", "stats102a", "shut_the_box", "hk_monopoly", "nightly"])
def test_every_name_a_store_makes_is_one_no_grid_axis_may_take(name):
    """Against the truth: every array and dimension of a shipped sweep's
    store skeleton, its grid axes aside, is in the names refused as axes."""
    from boardsweep.pipeline.spec.examples import names, spec_file
    from boardsweep.pipeline.spec.parse import load_spec
    from boardsweep.pipeline.spec.tables import store_names
    from boardsweep.pipeline.store.schema import skeleton

    assert name in names()
    spec = load_spec(spec_file(name))
    ds, _ = skeleton(spec, spec.game)
    made = {str(n) for n in ds.variables} | {str(d) for d in ds.dims}
    assert made - set(spec.grid) <= store_names(spec.game), made - set(spec.grid) - store_names(spec.game)
    assert not set(spec.grid) & store_names(spec.game)
