"""The board (a replaceable TOML data file) and the move table built from it.

A board has squares ``1..N`` (``N`` = ``squares``); tokens start off the board
at square 0 and finish on ``N``.  ``ladders`` and ``chutes`` map the square
where one starts to the square where it ends.  The move table holds, for
every square ``x`` and spin ``k``, the square the token ends on, so the exact
solver and the simulator share one definition of the rules.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from boardsweep.core.games import ParameterError

__all__ = ["Board", "DEFAULT", "OVERSHOOT", "load_board", "move_table"]

#: The board shipped with the package (``board = "milton_bradley"``).
DEFAULT = "milton_bradley"
_SHIPPED = Path(__file__).with_name("milton_bradley.toml")

#: What a spin past the last square does: ``stay`` (not moved), ``bounce``
#: (counts back from the last square), ``any`` (finishes the game).
OVERSHOOT = ("stay", "bounce", "any")


@dataclass(frozen=True)
class Board:
    """``squares`` and the jumps ``(start, end)`` of ladders and chutes (hashable,
    so solvers can cache on the board's contents, not on its file name)."""

    squares: int
    jumps: tuple[tuple[int, int], ...]


def _fail(path: object, key: str, expected: str) -> ParameterError:
    return ParameterError(f"board file {path}: key {key!r}: expected {expected}")


def _jumps(path: Path, data: dict, key: str, squares: int, up: bool) -> dict[int, int]:
    table = data.get(key, {})
    if not isinstance(table, dict):
        raise _fail(path, key, "a table of START = END squares")
    out = {}
    for start_text, end in table.items():
        where = f"{key}.{start_text}"
        if not start_text.isdigit() or isinstance(end, bool) or not isinstance(end, int):
            raise _fail(path, where, "integer squares, START = END")
        start = int(start_text)
        if not 1 <= start < squares or not 1 <= end <= squares:
            raise _fail(path, where, f"a start in 1..{squares - 1} and an end in 1..{squares}")
        if (end > start) != up or end == start:
            raise _fail(path, where, "a ladder going up" if up else "a chute going down")
        out[start] = end
    return out


def load_board(board: str = DEFAULT) -> Board:
    """Read a board file (``milton_bradley`` for the shipped one).

    Raises ParameterError naming the file and the key for any fault.
    """
    path = _SHIPPED if board == DEFAULT else Path(board)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ParameterError(
            f"parameter 'board': cannot read board file {path} "
            f"({getattr(exc, 'strerror', None) or exc}); "
            f"expected {DEFAULT!r} or the path of a TOML board file"
        ) from None
    return _parse(str(path), text)


@lru_cache(maxsize=64)
def _parse(path: str, text: str) -> Board:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError(f"board file {path}: not valid TOML ({exc})") from None
    unknown = sorted(set(data) - {"squares", "ladders", "chutes"})
    if unknown:
        raise _fail(path, unknown[0], "only the keys squares, ladders, chutes")
    squares = data.get("squares")
    if isinstance(squares, bool) or not isinstance(squares, int) or not 2 <= squares <= 10_000:
        raise _fail(path, "squares", "an integer from 2 to 10000")
    ladders = _jumps(path, data, "ladders", squares, up=True)
    chutes = _jumps(path, data, "chutes", squares, up=False)
    jumps = {**ladders, **chutes}
    both = sorted(set(ladders) & set(chutes))
    if both:
        raise _fail(path, f"chutes.{both[0]}", "a square with a ladder or a chute, not both")
    chained = sorted(s for s, e in jumps.items() if e in jumps)
    if chained:
        kind = "ladders" if chained[0] in ladders else "chutes"
        raise _fail(path, f"{kind}.{chained[0]}", "an end square where no other ladder or chute starts")
    return Board(squares, tuple(sorted(jumps.items())))


def move_table(board: Board, sides: int, overshoot: str) -> np.ndarray:
    """``table[x, k - 1]``: the square a token on ``x`` ends on after spinning ``k``.

    The spin moves ``x -> x + k``; past the last square ``N`` the token stays
    (``stay``), counts back ``N - (x + k - N)`` (``bounce``, at least square 0)
    or finishes (``any``); then a ladder or chute starting there is taken.
    """
    n, jumps = board.squares, dict(board.jumps)
    table = np.empty((n + 1, sides), np.int64)
    for x in range(n + 1):
        for k in range(1, sides + 1):
            t = x + k
            if t > n:
                t = {"stay": x, "bounce": max(2 * n - t, 0), "any": n}[overshoot]
            table[x, k - 1] = jumps.get(t, t)
    table[n, :] = n  # finished tokens stay finished
    return table
