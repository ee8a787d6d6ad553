"""Sweep specs: valid ones parse; malformed ones are refused naming file and key."""

from __future__ import annotations

import pytest

from boardsweep.pipeline.cli.commands import main
from boardsweep.pipeline.errors import SpecError
from boardsweep.pipeline.spec.parse import load_spec, parse_spec


def test_valid_spec_parses(write_spec, toy_spec_text):
    spec = load_spec(write_spec(toy_spec_text))
    assert spec.game_name == "toy" and spec.seed == 7
    assert spec.grid == {"dice_sides": (2, 3), "rule": ("plain", "sticky")}
    assert spec.shape == (2, 2) and spec.replicates == 4 and spec.block == 2
    assert spec.run_shape == {"games": 2, "turns": 60}
    assert list(spec.checkpoints) == sorted(set(spec.checkpoints)) and spec.checkpoints[-1] == 60
    assert len(spec.points()) == 4
    assert spec.default_store() == "results/toy.zarr"


def test_canonical_ignores_comments_and_layout(toy_spec_text):
    a = parse_spec(toy_spec_text)
    b = parse_spec("# a comment\n" + toy_spec_text.replace("seed = 7", "seed   =   7  # root"))
    assert a.canonical_json() == b.canonical_json() and a.sha256 != b.sha256


def test_explicit_checkpoints(toy_spec_text):
    text = toy_spec_text.replace("count = 5", "values = [10, 30, 60]")
    assert list(parse_spec(text).checkpoints) == [10, 30, 60]


def test_equal_batches_of_the_series(toy_spec_text):
    """``[checkpoints] batches``: default 64 (the run length where shorter),
    0 for none, part of the sweep's identity; out of range: one line naming the key."""
    assert parse_spec(toy_spec_text).series_batches == 60  # turns = 60
    spec = parse_spec(toy_spec_text.replace("count = 5", "count = 5\nbatches = 12"))
    assert spec.series_batches == 12 and spec.canonical()["series"] == {"batches": 12}
    assert set(spec.checkpoints) < set(spec.simulated_checkpoints) and spec.simulated_checkpoints[-1] == 60
    none = parse_spec(toy_spec_text.replace("count = 5", "count = 5\nbatches = 0"))
    assert none.series_batches == 0 and "series" not in none.canonical()
    assert list(none.simulated_checkpoints) == list(none.checkpoints)
    for bad in ("3", "61", "-1", "2.5", '"many"'):
        with pytest.raises(SpecError, match=r"checkpoints\.batches") as err:
            parse_spec(toy_spec_text.replace("count = 5", f"count = 5\nbatches = {bad}"))
        assert "\n" not in str(err.value)


def test_task_seconds_instead_of_a_block(toy_spec_text):
    spec = parse_spec(toy_spec_text.replace("replicates_per_task = 2", "seconds = 2.5"))
    assert spec.task_seconds == 2.5 and spec.block == 1
    assert spec.canonical()["tasks"] == {"seconds": 2.5}
    assert parse_spec(toy_spec_text).task_seconds is None


def test_defaults_without_optional_tables():
    spec = parse_spec('name = "x"\ngame = "toy"\nseed = 1\n[run]\nreplicates = 2\n')
    assert spec.grid == {} and spec.block == 1 and spec.points()[0][0] == ()


def _edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


