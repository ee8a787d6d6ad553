"""A spec's ``[answer]`` table: the question the sweep asks, and where its answer is.

::

    [answer]
    headline = "frequency"         # one of the game's headlines (default: the game's first)
    label = "IN_JAIL"              # optional: one label of the headline's dimension
    axis = "dice_sides"            # optional: the grid axis the headline is studied against
    at = {dice_sides = 6}          # optional: the grid points asked (axis = value or [values])
    question = "..."               # optional: the question in words (default: the headline's)
    modal = true                   # optional: show the game's modal string (PE84's); default false
    all_labels = true              # optional: every label of the headline, by name, most frequent first
    exact_decimals = 6             # optional: the exact answer printed to this many decimals

``run``, ``query --summary`` and the report answer this question first: the
asked points (every point matching ``at``) are always shown, whatever the
line budget.  The table is presentation, not data: it is not part of the
sweep's identity (:attr:`Spec.canonical_data <boardsweep.pipeline.spec.parse.Spec.canonical_data>`),
and a store reads it back from the spec text it records (:func:`recorded_table`).
"""

from __future__ import annotations

import copy
import functools
import tomllib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ...core.games import Game, ParameterError, headlines_of

__all__ = ["ANSWER_KEYS", "Answer", "check_answer", "default_answer", "recorded_table"]

ANSWER_KEYS = {"headline", "label", "axis", "at", "question", "modal", "all_labels", "exact_decimals"}


@dataclass(frozen=True)
class Answer:
    """The question a sweep asks and where its answer is.

    Attributes
    ----------
    headline : str
        The headline quantity that answers it.
    question : str
        The question in words.
    axis : str or None
        The grid axis the headline is studied against (the answer figure's x).
    at : dict
        Grid axis -> the values asked (tuples); the asked points are those
        matching every entry.
    label : str or None
        One label of the headline's dimension (e.g. ``IN_JAIL``); None: all.
    modal : bool
        Whether the game's short name for the most frequent labels is shown.
    all_labels : bool
        Whether the answer lists every label of the headline (largest
        estimate first) instead of the few most frequent.
    exact_decimals : int or None
        Decimals of the exact answer as the question asks for it (Project
        Euler 640: 6); None: six significant digits.
    given : bool
        Whether the spec named it (False: :func:`default_answer`).
    """

    headline: str
    question: str
    axis: str | None = None
    at: dict[str, tuple] = field(default_factory=dict)
    label: str | None = None
    modal: bool = False
    given: bool = True
    all_labels: bool = False
    exact_decimals: int | None = None

    def asks(self, point: Mapping[str, Any]) -> bool:
        """Whether the grid point ``point`` (axis -> value) is asked."""
        return all(point.get(a) in values for a, values in self.at.items())


def _question(game: Game, name: str) -> str:
    h = next(h for h in headlines_of(game) if h.name == name)
    return h.question or f"What is the {h.description}?"


def default_answer(game: Game, grid: Mapping[str, tuple]) -> Answer:
    """The answer of a spec without ``[answer]``: the game's first headline against the first grid axis."""
    name = headlines_of(game)[0].name
    return Answer(name, _question(game, name), next(iter(grid), None), given=False)


