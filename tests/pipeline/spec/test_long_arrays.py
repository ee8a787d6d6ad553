"""TOML with long one-line arrays read whole (:func:`boardsweep.pipeline.spec.parse.loads`):
the values, and the errors, ``tomllib`` gives."""

from __future__ import annotations

import tomllib

import pytest

from boardsweep.pipeline.spec import parse
from boardsweep.pipeline.spec.parse import parse_spec
from specs import spec_toml

PAD = "x" * parse.LONG_LINE

CASES = [
    f'a = ["{PAD}", "b"]\n',
    f'a = ["{PAD}", "b",]\n',  # a trailing comma: TOML, not JSON
    f'a = ["{PAD}", 1.5, true, -0, 1e5, 2E-3, 9223372036854775808]  # a comment\n[t]\nb = 1\n',
    f'[t]\na = ["{PAD}", "é", "it\'s"]\n',
    f'a = ["{PAD}\\u00e9"]\n',  # an escape
    f"a = ['{PAD}']\n",  # a literal string
    f'a = [NaN, "{PAD}"]\n',  # JSON's, not TOML's
    f'a = [1e400, "{PAD}"]\n',
    f'd = """\nk = ["{PAD}"]\n"""\n',  # inside a multi-line string: text, not an array
    f'a = ["{PAD}"] junk\n',
    f'a = ["{PAD}"]\na = [1]\n',  # a key twice
    f'a = [["{PAD}"], [1]]\n',
    f'a = ["{PAD}", 01]\n',
    f'a = ["{PAD}", +1, 1_000]\n',
    f'a = ["{PAD}\x7f"]\n',
    f'a = ["{PAD}\t"]\n',
    f'"q k" = ["{PAD}"]\nb.c = ["{PAD}", 3]\n',
    f'x = {{y = ["{PAD}"]}}\n',
    f'[[arr]]\nv = ["{PAD}"]\n[[arr]]\nv = [2]\n',
    f'a = ["{PAD}"]\r\nb = 2\r\n',
    f'a = ["{PAD}"] # \x01 a control character in a comment\n',
]


def _read(reader, text: str):
    try:
        return "values", repr(reader(text))
    except tomllib.TOMLDecodeError as exc:
        return "error", str(exc)


@pytest.mark.parametrize("text", CASES)
def test_the_values_and_errors_are_tomllib_s(text):
    assert _read(parse.loads, text) == _read(tomllib.loads, text)


def test_a_long_axis_is_read_whole(monkeypatch):
    """tomllib reads a 10^5-value axis's spec without the axis (it was the whole text)."""
    read = []
    loads = tomllib.loads
    monkeypatch.setattr(parse.tomllib, "loads", lambda text: read.append(len(text)) or loads(text))
    policies = [f"reserve:{i}" for i in range(100_000)]
    text = spec_toml("hk_monopoly", name="long", params={"rounds": 5}, grid={"buy_policy": policies},
                     run={"replicates": 1, "games": 1}, checkpoints={"count": 1}, tasks={"points_per_task": 50_000})
    spec = parse_spec(text)
    assert spec.grid["buy_policy"] == tuple(policies)
    assert read and max(read) < 100_000 < len(text)  # the spec without its axis, and a board file