MALFORMED = [
    # (old, new, key named in the error, extra text expected)
    ("seed = 7", "seed = 7\nseeds = 8", "seeds", "unknown key"),
    ("dice_sides = [2, 3]", "dice_side = [2, 3]", "grid.dice_side", "unknown key"),
    ("dice_sides = [2, 3]", 'dice_sides = [2, "six"]', "grid.dice_sides[1]",
     "'six' is not allowed; expected an integer >= 2"),
    ('rule = ["plain", "sticky"]', 'rule = ["plain", "wobbly"]', "grid.rule[1]", "'wobbly'"),
    ('rule = ["plain", "sticky"]', "rule = []", "grid.rule", "non-empty list"),
    ("dice_sides = [2, 3]", "dice_sides = [2, 2]", "grid.dice_sides", "repeated"),
    ("seed = 7", "", "seed", "missing"),
    ("seed = 7", "seed = -3", "seed", "integer >= 0"),
    ('game = "toy"', 'game = "tody"', "game", "unknown game 'tody'"),
    ("turns = 60", "turn = 60", "run.turn", "unknown key"),
    ("replicates = 4", "replicates = 0", "run.replicates", "integer >= 1"),
    ("games = 2", "games = 2.5", "run.games", "2.5"),
    ("count = 5", "values = [5, 3, 60]", "checkpoints.values", "strictly increasing"),
    ("count = 5", "values = [5, 30]", "checkpoints.values", "must equal run.turns = 60"),
    ("count = 5", "every = 5", "checkpoints.every", "unknown key"),
    ("replicates_per_task = 2", "replicates_per_task = 9", "tasks.replicates_per_task", "more than"),
    ("replicates_per_task = 2", "block = 2", "tasks.block", "unknown key"),
    ("replicates_per_task = 2", "replicates_per_task = 2\nseconds = 5", "tasks.seconds", "one of the two"),
    ("replicates_per_task = 2", "seconds = 0", "tasks.seconds", "above 0"),
    ("replicates_per_task = 2", 'seconds = "10"', "tasks.seconds", "expected a number"),
    ("size = 8", 'size = "8"', "params.size", "expected an integer >= 3"),
    ("size = 8", "size = 8\ndice_sides = 4", "grid.dice_sides", "either fixed or an axis"),
    ("size = 8", "", "grid", "same labels"),  # size becomes an axis below
    ('rule = ["plain", "sticky"]', 'rule = ["plain", "forbidden"]', "grid", "never allowed"),
    ('name = "toy"', 'name = "a b/c"', "name", "not allowed"),
    ('name = "toy"', 'name = "toy', "", "not valid TOML"),
]


@pytest.mark.parametrize("old,new,key,expected", MALFORMED, ids=[m[2] + ":" + m[3][:12] for m in MALFORMED])
def test_malformed_spec_rejected_by_cli(old, new, key, expected, toy_spec_text, write_spec, tmp_path, capsys):
    text = _edit(toy_spec_text, old, new)
    if expected == "same labels":
        text = _edit(text, "[grid]", "[grid]\nsize = [8, 9]")
    path = write_spec(text, "bad.toml")
    store = tmp_path / "store.zarr"
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(path), "--store", str(store)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("boardsweep: error: ") and "\n" not in err
    assert f"{path}: {key}" in err, err
    assert expected in err, err
    assert not store.exists()
    with pytest.raises(SpecError):
        load_spec(path)


def test_missing_spec_file(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(tmp_path / "nope.toml")])
    assert exit_info.value.code == 2
    assert "nope.toml" in capsys.readouterr().err


def test_a_spec_that_is_not_utf8_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / "latin1.toml"
    path.write_bytes('name = "caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(SystemExit) as caught:
        main(["run", str(path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert caught.value.code == 2 and len(err) == 1 and str(path) in err[0] and "UTF-8" in err[0], err


def test_a_run_length_beyond_64_bit_counts_is_refused(toy_spec_text):
    with pytest.raises(SpecError, match=r"run.turns: 1000000000000000000000 is not allowed"):
        parse_spec(toy_spec_text.replace("turns = 60", "turns = 1000000000000000000000"), "big.toml")


def test_precision_for_a_game_without_an_estimate_is_refused(toy_spec_text):
    from boardsweep.core import games

    games.register("flat", "bad_output_game:FLAT")
    text = toy_spec_text.replace('game = "toy"', 'game = "flat"') + "\n[precision]\nstderr = 0.01\nmax_replicates = 8\n"
    with pytest.raises(SpecError, match=r"precision: game 'flat' has no estimate"):
        parse_spec(text, "flat.toml")


def test_a_spec_looks_its_game_up_once_and_pickles_without_it(toy_spec_text, monkeypatch):
    """Each lookup reads every installed distribution's entry points: a run
    asked ``spec.game`` a dozen times (5-10 ms each)."""
    import pickle

    from boardsweep.pipeline.spec import parse

    spec = parse_spec(toy_spec_text)
    looked, get_game = [], parse.get_game
    monkeypatch.setattr(parse, "get_game", lambda name: looked.append(name) or get_game(name))
    game = spec.game
    other = spec.replaced(block=1)
    assert all(s.game is game for s in (spec, spec, other, other.replaced(seed=8))) and len(looked) == 1
    assert "game" not in pickle.loads(pickle.dumps(spec)).__dict__  # unpickled: looked up where it runs
