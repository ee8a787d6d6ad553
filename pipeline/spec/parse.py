"""Sweep specifications: parse and validate ``sweeps/*.toml``.

A spec is a small TOML file::

    name = "quickstart"            # the sweep's name (default store: results/<name>.zarr)
    game = "monopoly"              # a registered game
    seed = 20240601                # root seed, an integer >= 0
    store = "results/x.zarr"       # optional: directory or fsspec URL
    description = "..."            # optional

    [params]                       # fixed game parameters (defaults fill the rest)
    tally = "per_roll"

    [grid]                         # one axis per swept parameter, each a list
    dice_sides = [4, 6]

    [run]                          # replicates per grid point + the game's run shape
    replicates = 8
    turns = 100000

    [checkpoints]                  # either a log-spaced count (default 16) ...
    count = 16
    batches = 64                   # equal batches of each headline's series (default 64; 0: none)
    # values = [10, 100, 1000]     # ... or explicit values ending at the run length

    [tasks]
    replicates_per_task = 2        # replicates per task block (default 1) ...
    points_per_task = 100          # ... and grid points per task (the last axis first; default 1, or chosen
                                   # by the run for a grid of 5,000 points or more) ...
    # seconds = 10                 # ... or a time per task: both calibrated on a worker

    [precision]                    # optional: replicates until the standard error is small
    stderr = 1e-4                  # largest standard error allowed (run.replicates: first round)
    max_replicates = 64            # ... or this many replicates per grid point

    [storage_options]              # optional: fsspec options of the store's protocol (run)
    endpoint_url = "https://s3.example.org"   # never credentials: refused

    [answer]                       # optional: the question the sweep asks (:mod:`.answer`)
    headline = "frequency"         # the headline that answers it, its label,
    label = "IN_JAIL"              # the grid axis it is studied against
    axis = "dice_sides"            # and the points asked: shown first by
    at = {deck_policy = "independent"}   # run, query --summary and the report

Everything is validated before anything is written.  Every error is a
:class:`~boardsweep.pipeline.errors.SpecError` whose message names the file, the key and what was expected.

The spec file's tables are checked by :mod:`boardsweep.pipeline.spec.tables`,
its grid resolved by :mod:`boardsweep.pipeline.spec.grid`, ``--set`` applied by
:mod:`boardsweep.pipeline.spec.overrides`.  :class:`Spec` and the functions
that make one from text share this module: its constructors call them.

TOML with long one-line arrays is read whole (:func:`loads`): a spec's 500,000-value axis.

``tomllib`` reads an array value by value in Python (a second for the
500,000 values of a 10^7-point grid).  A one-line array of plain numbers,
booleans and double-quoted strings without escapes is written the same in
TOML and JSON, so :func:`loads` reads each such long line with ``json`` (in
C) and the rest of the text with ``tomllib``: the same values.  Anything
else, or any doubt, is left to ``tomllib`` alone: an array it would refuse,
a line inside a multi-line string, an error (its message and position are
``tomllib``'s own, from the whole text).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
import re
import tomllib
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ...core.batches import with_series
from ...core.games import Game, get_game
from ..errors import SpecError
from .answer import Answer
from .grid import ResolvedGrid, resolve_grid
from .overrides import apply_overrides
from .tables import Tables
from .toml_text import toml_text

__all__ = ["Spec", "ResolvedGrid", "load_spec", "parse_spec", "apply_overrides", "resolve_grid", "loads", "LONG_LINE"]


@dataclass(frozen=True)
class Spec:
    """A validated sweep spec.

    Attributes
    ----------
    files : dict
        Every file a parameter value names (a string value, of a parameter
        without fixed choices, that is the path of a file, e.g. a board
        file) -> ``sha256:`` of its bytes: part of the sweep's identity, so a
        store is not resumed after such a file changed.
    source : str
        The file the spec came from (as given).
    text : str
        The spec's text, recorded verbatim in the store.
    name, game_name : str
        Sweep name and registered game name.
    seed : int
        Root seed.
    fixed : dict
        Fixed parameters as given in ``[params]``.
    grid : dict
        Axis name -> tuple of values, in spec order.
    run_shape : dict
        The game's full run shape (defaults filled).
    replicates : int
        Replicates per grid point.
    checkpoints : numpy.ndarray
        Strictly increasing int64 checkpoint values.
    series_batches : int
        ``[checkpoints] batches``: equal batches per replicate of each
        headline's series (default 64; 0: none), for the diagnostics.
    block : int
        ``[tasks] replicates_per_task`` (1 with ``task_seconds``): what the
        spec asks; the run's layout is :func:`boardsweep.pipeline.plan.sizing.decide`'s.
    task_seconds : float or None
        ``[tasks] seconds``: the time one task should take on a worker; the
        run picks its replicates and grid points per task from a short
        calibration and records them in the store.
    points_per_task : int
        ``[tasks] points_per_task``: at most this many grid points per task
        (default 1).  What the spec asks; the run's layout, decided once
        (:func:`boardsweep.pipeline.plan.sizing.decide`), travels beside the
        spec as a :class:`~boardsweep.pipeline.plan.task_layout.TaskLayout`:
        nothing writes into a spec after parsing.
    auto_points : bool
        The spec gives neither ``[tasks] points_per_task`` nor ``seconds``: a
        run that creates the store of a large grid chooses the grid points per
        task itself (:func:`boardsweep.pipeline.plan.sizing.groups_points`) and
        records them in the store, not in the spec's identity.
    auto_block : bool
        The spec gives neither ``[tasks] replicates_per_task`` nor ``seconds``:
        a run that creates its store on a known number of workers may group
        replicates into tasks (:func:`boardsweep.pipeline.plan.sizing.groups_replicates`);
        its identity says 1 replicate per task whatever the run chose.
    store : str or None
        Store path or URL from the spec, if any.
    precision_stderr : float or None
        ``[precision] stderr``: the largest standard error allowed per grid
        point (:mod:`boardsweep.pipeline.plan.precision`); ``replicates`` is then
        the first round.
    max_replicates : int or None
        ``[precision] max_replicates``: the replicates a grid point may reach.
    answer : Answer or None
        ``[answer]``: the question the sweep asks, the headline, label, axis
        and grid points that answer it (:mod:`boardsweep.pipeline.spec.answer`);
        presentation only, not part of :attr:`canonical_data`.
    """

    source: str
    text: str
    name: str
    game_name: str
    seed: int
    fixed: dict[str, Any]
    grid: dict[str, tuple]
    run_shape: dict[str, int]
    replicates: int
    checkpoints: np.ndarray
    block: int
    store: str | None
    description: str = ""
    task_seconds: float | None = None
    points_per_task: int = 1
    auto_points: bool = False
    auto_block: bool = False
    precision_stderr: float | None = None
    max_replicates: int | None = None
    files: dict[str, str] = field(default_factory=dict)  # file a parameter names -> SHA-256 of its bytes
    storage_options: dict[str, Any] = field(default_factory=dict)  # fsspec options of the store's protocol
    answer: Answer | None = None  # [answer]: the question the sweep asks (not part of its identity)
    series_batches: int = 0  # [checkpoints] batches: equal batches of each headline's series per replicate

    @property
    def slots(self) -> int:
        """Length of the store's replicate dimension: ``max_replicates`` with
        a precision target, else ``replicates``."""
        return self.max_replicates if self.precision_stderr is not None else self.replicates

    @functools.cached_property
    def game(self) -> Game:
        """The registered game :attr:`game_name` (:func:`get_game`), looked up
        once per spec: each lookup reads every installed distribution's entry
        points.  Not pickled with the spec (:meth:`__getstate__`): a process
        that unpickles it looks the game up where it runs."""
        return get_game(self.game_name)

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "game"}

    @property
    def sha256(self) -> str:
        """SHA-256 of the spec text."""
        return hashlib.sha256(self.text.encode()).hexdigest()

    @property
    def axes(self) -> tuple[str, ...]:
        return tuple(self.grid)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(v) for v in self.grid.values())

    def points(self) -> list[tuple[tuple[int, ...], dict[str, Any]]]:
        """Every grid point as (index tuple, full validated parameter dict).

        The grid is resolved once per spec (:attr:`_resolved`); each call
        returns fresh dicts, so a caller may change them."""
        return list(self._resolved)

    def resolved_points(self) -> "ResolvedGrid":
        """Every grid point as :meth:`points` gives them, made when asked
        for: a sequence of (index tuple, parameter dict), each dict new."""
        return self._resolved

    @functools.cached_property
    def _resolved(self) -> "ResolvedGrid":
        """Every grid point's parameters as the game resolves them (validated once)."""
        return resolve_grid(self.game, self.fixed, self.grid)

    @functools.cached_property
    def canonical_data(self) -> dict[str, Any]:
        """What identifies the sweep's data (the store path and comments
        excluded), made once per spec: the one parsed form of
        :meth:`canonical_json`.  Read it, never change it (:meth:`canonical`
        gives a copy to change)."""
        precision = ({"precision": {"stderr": self.precision_stderr, "max_replicates": self.max_replicates}}
                     if self.precision_stderr is not None else {})
        return {**precision,
            "name": self.name,
            "game": self.game_name,
            "seed": self.seed,
            "params": {k: v for k, v in sorted(self._resolved[0][1].items()) if k not in self.grid},  # one point made
            "grid": {k: list(v) for k, v in self.grid.items()},
            "run": {"replicates": self.replicates, **dict(sorted(self.run_shape.items()))},
            "checkpoints": [int(c) for c in self.checkpoints],
            **({"series": {"batches": self.series_batches}} if self.series_batches else {}),
            "tasks": ({"seconds": self.task_seconds} if self.task_seconds is not None
                      else {"replicates_per_task": self.block,
                            **({"points_per_task": self.points_per_task} if self.points_per_task != 1 else {})}),
            **({"files": dict(sorted(self.files.items()))} if self.files else {}),
        }

    @property
    def simulated_checkpoints(self) -> np.ndarray:
        """The checkpoints every replicate is simulated at: :attr:`checkpoints`
        and the ends of :attr:`series_batches` equal batches
        (:func:`boardsweep.core.batches.with_series`)."""
        if not self.series_batches:
            return self.checkpoints
        return with_series(self.checkpoints, self.series_batches)[0]

    def canonical(self) -> dict[str, Any]:
        """A copy of :attr:`canonical_data`, the caller's to change."""
        return copy.deepcopy(self.canonical_data)

    def replaced(self, **changes: Any) -> "Spec":
        """:func:`dataclasses.replace`, keeping the resolved grid points where
        the grid, the fixed parameters and the game stay the same."""
        new = replace(self, **changes)
        if "_resolved" in self.__dict__ and not {"grid", "fixed", "game_name"} & set(changes):
            new.__dict__["_resolved"] = self.__dict__["_resolved"]
        if "game" in self.__dict__ and "game_name" not in changes:
            new.__dict__["game"] = self.__dict__["game"]
        return new

    def canonical_json(self) -> str:
        """:attr:`canonical_data` as JSON (keys sorted): the store's ``spec_canonical``."""
        return self._canonical_json

    @functools.cached_property
    def _canonical_json(self) -> str:
        return json.dumps(self.canonical_data, sort_keys=True)

    def default_store(self) -> str:
        return self.store or f"results/{self.name}.zarr"

    @classmethod
    def from_file(cls, path: str | Path) -> "Spec":
        """The spec in the TOML file ``path`` (:class:`SpecError` naming the file and key)."""
        return load_spec(path)

    @classmethod
    def from_toml(cls, text: str, source: str = "<spec text>") -> "Spec":
        """The spec written as TOML ``text``."""
        return parse_spec(text, source)

    @classmethod
    def from_dict(cls, values: dict[str, Any], source: str = "<spec dict>") -> "Spec":
        """The spec as a dict, shaped like the TOML file: ``{"name": ..., "game":
        ..., "seed": ..., "grid": {...}, "run": {...}}``.  It is written out as
        TOML text, which the store records like a file's."""
        return parse_spec(toml_text(values, source), source)

