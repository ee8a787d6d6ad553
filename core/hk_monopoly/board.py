"""The hk_monopoly board: loading and validating a board file.

A board file is TOML with one ``[[squares]]`` table per square (see the
shipped ``board.toml``, the default board of DESIGN 3.3).  :func:`load_board`
turns it into a :class:`Board` whose ``table`` array (squares x 3: kind code,
price, rent) is what the numba kernels read.  Every problem is reported as a
:class:`BoardError` naming the file, the square and the key.

The number of squares is fixed at :data:`N_SQUARES` (20) so that the
``location`` dimension of every result has the same size whatever board a
sweep uses; only the labels depend on the board file.
"""

from __future__ import annotations

import functools
import os

import tomllib
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from ..errors import BoardError

__all__ = [
    "N_SQUARES",
    "KINDS",
    "GO",
    "PROPERTY",
    "CHANCE",
    "INCOME_TAX",
    "JAIL",
    "FREE_PARKING",
    "GO_TO_JAIL",
    "IN_JAIL_LABEL",
    "BoardError",
    "Board",
    "load_board",
    "default_board",
]

#: Squares on every board (fixed: the location dimension must not change size).
N_SQUARES = 20

#: Square kinds in board files, in the order of their integer codes.
KINDS = ("go", "property", "chance", "income_tax", "jail", "free_parking", "go_to_jail")
GO, PROPERTY, CHANCE, INCOME_TAX, JAIL, FREE_PARKING, GO_TO_JAIL = range(len(KINDS))

#: Label of the extra location "in jail" (as opposed to Just Visiting).
IN_JAIL_LABEL = "IN_JAIL"

_KEYS = {"square", "kind", "name", "price", "rent"}
_DEFAULT = "default"


@dataclass(frozen=True)
class Board:
    """A validated board.

    Attributes
    ----------
    path : str
        Where the board came from (``"default"`` for the shipped board).
    names : tuple of str
        Square names in board order (square 1 first), as written in the file.
    table : ndarray
        int64 array (N_SQUARES, 3): kind code, price, rent per square
        (price and rent are 0 for non-property squares).
    """

    path: str
    names: tuple[str, ...]
    table: np.ndarray

    @property
    def kinds(self) -> np.ndarray:
        """Kind code of each square."""
        return self.table[:, 0]

    @property
    def go(self) -> int:
        """0-based index of the Go square."""
        return int(np.flatnonzero(self.kinds == GO)[0])

    @property
    def jail(self) -> int:
        """0-based index of the In Jail/Just Visiting square."""
        return int(np.flatnonzero(self.kinds == JAIL)[0])

    def labels(self) -> tuple[str, ...]:
        """Location labels: the square names, then ``IN_JAIL``.

        A name that occurs on several squares (e.g. ``Chance``) is made unique
        by appending the square number: ``Chance (9)``.
        """
        counts = Counter(self.names)
        squares = tuple(
            name if counts[name] == 1 else f"{name} ({i + 1})" for i, name in enumerate(self.names)
        )
        return squares + (IN_JAIL_LABEL,)


def _fail(path: str, where: str, message: str) -> BoardError:
    return BoardError(f"board file {path}: {where}: {message}")


def _text(path: str) -> str:
    """The text of ``path`` (``"default"``: the shipped board), read again
    whenever the file's size or modification time changes."""
    try:
        if path == _DEFAULT:
            return _shipped_text()
        stat = os.stat(path)
        return _file_text(path, stat.st_size, stat.st_mtime_ns)
    except (OSError, UnicodeDecodeError) as exc:
        raise BoardError(f"board file {path}: cannot be read ({exc})") from None


@functools.lru_cache(maxsize=1)
def _shipped_text() -> str:
    return resources.files("boardsweep.core.hk_monopoly").joinpath("board.toml").read_text("utf-8")


@functools.lru_cache(maxsize=64)
def _file_text(path: str, size: int, mtime_ns: int) -> str:
    return Path(path).read_text("utf-8")


def _read(path: str, text: str | None = None) -> dict:
    """Parse the TOML text of ``path`` (``"default"``: the shipped board)."""
    text = _text(path) if text is None else text
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BoardError(f"board file {path}: not valid TOML ({exc})") from None