def check_answer(table: Any, game: Game, grid: Mapping[str, tuple], labels: Mapping[str, tuple],
                 fail: Callable[[str, str], Exception]) -> Answer:
    """The ``[answer]`` table checked against the game and the grid.

    ``labels``: the game's coordinate labels (dimension -> labels);
    ``fail(key, message)``: the exception to raise, naming the key
    (``answer.axis``) and what was expected.
    """
    if not isinstance(table, dict):
        raise fail("answer", f"expected a table [answer], got {table!r}")
    for key in table:
        if key not in ANSWER_KEYS:
            raise fail(f"answer.{key}", f"unknown key; expected one of {', '.join(sorted(ANSWER_KEYS))}")
    heads = {h.name: h for h in headlines_of(game)}
    name = table.get("headline", next(iter(heads)))
    if name not in heads:
        raise fail("answer.headline", f"{name!r} is not a headline of game {game.name!r}; expected one of "
                   + ", ".join(heads))
    axis = table.get("axis", next(iter(grid), None))
    if "axis" in table and (not isinstance(axis, str) or axis not in grid):
        raise fail("answer.axis", f"{axis!r} is not a grid axis; expected one of {', '.join(grid) or '(no axis)'}")
    question = table.get("question", _question(game, name))
    if not isinstance(question, str) or not question.strip():
        raise fail("answer.question", f"{question!r} is not allowed; expected a non-empty string")
    modal = table.get("modal", False)
    if not isinstance(modal, bool):
        raise fail("answer.modal", f"{modal!r} is not allowed; expected true or false")
    if modal and "modal" not in game.extras:
        raise fail("answer.modal", f"game {game.name!r} has no modal string; expected false")
    label = _label(table, game, heads[name], labels, fail)
    every = table.get("all_labels", False)
    if not isinstance(every, bool):
        raise fail("answer.all_labels", f"{every!r} is not allowed; expected true or false")
    if every and not game.variables[heads[name].numerator].dims[1:]:
        raise fail("answer.all_labels", f"headline {name!r} has no labels (one value per grid point); remove it")
    places = table.get("exact_decimals")
    if places is not None and (isinstance(places, bool) or not isinstance(places, int) or not 0 <= places <= 15):
        raise fail("answer.exact_decimals", f"{places!r} is not allowed; expected an integer from 0 to 15")
    at = _at(table.get("at", {}), game, grid, fail)
    return Answer(name, " ".join(question.split()), axis, at, label, modal, all_labels=every, exact_decimals=places)


def _label(table: dict, game: Game, h, labels: Mapping[str, tuple], fail) -> str | None:
    if "label" not in table:
        return None
    dims = game.variables[h.numerator].dims[1:]
    label = table["label"]
    if not dims:
        raise fail("answer.label", f"headline {h.name!r} has no labels (one value per grid point); remove it")
    known = tuple(str(x) for x in labels.get(dims[0], ()))
    if not isinstance(label, str) or label not in known:
        shown = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
        raise fail("answer.label", f"{label!r} is not a {dims[0]} of headline {h.name!r}; expected one of {shown}")
    return label


def _at(at: Any, game: Game, grid: Mapping[str, tuple], fail) -> dict[str, tuple]:
    if not isinstance(at, dict):
        raise fail("answer.at", f"{at!r} is not allowed; expected a table of grid axis = value (or [values])")
    out = {}
    for axis, given in at.items():
        key = f"answer.at.{axis}"
        if axis not in grid:
            raise fail(key, f"{axis!r} is not a grid axis; expected one of {', '.join(grid) or '(no axis)'}")
        values = given if isinstance(given, list) else [given]
        checked = []
        for value in values:
            try:
                value = game.param(axis).validate(value)
            except ParameterError:
                pass  # named below: not one of the grid's values
            if value not in grid[axis]:
                raise fail(key, f"{value!r} is not on the grid; expected one of "
                           + ", ".join(repr(v) for v in grid[axis]))
            checked.append(value)
        out[axis] = tuple(checked)
    return out


def recorded_table(spec_text: str) -> dict | None:
    """The ``[answer]`` table of a spec's text (None: none, or text that is not TOML).

    A text where no key can spell ``answer`` (the word nowhere, no escape) has
    none: it is not parsed (10 MB of TOML, a second, for a 500,000-value axis)."""
    if not isinstance(spec_text, str) or ("answer" not in spec_text and "\\" not in spec_text):
        return None
    table = _parsed_table(spec_text)
    return copy.deepcopy(table) if table is not None else None


@functools.lru_cache(maxsize=2)
def _parsed_table(spec_text: str) -> dict | None:
    """:func:`recorded_table` by parsing: once per text in a process."""
    try:
        table = tomllib.loads(spec_text).get("answer")
    except (tomllib.TOMLDecodeError, TypeError):
        return None
    return table if isinstance(table, dict) else None