def load_spec(path: str | Path, overrides: tuple[str, ...] | list[str] = ()) -> Spec:
    """Read and validate the spec file ``path`` (SpecError on any problem).

    ``overrides`` are ``KEY=VALUE`` strings (``run.replicates=16``,
    ``grid.dice_sides=4,6``), applied to the parsed file before it is
    validated (:func:`apply_overrides`).  The spec's text is then the
    effective spec, written out as TOML under a comment naming the file and
    the overrides, and its source names them too (``sweeps/x.toml (--set
    run.replicates=16)``), so errors, the store's ``spec`` attribute and its
    history say where every value came from.
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise SpecError(f"{path}: cannot read the spec: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: not UTF-8 text (byte {exc.start}); expected a TOML file in UTF-8") from None
    if not overrides:
        return parse_spec(text, str(path))
    try:
        raw = loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from None
    source = f"{path} (--set {', --set '.join(overrides)})"
    apply_overrides(raw, overrides, source)
    header = f"# {path}, with " + " ".join(f"--set {item}" for item in overrides)
    return parse_spec(header.replace("\n", " ") + "\n" + toml_text(raw, source), source)


def parse_spec(text: str, source: str = "<spec>") -> Spec:
    """Validate spec ``text``; ``source`` names the file in error messages."""
    try:
        raw = loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{source}: not valid TOML: {exc}") from None
    fields, resolved = Tables(source, raw, text).fields()
    spec = Spec(**fields)
    spec.__dict__["_resolved"] = resolved  # Spec.points: the grid is resolved once, while it is checked
    return spec


#: Lines at least this long holding ``key = [...]`` are read with ``json``.
LONG_LINE = 4096
_KEY = re.compile(r'[ \t]*[A-Za-z0-9_.\- \t"]+?=[ \t]*(?=\[)')
_DECODER = json.JSONDecoder(parse_constant=lambda name: None)  # NaN, Infinity: not TOML, refused by _plain


def loads(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)``, its long one-line arrays read whole (:data:`LONG_LINE`)."""
    if len(text) < LONG_LINE:
        return tomllib.loads(text)
    marker = f"boardsweep-array-{uuid.uuid4().hex}"
    lines, arrays = text.split("\n"), {}
    for i, line in enumerate(lines):
        if len(line) >= LONG_LINE:
            found = _array(line)
            if found is not None:
                start, end, values = found
                arrays[f"{marker}-{len(arrays)}"] = values
                lines[i] = f'{line[:start]}["{marker}-{len(arrays) - 1}"]{line[end:]}'
    if not arrays or marker in text:
        return tomllib.loads(text)
    try:
        parsed = tomllib.loads("\n".join(lines))
    except tomllib.TOMLDecodeError:
        return tomllib.loads(text)  # the error as tomllib words it on the text as written
    if _put_back(parsed, arrays) != len(arrays):  # one was not a value (inside a string): tomllib alone
        return tomllib.loads(text)
    return parsed


