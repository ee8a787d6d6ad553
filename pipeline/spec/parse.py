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

Everything is validated before anything is written.  Every error is a
:class:`SpecError` whose message names the file, the key and what was expected.
"""

from __future__ import annotations

import hashlib
import functools
import itertools
import json
import math
import operator
import re
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ...core.games import Game, ParameterError, get_game
from ..errors import InputError

__all__ = ["SpecError", "Spec", "ResolvedGrid", "load_spec", "parse_spec", "apply_overrides", "resolve_grid"]

TOP_KEYS = {"name", "game", "seed", "store", "description", "params", "grid", "run", "checkpoints", "tasks",
            "precision", "storage_options"}
#: Keys of ``[storage_options]`` (at any depth) that hold credentials, refused: a spec's text is
#: stored in the store.  Any key naming a secret, password, token or credential is refused too.
SECRET_KEYS = {"key", "secret", "access_key", "secret_key", "aws_access_key_id", "aws_secret_access_key",
               "account_key", "sas_token", "session_token", "aws_session_token", "password", "token"}
SECRET_WORDS = ("secret", "password", "token", "credential")
PRECISION_KEYS = {"stderr", "max_replicates"}
CHECKPOINT_KEYS = {"count", "values"}
TASK_KEYS = {"replicates_per_task", "points_per_task", "seconds"}
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


#: Largest run-shape entry: counts are stored as 64-bit integers.
MAX_RUN = 2**62
#: Checkpoints of ``[checkpoints] count`` when the spec gives none, and the most a spec may ask for.
DEFAULT_CHECKPOINTS = 16
MAX_CHECKPOINTS = 100_000


class SpecError(InputError):
    """A sweep spec is invalid; the message names the file and the key."""


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
    block : int
        ``[tasks] replicates_per_task`` (1 with ``task_seconds``): what the
        spec asks; the run's layout is :func:`boardsweep.pipeline.plan.layout.decide`'s.
    task_seconds : float or None
        ``[tasks] seconds``: the time one task should take on a worker; the
        run picks its replicates and grid points per task from a short
        calibration and records them in the store.
    points_per_task : int
        ``[tasks] points_per_task``: at most this many grid points per task
        (default 1); see :attr:`task_grid`.
    auto_points : bool
        The spec gives neither ``[tasks] points_per_task`` nor ``seconds``: a
        run that creates the store of a large grid chooses the grid points per
        task itself (:func:`boardsweep.pipeline.plan.sizing.groups_points`) and
        records them in the store, not in the spec's identity.
    grid_chunks : tuple of int or None
        ``None`` in a parsed spec: the grid points per task along each axis
        come from ``points_per_task``; set only in a spec laid out for the
        planner and the store (:meth:`with_block`).
    store : str or None
        Store path or URL from the spec, if any.
    precision_stderr : float or None
        ``[precision] stderr``: the largest standard error allowed per grid
        point (:mod:`boardsweep.pipeline.plan.precision`); ``replicates`` is then
        the first round.
    max_replicates : int or None
        ``[precision] max_replicates``: the replicates a grid point may reach.
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
    grid_chunks: tuple[int, ...] | None = None
    precision_stderr: float | None = None
    max_replicates: int | None = None
    files: dict[str, str] = field(default_factory=dict)  # file a parameter names -> SHA-256 of its bytes
    storage_options: dict[str, Any] = field(default_factory=dict)  # fsspec options of the store's protocol

    @property
    def slots(self) -> int:
        """Length of the store's replicate dimension: ``max_replicates`` with
        a precision target, else ``replicates``."""
        return self.max_replicates if self.precision_stderr is not None else self.replicates

    @property
    def game(self) -> Game:
        return get_game(self.game_name)

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

    def canonical(self) -> dict[str, Any]:
        """What identifies the sweep's data (the store path and comments excluded)."""
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
            "tasks": ({"seconds": self.task_seconds} if self.task_seconds is not None
                      else {"replicates_per_task": self.block,
                            **({"points_per_task": self.points_per_task} if self.points_per_task != 1 else {})}),
            **({"files": dict(sorted(self.files.items()))} if self.files else {}),
        }

    def with_block(self, block: int, grid_chunks: tuple[int, ...] | None = None) -> "Spec":
        """This spec laid out with ``block`` replicates per task and, where
        given, ``grid_chunks`` grid points per task along each axis: the form
        the planner and the store read.  A run decides its layout once, as a
        :class:`boardsweep.pipeline.plan.layout.TaskLayout`, and lays the spec
        out with :meth:`TaskLayout.apply <boardsweep.pipeline.plan.layout.TaskLayout.apply>`."""
        changes: dict[str, Any] = {"block": max(1, min(int(block), self.replicates))}
        if grid_chunks is not None:
            changes["grid_chunks"] = tuple(int(g) for g in grid_chunks)
        return self.replaced(**changes)

    @property
    def task_grid(self) -> tuple[int, ...]:
        """Grid points per task along each axis (:func:`grid_chunks`)."""
        if self.grid_chunks is not None and len(self.grid_chunks) == len(self.grid):
            return self.grid_chunks
        return grid_chunks(self.shape, self.points_per_task)

    def replaced(self, **changes: Any) -> "Spec":
        """:func:`dataclasses.replace`, keeping the resolved grid points where
        the grid, the fixed parameters and the game stay the same."""
        new = replace(self, **changes)
        if "_resolved" in self.__dict__ and not {"grid", "fixed", "game_name"} & set(changes):
            new.__dict__["_resolved"] = self.__dict__["_resolved"]
        return new

    def canonical_json(self) -> str:
        return json.dumps(self.canonical(), sort_keys=True)

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

