"""Board file loading and validation."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from boardsweep.core.games import ParameterError, get_game
from boardsweep.core.hk_monopoly.board import (
    GO,
    IN_JAIL_LABEL,
    JAIL,
    PROPERTY,
    BoardError,
    default_board,
    load_board,
)

DEFAULT_TEXT = resources.files("boardsweep.core.hk_monopoly").joinpath("board.toml").read_text("utf-8")

DESIGN_BOARD = [  # DESIGN 3.3: (name, price, rent) for properties
    ("Go",), ("Central", 800, 90), ("Wan Chai", 700, 65), ("Income Tax",), ("Stanley", 600, 60),
    ("In Jail/Just Visiting",), ("Shek O", 400, 10), ("Mong Kok", 500, 40), ("Chance",),
    ("Tsing Yi", 400, 15), ("Free Parking",), ("Shatin", 700, 75), ("Chance",),
    ("Tuen Mun", 400, 20), ("Tai Po", 500, 25), ("Go To Jail",), ("Sai Kung", 400, 10),
    ("Yuen Long", 400, 25), ("Chance",), ("Tai O", 600, 25),
]


def write(tmp_path, text: str):
    path = tmp_path / "board.toml"
    path.write_text(text)
    return str(path)


def square_block(number: int) -> str:
    """The text of ``[[squares]]`` entry ``number`` in the default file."""
    match = re.search(rf"\[\[squares\]\]\nsquare = {number}\n.*?(?:\n\n|\Z)", DEFAULT_TEXT, re.S)
    return match.group(0)


def test_default_board_matches_design():
    board = default_board()
    assert board.names == tuple(entry[0] for entry in DESIGN_BOARD)
    for i, entry in enumerate(DESIGN_BOARD):
        if len(entry) == 3:
            assert board.table[i].tolist() == [PROPERTY, entry[1], entry[2]]
        else:
            assert board.table[i, 0] != PROPERTY and board.table[i, 1:].tolist() == [0, 0]
    assert board.table[0, 0] == GO and board.table[5, 0] == JAIL
    assert board.go == 0 and board.jail == 5


def test_labels_are_unique_names_plus_in_jail():
    labels = default_board().labels()
    assert len(labels) == 21 and len(set(labels)) == 21
    assert labels[0] == "Go" and labels[-1] == IN_JAIL_LABEL
    assert labels[8] == "Chance (9)" and labels[12] == "Chance (13)" and labels[18] == "Chance (19)"


def test_a_copy_of_the_default_file_loads(tmp_path):
    path = write(tmp_path, DEFAULT_TEXT.replace('"Central"', '"Admiralty"'))
    board = load_board(path)
    assert board.names[1] == "Admiralty"
    assert (board.table == default_board().table).all()
    assert get_game("hk_monopoly").coords_for({"board": path})["location"][1] == "Admiralty"


def expect_error(path: str, *fragments: str):
    with pytest.raises(BoardError) as info:
        load_board(path)
    message = str(info.value)
    assert path in message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_missing_price(tmp_path):
    text = DEFAULT_TEXT.replace(square_block(2), square_block(2).replace("price = 800\n", ""))
    expect_error(write(tmp_path, text), "square 2", "'price'", "missing")


def test_unknown_kind(tmp_path):
    text = DEFAULT_TEXT.replace(square_block(11), square_block(11).replace("free_parking", "casino"))
    expect_error(write(tmp_path, text), "square 11", "'kind'", "'casino'", "free_parking")


def test_missing_square(tmp_path):
    text = DEFAULT_TEXT.replace(square_block(20), "")
    expect_error(write(tmp_path, text), "square 20", "exactly 20 squares")


def test_too_many_squares(tmp_path):
    extra = square_block(20).replace("square = 20", "square = 21")
    expect_error(write(tmp_path, DEFAULT_TEXT + extra), "square", "'square'", "21", "1..20")


def test_square_given_twice(tmp_path):
    text = DEFAULT_TEXT.replace("square = 20", "square = 19")
    expect_error(write(tmp_path, text), "square 19", "twice")


def test_two_go_squares(tmp_path):
    text = DEFAULT_TEXT.replace(square_block(11), square_block(11).replace('"free_parking"', '"go"'))
    expect_error(write(tmp_path, text), "square 11", "exactly one 'go'", "found 2")


def test_no_jail_square(tmp_path):
    text = DEFAULT_TEXT.replace(square_block(6), square_block(6).replace('"jail"', '"free_parking"'))
    expect_error(write(tmp_path, text), "exactly one 'jail'", "found 0")


def test_price_on_a_non_property(tmp_path):
    text = DEFAULT_TEXT.replace(square_block(4), square_block(4) + "price = 10\n")
    expect_error(write(tmp_path, text), "square 4", "'price'", "only to kind 'property'")


def test_bad_price_value(tmp_path):
    text = DEFAULT_TEXT.replace("price = 800", 'price = "800"')
    expect_error(write(tmp_path, text), "square 2", "'price'", "integer")


def test_unknown_key(tmp_path):
    text = DEFAULT_TEXT.replace(square_block(3), square_block(3) + "colour = 'red'\n")
    expect_error(write(tmp_path, text), "square 3", "'colour'")


def test_not_toml(tmp_path):
    expect_error(write(tmp_path, "[[squares]\n"), "not valid TOML")


def test_missing_file(tmp_path):
    expect_error(str(tmp_path / "nope.toml"), "cannot be read")


def test_board_errors_are_parameter_errors_at_resolve_time(tmp_path):
    text = DEFAULT_TEXT.replace(square_block(2), square_block(2).replace("price = 800\n", ""))
    path = write(tmp_path, text)
    with pytest.raises(ParameterError, match=re.escape(path) + ".*square 2.*'price'"):
        get_game("hk_monopoly").resolve_params({"board": path})


def test_a_board_file_is_parsed_once_per_version(tmp_path, monkeypatch):
    """Every grid point's parameters are validated, the board among them: the
    file is parsed once, and again only once it changes (issue 34)."""
    from boardsweep.core.hk_monopoly import board as board_module

    path = tmp_path / "board.toml"
    path.write_text(resources.files("boardsweep.core.hk_monopoly").joinpath("board.toml").read_text("utf-8"))
    parsed = []
    real = board_module._read
    monkeypatch.setattr(board_module, "_read", lambda *args: parsed.append(args[0]) or real(*args))
    first = [board_module.load_board(str(path)) for _ in range(1000)]
    assert len(parsed) == 1 and all(b is first[0] for b in first)
    path.write_text(path.read_text() + "\n# another version of the file\n")
    assert board_module.load_board(str(path)) is not first[0]
    assert len(parsed) == 2
