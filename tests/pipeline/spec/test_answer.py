"""A spec's ``[answer]`` table: checked before anything is written, refused in
one line naming the key, and no part of the sweep's identity."""

from __future__ import annotations

from pathlib import Path

import pytest

from boardsweep.pipeline.cli.commands import main
from boardsweep.pipeline.errors import SpecError
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.spec.parse import load_spec

ROOT = Path(__file__).resolve().parents[3]

ANSWER = '\n[answer]\nheadline = "counts_frequency"\nlabel = "S3"\naxis = "rule"\nat = {dice_sides = 3}\n'


def test_the_table_is_read(toy_spec_text):
    spec = parse_spec(toy_spec_text + ANSWER)
    a = spec.answer
    assert (a.headline, a.label, a.axis, a.at, a.modal, a.given) == (
        "counts_frequency", "S3", "rule", {"dice_sides": (3,)}, False, True)
    assert a.asks({"dice_sides": 3, "rule": "plain"}) and not a.asks({"dice_sides": 2, "rule": "plain"})
    assert a.question.endswith("?")


def test_without_the_table_the_first_headline_against_the_first_axis(toy_spec_text):
    a = parse_spec(toy_spec_text).answer
    assert (a.headline, a.axis, a.at, a.label, a.given) == ("counts_frequency", "dice_sides", {}, None, False)


def test_the_table_is_not_part_of_the_identity(toy_spec_text):
    """A store made before the table was added is resumed, not refused."""
    assert parse_spec(toy_spec_text + ANSWER).canonical_json() == parse_spec(toy_spec_text).canonical_json()


def test_every_shipped_spec_names_its_question():
    for path in sorted((ROOT / "sweeps").glob("*.toml")):
        a = load_spec(path).answer
        assert a.given and a.question.endswith("?"), path
    assert load_spec(ROOT / "sweeps" / "pe84.toml").answer.modal
    assert not load_spec(ROOT / "sweeps" / "stats102a.toml").answer.modal  # PE84's string: not asked there
    assert load_spec(ROOT / "sweeps" / "shut_the_box.toml").answer.at == {"dice_sides": (6,)}
    assert load_spec(ROOT / "sweeps" / "stats102a.toml").answer.all_labels  # the assignment's whole table
    assert load_spec(ROOT / "sweeps" / "shut_the_box.toml").answer.exact_decimals == 6  # PE640's precision


BAD = [
    ('headline = "counts_frequency"', 'headline = "wins"', "answer.headline", "expected one of counts_frequency"),
    ('axis = "rule"', 'axis = "colour"', "answer.axis", "not a grid axis; expected one of dice_sides, rule"),
    ('label = "S3"', 'label = "S99"', "answer.label", "expected one of S0, S1"),
    ("at = {dice_sides = 3}", "at = {dice_sides = 5}", "answer.at.dice_sides", "not on the grid; expected one of 2, 3"),
    ("at = {dice_sides = 3}", "at = {size = 8}", "answer.at.size", "not a grid axis"),
    ("at = {dice_sides = 3}", "at = 3", "answer.at", "expected a table"),
    ('axis = "rule"', 'axis = "rule"\nmodal = true', "answer.modal", "has no modal string"),
    ('axis = "rule"', 'axis = "rule"\nmodal = "yes"', "answer.modal", "expected true or false"),
    ('axis = "rule"', 'axis = "rule"\nall_labels = 1', "answer.all_labels", "expected true or false"),
    ('axis = "rule"', 'axis = "rule"\nexact_decimals = 20', "answer.exact_decimals", "integer from 0 to 15"),
    ('axis = "rule"', 'axis = "rule"\nquestion = ""', "answer.question", "non-empty string"),
    ('axis = "rule"', 'axis = "rule"\nheadlines = 1', "answer.headlines", "unknown key; expected one of all_labels, at, axis"),
]


@pytest.mark.parametrize("old,new,key,expected", BAD, ids=[b[2] + ":" + b[3][:10] for b in BAD])
def test_a_bad_table_is_refused_in_one_line(old, new, key, expected, toy_spec_text, write_spec, tmp_path, capsys):
    assert old in ANSWER
    path = write_spec(toy_spec_text + ANSWER.replace(old, new), "bad.toml")
    store = tmp_path / "store.zarr"
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(path), "--store", str(store)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("boardsweep: error: ") and "\n" not in err
    assert f"{path}: {key}: " in err and expected in err, err
    assert not store.exists()
    with pytest.raises(SpecError):
        load_spec(path)


def test_a_headline_without_labels_lists_no_labels():
    text = (ROOT / "sweeps" / "shut_the_box.toml").read_text() + "all_labels = true\n"
    with pytest.raises(SpecError, match=r"answer.all_labels: headline 'mean_rolls' has no labels"):
        parse_spec(text, "stb.toml")


def test_a_headline_without_labels_takes_no_label():
    text = (ROOT / "sweeps" / "shut_the_box.toml").read_text() + 'label = "6"\n'
    with pytest.raises(SpecError, match=r"answer.label: headline 'mean_rolls' has no labels"):
        parse_spec(text, "stb.toml")


def test_a_recorded_text_that_cannot_hold_the_table_is_not_parsed(monkeypatch):
    """The store's recorded spec text (10 MB for a 500,000-value axis) is
    parsed only where a key could spell ``answer``: the word, or an escape."""
    import tomllib

    from boardsweep.pipeline.spec import answer

    parsed = []
    loads = tomllib.loads
    monkeypatch.setattr(answer.tomllib, "loads", lambda text: parsed.append(1) or loads(text))
    answer._parsed_table.cache_clear()
    plain = 'name = "x"\n[grid]\nbuy_policy = ["reserve:0", "reserve:10"]\n'
    assert answer.recorded_table(plain) is None and parsed == []
    asked = plain + '[answer]\nheadline = "win_share"\n'
    assert answer.recorded_table(asked) == {"headline": "win_share"} and len(parsed) == 1
    escaped = '"\\u0061nswer" = {headline = "win_share"}\n' + plain  # a quoted key spelling it with an escape
    assert answer.recorded_table(escaped) == {"headline": "win_share"} and len(parsed) == 2
    table = answer.recorded_table(asked)  # parsed once per text; each caller's copy its own
    table["headline"] = "changed"
    assert answer.recorded_table(asked) == {"headline": "win_share"} and len(parsed) == 2
    assert answer.recorded_table("answer = [") is None  # not TOML
    answer._parsed_table.cache_clear()