@functools.lru_cache(maxsize=64)
def _board(path: str, text: str) -> Board:
    """The board parsed from ``text`` (kept: a sweep asks once per grid point,
    and parsing the TOML cost more than a short game)."""
    return parse_board(path, _read(path, text))


def _int_key(path: str, where: str, entry: dict, key: str, minimum: int) -> int:
    if key not in entry:
        raise _fail(path, where, f"key {key!r} is missing")
    value = entry[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _fail(path, where, f"key {key!r} = {value!r}: expected an integer >= {minimum}")
    return value


def _square_row(path: str, index: int, entry: object) -> tuple[int, str, tuple[int, int, int]]:
    """Validate one ``[[squares]]`` table; return (number, name, (kind, price, rent))."""
    where = f"squares entry {index + 1}"
    if not isinstance(entry, dict):
        raise _fail(path, where, "expected a table")
    number = _int_key(path, where, entry, "square", 1)
    if number > N_SQUARES:
        raise _fail(path, where, f"key 'square' = {number}: expected 1..{N_SQUARES}")
    where = f"square {number}"
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise _fail(path, where, f"unknown key {unknown[0]!r}; allowed keys: {', '.join(sorted(_KEYS))}")
    kind = entry.get("kind")
    if kind not in KINDS:
        raise _fail(path, where, f"key 'kind' = {kind!r}: expected one of {', '.join(KINDS)}")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _fail(path, where, f"key 'name' = {name!r}: expected a non-empty string")
    code = KINDS.index(kind)
    if code == PROPERTY:
        price = _int_key(path, where, entry, "price", 1)
        rent = _int_key(path, where, entry, "rent", 0)
        return number, name.strip(), (code, price, rent)
    for key in ("price", "rent"):
        if key in entry:
            raise _fail(path, where, f"key {key!r} applies only to kind 'property', not {kind!r}")
    return number, name.strip(), (code, 0, 0)


def _check_counts(path: str, rows: dict[int, tuple]) -> None:
    """Exactly N_SQUARES squares numbered 1..N_SQUARES, one go, one jail."""
    missing = [n for n in range(1, N_SQUARES + 1) if n not in rows]
    if missing:
        why = f"missing: a board has exactly {N_SQUARES} squares numbered 1..{N_SQUARES}"
        raise _fail(path, f"square {missing[0]}", why)
    for code, label in ((GO, "go"), (JAIL, "jail")):
        found = [n for n, (_, row) in sorted(rows.items()) if row[0] == code]
        if len(found) != 1:
            where = f"square {found[1]}" if found else "squares"
            raise _fail(
                path, where, f"key 'kind': exactly one {label!r} square is required, found {len(found)}"
            )


def parse_board(path: str, data: dict) -> Board:
    """Validate parsed TOML ``data`` read from ``path`` and build a :class:`Board`."""
    squares = data.get("squares")
    extra = sorted(set(data) - {"squares"})
    if extra:
        raise _fail(path, "top level", f"unknown key {extra[0]!r}; expected only [[squares]] tables")
    if not isinstance(squares, list):
        raise _fail(path, "top level", "key 'squares' is missing: expected [[squares]] tables")
    rows: dict[int, tuple[str, tuple[int, int, int]]] = {}
    for index, entry in enumerate(squares):
        number, name, row = _square_row(path, index, entry)
        if number in rows:
            raise _fail(path, f"square {number}", "key 'square': this square is given twice")
        rows[number] = (name, row)
    _check_counts(path, rows)
    names = tuple(rows[n][0] for n in range(1, N_SQUARES + 1))
    table = np.array([rows[n][1] for n in range(1, N_SQUARES + 1)], dtype=np.int64)
    table.setflags(write=False)
    return Board(path=path, names=names, table=table)


def load_board(path: str = _DEFAULT) -> Board:
    """Load and validate a board file (``"default"``: the shipped ``board.toml``).

    Raises
    ------
    BoardError
        If the file cannot be read or parsed, or a square is invalid; the
        message names the file, the square and the key.
    """
    if not isinstance(path, str) or not path:
        raise BoardError(f"board: {path!r} is not a path string (or 'default')")
    return _board(path, _text(path))  # read every time: a changed file is parsed again


def default_board() -> Board:
    """The shipped board of DESIGN 3.3."""
    return load_board(_DEFAULT)