def grid_chunks(shape: tuple[int, ...], points: int) -> tuple[int, ...]:
    """Grid points per task along each axis for at most ``points`` per task.

    The last axis is filled first; an axis takes more than one value only
    where every later axis is whole: ``(3, 5)`` with 10 points gives
    ``(2, 5)``, with 4 points ``(1, 4)``.  The product never exceeds ``points``.
    """
    out = [1] * len(shape)
    left = max(1, int(points))
    for axis in reversed(range(len(shape))):
        out[axis] = max(1, min(shape[axis], left))
        left //= out[axis]
        if out[axis] < shape[axis] or left <= 1:
            break
    return tuple(out)


def toml_text(values: dict[str, Any], source: str = "<spec dict>") -> str:
    """TOML text of a spec dict: top-level keys first, then one ``[table]`` per
    dict value (values written as JSON, which is TOML for strings, numbers,
    booleans and lists of them)."""
    if not isinstance(values, dict):
        raise SpecError(f"{source}: expected a dict shaped like a spec file, got {type(values).__name__}")
    top = [f"{key} = {_toml_value(source, key, v)}" for key, v in values.items() if not isinstance(v, dict)]
    tables = []
    for table, content in values.items():
        if isinstance(content, dict):
            tables += ["", f"[{table}]", *(f"{k} = {_toml_value(source, f'{table}.{k}', v)}"
                                          for k, v in content.items())]
    return "\n".join(top + tables) + "\n"


def _toml_value(source: str, key: str, value: Any) -> str:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(source, key, v) for v in value) + "]"
    if isinstance(value, dict):  # an inline table, e.g. [storage_options] client_kwargs = {...}
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(source, f'{key}.{k}', v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, (bool, int, str)) or (isinstance(value, float) and np.isfinite(value)):
        return json.dumps(value)
    raise SpecError(f"{source}: {key}: expected a string, number, boolean or list of them, got {value!r}")


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
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from None
    source = f"{path} (--set {', --set '.join(overrides)})"
    apply_overrides(raw, overrides, source)
    header = f"# {path}, with " + " ".join(f"--set {item}" for item in overrides)
    return parse_spec(header.replace("\n", " ") + "\n" + toml_text(raw, source), source)