def _array(line: str) -> tuple[int, int, list] | None:
    """(start, end, values) of the one-line array of ``key = [...]  # comment``
    where JSON reads it as TOML does, else None."""
    key = _KEY.match(line)
    if key is None:
        return None
    start = key.end()
    if "\\" in line or "\x7f" in line:  # an escape, a character TOML refuses: tomllib decides
        return None
    try:
        values, end = _DECODER.raw_decode(line, start)
    except ValueError:
        return None
    tail = line[end:].strip()
    if tail and not tail.startswith("#") or not isinstance(values, list) or not _plain(values):
        return None
    return start, end, values


def _plain(values: list) -> bool:
    """Values JSON and TOML write alike: strings, integers, finite floats, booleans."""
    types = set(map(type, values))  # in C: no Python call per value
    if not types <= {str, int, bool, float}:
        return False
    return float not in types or all(math.isfinite(v) for v in values if type(v) is float)


def _put_back(value: Any, arrays: dict[str, list]) -> int:
    """Replace each one-marker list in ``value`` (parsed TOML) by its array; how many were replaced."""
    count = 0
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(item, list) and len(item) == 1 and isinstance(item[0], str) and item[0] in arrays:
            value[key] = arrays[item[0]]
            count += 1
        else:
            count += _put_back(item, arrays)
    return count