def apply_overrides(raw: dict[str, Any], overrides: tuple[str, ...] | list[str], source: str = "--set") -> dict:
    """Set each ``KEY=VALUE`` of ``overrides`` in the parsed spec ``raw``, in place.

    ``KEY`` is a dotted path (``run.replicates``, ``grid.dice_sides``,
    ``storage_options.client_kwargs.region_name``); missing tables are made.
    ``VALUE`` is read as a TOML value (``16``, ``1e-4``, ``true``,
    ``"text"``, ``[4, 6]``); otherwise a comma-separated list of them
    (``4,6``), otherwise plain text (``per_roll``).  A grid axis is always a
    list (``grid.dice_sides=4`` is ``[4]``).  Keys and values are validated
    afterwards, like the file's.

    Examples
    --------
    >>> apply_overrides({"run": {"replicates": 8}}, ["run.replicates=2", "grid.dice_sides=4,6"])
    {'run': {'replicates': 2}, 'grid': {'dice_sides': [4, 6]}}
    >>> apply_overrides({}, ["params.tally=per_landing"])
    {'params': {'tally': 'per_landing'}}
    """
    for item in overrides:
        key, sep, text = item.partition("=")
        path = [part.strip() for part in key.split(".")]
        if not sep or not all(path):
            raise SpecError(f"{source}: --set {item!r}: expected KEY=VALUE, KEY a dotted spec key "
                            "such as run.replicates or grid.dice_sides")
        table = raw
        for depth, part in enumerate(path[:-1]):
            table = table.setdefault(part, {})
            if not isinstance(table, dict):
                raise SpecError(f"{source}: {'.'.join(path[:depth + 1])}: is not a table, so --set {key} "
                                "cannot set a key inside it")
        value = _override_value(text.strip())
        if path[0] == "grid" and len(path) == 2 and not isinstance(value, list):
            value = [value]
        table[path[-1]] = value
    return raw


def _override_value(text: str) -> Any:
    """A ``--set`` value: TOML, else a comma-separated list of TOML values or words, else text."""
    def toml(item: str) -> Any:
        return tomllib.loads(f"v = {item}")["v"]

    try:
        return toml(text)
    except tomllib.TOMLDecodeError:
        pass
    if "," not in text:
        return text
    items = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        try:
            items.append(toml(part))
        except tomllib.TOMLDecodeError:
            items.append(part)
    return items


def parse_spec(text: str, source: str = "<spec>") -> Spec:
    """Validate spec ``text``; ``source`` names the file in error messages."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{source}: not valid TOML: {exc}") from None
    return _Parser(source, raw, text).parse()


class _Parser:
    def __init__(self, source: str, raw: dict, text: str) -> None:
        self.source, self.raw, self.text = source, raw, text

    def error(self, key: str, message: str) -> SpecError:
        return SpecError(f"{self.source}: {key}: {message}")

    def table(self, key: str, allowed: set[str] | None = None) -> dict:
        value = self.raw.get(key, {})
        if not isinstance(value, dict):
            raise self.error(key, f"expected a table [{key}], got {value!r}")
        if allowed is not None:
            self.no_unknown(value, allowed, key + ".")
        return value

    def no_unknown(self, table: dict, allowed: set[str], prefix: str = "") -> None:
        for key in table:
            if key not in allowed:
                known = ", ".join(sorted(allowed))
                raise self.error(prefix + key, f"unknown key; expected one of {known}")

    def integer(self, key: str, value: Any, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(key, f"{value!r} is not allowed; expected an integer >= {minimum}")
        return value

    def string(self, key: str, required: bool) -> str | None:
        if key not in self.raw:
            if required:
                raise self.error(key, "missing; expected a string")
            return None
        value = self.raw[key]
        if not isinstance(value, str) or not value:
            raise self.error(key, f"{value!r} is not allowed; expected a non-empty string")
        return value

    def parse(self) -> Spec:
        self.no_unknown(self.raw, TOP_KEYS)
        name = self.string("name", True)
        if not NAME_RE.match(name):
            raise self.error("name", f"{name!r} is not allowed; expected letters, digits, '_', '-', '.'")
        game = self.parse_game()
        if "seed" not in self.raw:
            raise self.error("seed", "missing; expected an integer >= 0")
        seed = self.integer("seed", self.raw["seed"], 0)
        fixed = self.parse_fixed(game)
        grid = self.parse_grid(game, fixed)
        replicates, run_shape = self.parse_run(game)
        checkpoints = self.parse_checkpoints(game, run_shape)
        block, points, seconds = self.parse_tasks(replicates)
        auto = not {"points_per_task", "seconds"} & set(self.table("tasks"))
        stderr, most = self.parse_precision(replicates, game)
        spec = Spec(
            source=self.source, text=self.text, name=name, game_name=game.name, seed=seed,
            fixed=fixed, grid=grid, run_shape=run_shape, replicates=replicates,
            checkpoints=checkpoints, block=block, store=self.string("store", False),
            description=self.string("description", False) or "", task_seconds=seconds,
            points_per_task=points, auto_points=auto,
            precision_stderr=stderr, max_replicates=most, storage_options=self.parse_storage_options(),
        )
        self.check_points(spec, game)
        return spec.replaced(files=self.named_files(spec, game))

    def parse_storage_options(self) -> dict[str, Any]:
        """``[storage_options]``: options fsspec gives the store's file system
        (``endpoint_url``, ``client_kwargs``, ...); credentials refused."""
        options = self.table("storage_options")
        self.no_secrets(options, "storage_options.")
        return options

    def no_secrets(self, table: dict, prefix: str) -> None:
        for key, value in table.items():
            name = str(key).lower()
            if name in SECRET_KEYS or any(word in name for word in SECRET_WORDS):
                raise self.error(prefix + str(key), "credentials are never written in a spec (its text is stored "
                                 "in the store); give them in the environment (AWS_ACCESS_KEY_ID, "
                                 "AWS_SECRET_ACCESS_KEY), in ~/.aws/credentials or in fsspec's configuration")
            if isinstance(value, dict):
                self.no_secrets(value, f"{prefix}{key}.")

    def named_files(self, spec: Spec, game: Game) -> dict[str, str]:
        """``sha256:<hex>`` of every file a parameter value names (see :class:`Spec`)."""
        free = [p.name for p in game.params if p.choices is None]
        values = {v for name in free for v in spec._resolved.values(name) if isinstance(v, str)}
        files = {}
        for value in sorted(values):
            path = Path(value).expanduser()
            try:
                if path.is_file():
                    files[value] = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError as exc:
                raise self.error("params", f"{value!r} names a file that cannot be read ({exc.strerror})") from None
        return files

    def parse_game(self) -> Game:
        name = self.string("game", True)
        try:
            return get_game(name)
        except ParameterError as exc:
            raise self.error("game", str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - a plugin that fails at import: its own error, in one line
            text = " ".join(str(exc).split())
            raise self.error("game", f"game {name!r} cannot be loaded ({type(exc).__name__}: {text})") from None

    def param_value(self, game: Game, key: str, name: str, value: Any) -> Any:
        try:
            return game.param(name).validate(value)
        except ParameterError as exc:
            raise self.error(key, re.sub(r"^parameter '[^']*': ", "", str(exc))) from None

    def parse_fixed(self, game: Game) -> dict[str, Any]:
        table = self.table("params")
        self.no_unknown(table, {p.name for p in game.params}, "params.")
        return {k: self.param_value(game, f"params.{k}", k, v) for k, v in table.items()}

    def parse_grid(self, game: Game, fixed: dict) -> dict[str, tuple]:
        table = self.table("grid")
        self.no_unknown(table, {p.name for p in game.params}, "grid.")
        grid = {}
        for axis, values in table.items():
            key = f"grid.{axis}"
            if axis in fixed:
                raise self.error(key, "also set in [params]; a parameter is either fixed or an axis")
            if not isinstance(values, list) or not values:
                raise self.error(key, f"{values!r} is not allowed; expected a non-empty list of values")
            checked = tuple(
                self.param_value(game, f"{key}[{i}]", axis, v) for i, v in enumerate(values)
            )
            if len(set(checked)) != len(checked):
                raise self.error(key, f"{values!r} has repeated values; expected distinct values")
            grid[axis] = checked
        return grid

    def parse_run(self, game: Game) -> tuple[int, dict[str, int]]:
        table = self.table("run")
        self.no_unknown(table, {"replicates", *game.run_shape}, "run.")
        if "replicates" not in table:
            raise self.error("run.replicates", "missing; expected an integer >= 1")
        replicates = self.integer("run.replicates", table["replicates"], 1)
        given = {k: v for k, v in table.items() if k != "replicates"}
        for key, value in given.items():
            if isinstance(value, int) and value > MAX_RUN:
                raise self.error(f"run.{key}", f"{value!r} is not allowed; expected an integer <= 2**62 "
                                 "(counts are stored as 64-bit integers)")
            try:
                game.resolve_run_shape({key: value})
            except ParameterError as exc:
                raise self.error(f"run.{key}", re.sub(r"^run shape '[^']*': ", "", str(exc))) from None
        return replicates, game.resolve_run_shape(given)

    def parse_checkpoints(self, game: Game, run_shape: dict[str, int]) -> np.ndarray:
        table = self.table("checkpoints", CHECKPOINT_KEYS)
        total = run_shape[game.checkpoint_of]
        if "count" in table and "values" in table:
            raise self.error("checkpoints", "give either count or values, not both")
        if "values" in table:
            return self.explicit_checkpoints(table["values"], total, game.checkpoint_of)
        count = self.integer("checkpoints.count", table.get("count", DEFAULT_CHECKPOINTS), 1)
        if count > max(total, DEFAULT_CHECKPOINTS):  # checked before the checkpoints are computed: 10**9 of them is 7 GB
            raise self.error("checkpoints.count", f"{count} is more than run.{game.checkpoint_of} = {total}; "
                             f"expected at most one checkpoint per step, 1 to {min(total, MAX_CHECKPOINTS)}")
        if count > MAX_CHECKPOINTS:
            raise self.error("checkpoints.count", f"{count} is not allowed; expected at most {MAX_CHECKPOINTS} "
                             "(every checkpoint is stored for every replicate)")
        return game.default_checkpoints(run_shape, count)

    def explicit_checkpoints(self, values: Any, total: int, of: str) -> np.ndarray:
        key = "checkpoints.values"
        if not isinstance(values, list) or not values:
            raise self.error(key, f"{values!r} is not allowed; expected a non-empty list of integers")
        for i, v in enumerate(values):
            self.integer(f"{key}[{i}]", v, 1)
        if any(b <= a for a, b in zip(values, values[1:])):
            raise self.error(key, f"{values!r} is not strictly increasing")
        if values[-1] != total:
            raise self.error(key, f"last value {values[-1]} must equal run.{of} = {total}")
        return np.asarray(values, dtype=np.int64)

    def parse_tasks(self, replicates: int) -> tuple[int, int, float | None]:
        """(replicates per task, grid points per task, seconds per task or None)."""
        table = self.table("tasks", TASK_KEYS)
        if "seconds" in table:
            for key in ("replicates_per_task", "points_per_task"):
                if key in table:
                    raise self.error("tasks.seconds", f"given with tasks.{key}; expected one of the two")
            seconds = table["seconds"]
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds < 86400:
                raise self.error("tasks.seconds", f"{seconds!r} is not allowed; expected a number of "
                                 "seconds above 0 and below 86400")
            return 1, 1, float(seconds)
        block = self.integer("tasks.replicates_per_task", table.get("replicates_per_task", 1), 1)
        points = self.integer("tasks.points_per_task", table.get("points_per_task", 1), 1)
        if block > replicates:
            raise self.error(
                "tasks.replicates_per_task", f"{block} is more than run.replicates = {replicates}"
            )
        return block, points, None

    def parse_precision(self, replicates: int, game: Game) -> tuple[float | None, int | None]:
        """(stderr target, max_replicates), or (None, None) without ``[precision]``."""
        if "precision" not in self.raw:
            return None, None
        table = self.table("precision", PRECISION_KEYS)
        from ...core.games import interval_headlines

        if not interval_headlines(game):
            raise self.error("precision", f"game {game.name!r} has no estimate a standard error can be "
                             "computed for (no ratio and no distribution output); remove [precision]")
        for key in sorted(PRECISION_KEYS - set(table)):
            raise self.error(f"precision.{key}", "missing; expected " + (
                "a number above 0" if key == "stderr" else "an integer >= run.replicates"))
        stderr = table["stderr"]
        if isinstance(stderr, bool) or not isinstance(stderr, (int, float)) or not 0 < stderr < float("inf"):
            raise self.error("precision.stderr", f"{stderr!r} is not allowed; expected a number above 0")
        if replicates < 2:
            raise self.error("run.replicates", f"{replicates} is not allowed with [precision]; expected an "
                             "integer >= 2 (a standard error needs two replicates)")
        most = self.integer("precision.max_replicates", table["max_replicates"], replicates)
        return float(stderr), most

    def check_points(self, spec: Spec, game: Game) -> None:
        """Cross-parameter checks and shared coordinate labels at every grid point.

        Each distinct value is validated once, ``check_params`` runs once per
        distinct combination of what it reads (``Game.checked_params``) and
        the labels are made once per combination of ``Game.coords_params``
        (:func:`resolve_grid`): what checking each point finds, without a
        dict per point.  Where anything fails, the points are checked one by
        one, so that the error names the first that fails."""
        try:
            resolved = resolve_grid(game, spec.fixed, spec.grid)
            labels = None
            for params in resolved.combinations(game.coords_params if game.coords_fn is not None else ()):
                coords = game.coords_for(params)
                if labels is None:
                    labels = coords
                elif coords != labels:
                    raise ParameterError("grid points have different coordinate labels")
        except ParameterError as exc:
            self.check_each_point(spec, game)  # raises, naming the first point that fails
            raise self.error("grid", str(exc)) from None  # only where the game's checks depend on more than they say
        spec.__dict__["_resolved"] = resolved  # Spec.points: the grid is resolved once, here

    def check_each_point(self, spec: Spec, game: Game) -> None:
        """:meth:`check_points` one grid point at a time, in grid order: the
        first point that fails is named in the error."""
        labels = None
        for index in itertools.product(*(range(n) for n in spec.shape)):
            point = {a: spec.grid[a][i] for a, i in zip(spec.axes, index)}
            where = ", ".join(f"{a}={v!r}" for a, v in point.items())
            try:
                params = game.resolve_params({**spec.fixed, **point})
                coords = game.coords_for(params)
            except ParameterError as exc:
                key = "grid" if point else "params"
                raise self.error(key, f"at {where or 'the fixed parameters'}: {exc}") from None
            if labels is None:
                labels = coords
            elif coords != labels:
                raise self.error(
                    "grid", f"the point {where} has different {game.name} coordinate labels; "
                    "every grid point must share the same labels"
                )


class ResolvedGrid(Sequence):
    """Every grid point of a spec as (index tuple, full parameter dict), in
    grid order (the last axis fastest), each dict made when asked for.

    What a game's :meth:`~boardsweep.core.games.Game.resolve_params` gives
    each point, held as each parameter's validated values: a fixed or
    default value once, an axis's values once each.  Build it with
    :func:`resolve_grid`."""

    def __init__(self, base: dict[str, Any], values: dict[str, tuple]) -> None:
        self.base = base  # every parameter in the game's order; an axis at its first value
        self.axes = tuple(values)
        self.axis_values = values
        self.shape = tuple(len(v) for v in values.values())
        self._size = math.prod(self.shape)
        self._shared: list | None = None  # the points :meth:`shared` has made

    def __len__(self) -> int:
        return self._size

    def _point(self, index: tuple[int, ...]) -> tuple[tuple[int, ...], dict[str, Any]]:
        params = dict(self.base)
        params.update(zip(self.axes, (self.axis_values[a][i] for a, i in zip(self.axes, index))))
        return index, params

    def __getitem__(self, item):
        if isinstance(item, slice):
            return [self[i] for i in range(*item.indices(self._size))]
        i = operator.index(item)
        if i < 0:
            i += self._size
        if not 0 <= i < self._size:
            raise IndexError(f"grid point {item} of {self._size}")
        index = []
        for n in reversed(self.shape):
            i, k = divmod(i, n)
            index.append(k)
        return self._point(tuple(reversed(index)))

    def __iter__(self) -> Iterator[tuple[tuple[int, ...], dict[str, Any]]]:
        base, axes = self.base, self.axes
        for index, combo in zip(itertools.product(*(range(n) for n in self.shape)),
                                itertools.product(*self.axis_values.values())):
            params = dict(base)
            params.update(zip(axes, combo))
            yield index, params

    def shared(self, i: int) -> tuple[tuple[int, ...], dict[str, Any]]:
        """Grid point ``i`` (flat, in grid order) as ``self[i]`` gives it, but
        made once and then shared: the planner's tasks hold it, and a run
        plans its tasks twice (a head start and the run).  The caller must not
        change the dict."""
        if self._shared is None:
            self._shared = [None] * self._size
        point = self._shared[i]
        if point is None:
            point = self._shared[i] = self[i]
        return point

    def values(self, name: str) -> tuple:
        """The values parameter ``name`` takes on the grid (an axis's, in order; else its one value)."""
        return self.axis_values[name] if name in self.axis_values else (self.base[name],)

    def combinations(self, names: tuple[str, ...] | None) -> Iterator[dict[str, Any]]:
        """One full parameter dict per combination of the grid's values of the
        parameters ``names`` (``None``: all of them, i.e. every grid point),
        the other axes at their first value: what a function reading only
        ``names`` sees on the whole grid."""
        varying = [a for a in self.axes if names is None or a in names]
        for combo in itertools.product(*(self.axis_values[a] for a in varying)):
            params = dict(self.base)
            params.update(zip(varying, combo))
            yield params


def resolve_grid(game: Game, fixed: dict[str, Any], grid: dict[str, tuple]) -> ResolvedGrid:
    """Every grid point's parameters as ``game.resolve_params`` resolves them
    (defaults filled, every value validated, ``check_params`` passed), as a
    :class:`ResolvedGrid`.

    Each distinct value is validated once and ``check_params`` runs once per
    distinct combination of the parameters it reads (``Game.checked_params``):
    linear in the axes' lengths, not in the grid's size, where a game says
    what its check reads.

    Raises
    ------
    ParameterError
        A value or a combination is not allowed (the first point with it is
        not named: :meth:`_Parser.check_each_point` names it).
    """
    given = {**fixed, **grid}
    for name in given:
        game.param(name)  # an unknown parameter: named as resolve_params names it
    values = {a: tuple(game.param(a).validate(v) for v in grid[a]) for a in grid}
    base = {p.name: values[p.name][0] if p.name in values else p.validate(fixed.get(p.name, p.default))
            for p in game.params}
    resolved = ResolvedGrid(base, values)
    if game.check_params is not None:
        for params in resolved.combinations(game.checked_params):
            game.check_params(params)
    return resolved
