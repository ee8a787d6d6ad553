"""The checks of each table of a spec file, done before anything is written.

:class:`Tables` reads the parsed TOML of a spec (``tomllib``'s dict) table by
table and gives the fields of a :class:`~boardsweep.pipeline.spec.parse.Spec`.
Every error is a :class:`~boardsweep.pipeline.errors.SpecError` whose message
names the file, the key and what was expected (``sweeps/x.toml: run.replicates:
0 is not allowed; expected an integer >= 1``).

Which of a spec's text values may name a file is found with one listing
(:func:`maybe_files`).  A string value of a parameter without fixed choices
names a file when a file is there (``Spec.files``, e.g. a board file).  A
grid axis of 10^6 text values (``reserve:0``, ``reserve:10``, ...) would cost
10^6 ``stat`` calls; most such values are plain names in the working folder,
so that folder is listed once and only the values found in it (compared as
the file system may compare them: case and Unicode normalisation aside) are
looked at.  Every other value (one with a folder, ``~``, a name too long for
one entry) is kept, to be looked at one by one as before.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import sys
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ...core.games import SERIES_DIM, SERIES_PREFIX, Game, ParameterError, get_game, series_sources
from ..errors import SpecError
from .answer import Answer, check_answer, default_answer
from .grid import ResolvedGrid, resolve_grid

__all__ = ["Tables", "check_storable", "store_names", "STORE_NAMES", "TOP_KEYS", "PRECISION_KEYS", "CHECKPOINT_KEYS", "TASK_KEYS",
           "maybe_files", "NAME_MAX"]

TOP_KEYS = {"name", "game", "seed", "store", "description", "params", "grid", "run", "checkpoints", "tasks",
            "precision", "storage_options", "answer"}
#: Keys of ``[storage_options]`` (at any depth) that hold credentials, refused: a spec's text is
#: stored in the store.  Any key naming a secret, password, token or credential is refused too.
SECRET_KEYS = {"key", "secret", "access_key", "secret_key", "aws_access_key_id", "aws_secret_access_key",
               "account_key", "sas_token", "session_token", "aws_session_token", "password", "token"}
SECRET_WORDS = ("secret", "password", "token", "credential")
PRECISION_KEYS = {"stderr", "max_replicates"}
CHECKPOINT_KEYS = {"count", "values", "batches"}
TASK_KEYS = {"replicates_per_task", "points_per_task", "seconds"}
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


#: Largest run-shape entry: counts are stored as 64-bit integers.
MAX_RUN = 2**62
#: Checkpoints of ``[checkpoints] count`` when the spec gives none, and the most a spec may ask for.
DEFAULT_CHECKPOINTS = 16
MAX_CHECKPOINTS = 100_000
#: Equal batches of each headline's series a replicate stores when the spec
#: gives no ``[checkpoints] batches`` (fewer where the run is shorter), and the most allowed.
DEFAULT_BATCHES = 64
MAX_BATCHES = 1024
#: The fewest equal batches the diagnostics use (split R-hat halves each chain).
MIN_BATCHES = 4


class Tables:
    """The tables of one spec file, checked one by one (:meth:`fields`)."""

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

    def fields(self) -> tuple[dict[str, Any], ResolvedGrid]:
        """The spec's fields (every table checked) and its resolved grid."""
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
        batches = self.parse_batches(run_shape[game.checkpoint_of])
        block, points, seconds = self.parse_tasks(replicates)
        auto = not {"points_per_task", "seconds"} & set(self.table("tasks"))
        auto_block = not {"replicates_per_task", "seconds"} & set(self.table("tasks"))
        stderr, most = self.parse_precision(replicates, game)
        fields = dict(
            source=self.source, text=self.text, name=name, game_name=game.name, seed=seed,
            fixed=fixed, grid=grid, run_shape=run_shape, replicates=replicates,
            checkpoints=checkpoints, series_batches=batches, block=block, store=self.string("store", False),
            description=self.string("description", False) or "", task_seconds=seconds,
            points_per_task=points, auto_points=auto, auto_block=auto_block,
            precision_stderr=stderr, max_replicates=most, storage_options=self.parse_storage_options(),
        )
        resolved = self.check_points(game, fixed, grid)
        fields["answer"] = self.parse_answer(game, grid, resolved)
        return {**fields, "files": self.named_files(resolved, game)}, resolved

    def parse_answer(self, game: Game, grid: dict[str, tuple], resolved: ResolvedGrid) -> Answer:
        """``[answer]``: the question the sweep asks (:mod:`boardsweep.pipeline.spec.answer`)."""
        if "answer" not in self.raw:
            return default_answer(game, grid)
        labels = game.coords_for(resolved[0][1])
        return check_answer(self.raw["answer"], game, grid, labels, self.error)

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

    def named_files(self, resolved: ResolvedGrid, game: Game) -> dict[str, str]:
        """``sha256:<hex>`` of every file a parameter value names (see ``Spec.files``)."""
        free = [p.name for p in game.params if p.choices is None]
        values = {v for name in free for v in resolved.values(name) if isinstance(v, str)}
        files = {}
        for value in sorted(maybe_files(values)):
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
            try:  # the whole axis at once; where a value fails, one by one to name the first
                checked = tuple(map(game.param(axis).validate, values))
            except ParameterError:
                checked = tuple(self.param_value(game, f"{key}[{i}]", axis, v) for i, v in enumerate(values))
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

    def parse_batches(self, total: int) -> int:
        """``[checkpoints] batches``: equal batches of each headline's series
        per replicate (:func:`boardsweep.core.batches.equal_ends`); 0 keeps
        none.  Default :data:`DEFAULT_BATCHES`, or the run length where
        shorter (0 below :data:`MIN_BATCHES`)."""
        table = self.table("checkpoints", CHECKPOINT_KEYS)
        if "batches" not in table:
            return DEFAULT_BATCHES if total >= DEFAULT_BATCHES else (total if total >= MIN_BATCHES else 0)
        batches = self.integer("checkpoints.batches", table["batches"], 0)
        if batches and not MIN_BATCHES <= batches <= min(total, MAX_BATCHES):
            raise self.error("checkpoints.batches", f"{batches} is not allowed; expected 0 (no series) or "
                             f"{MIN_BATCHES} to {min(total, MAX_BATCHES)} (at most one batch per step of the run, "
                             f"at most {MAX_BATCHES})")
        return batches

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

    def check_points(self, game: Game, fixed: dict[str, Any], grid: dict[str, tuple]) -> ResolvedGrid:
        """Cross-parameter checks and shared coordinate labels at every grid point.

        Each distinct value is validated once, ``check_params`` runs once per
        distinct combination of what it reads (``Game.checked_params``) and
        the labels are made once per combination of ``Game.coords_params``
        (:func:`resolve_grid`): what checking each point finds, without a
        dict per point.  Where anything fails, the points are checked one by
        one, so that the error names the first that fails."""
        try:
            resolved = resolve_grid(game, fixed, grid, validated=True)  # parse_grid validated each value
            labels = None
            for params in resolved.combinations(game.coords_params if game.coords_fn is not None else ()):
                coords = game.coords_for(params)
                if labels is None:
                    labels = coords
                elif coords != labels:
                    raise ParameterError("grid points have different coordinate labels")
        except ParameterError as exc:
            self.check_each_point(game, fixed, grid)  # raises, naming the first point that fails
            raise self.error("grid", str(exc)) from None  # only where the game's checks depend on more than they say
        return resolved  # Spec.points: the grid is resolved once, here

    def check_each_point(self, game: Game, fixed: dict[str, Any], grid: dict[str, tuple]) -> None:
        """:meth:`check_points` one grid point at a time, in grid order: the
        first point that fails is named in the error."""
        labels = None
        for index in itertools.product(*(range(len(v)) for v in grid.values())):
            point = {a: grid[a][i] for a, i in zip(grid, index)}
            where = ", ".join(f"{a}={v!r}" for a, v in point.items())
            try:
                params = game.resolve_params({**fixed, **point})
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


#: Names every store has beside the game's own variables: no grid axis may take them.
STORE_NAMES = frozenset({"replicate", "checkpoint", "done", "exact_done", "exact_exists", "exact_note",
                         "replicates_used", "stderr_reached", "precision_state"})


def check_storable(spec) -> None:
    """Refuse, in one line naming the spec file and key, a grid axis named as
    an array or dimension of the game's store (:func:`store_names`: the money
    game's ``rounds`` is its round cap and an output), which the store cannot
    hold beside it; a run checks it before anything is made (planning and
    sizing such a grid is fine: nothing is stored)."""
    taken = store_names(spec.game)
    for axis in spec.grid:
        if axis in taken:
            raise SpecError(f"{spec.source}: grid.{axis}: {spec.game_name}'s store already has an array or "
                            f"dimension named {axis!r} (an output of the game), so it cannot be a grid axis of a "
                            f"run; expected it in [params], one run per value (`--set params.{axis}=VALUE`)")


def store_names(game: Game) -> frozenset[str]:
    """Names a store of ``game`` gives its arrays and dimensions (:data:`STORE_NAMES`,
    the game's simulated and exact variables and their dimensions, and each
    labelled dimension's ``*_name`` array): a grid axis sharing one would
    clash with it in the Dataset."""
    variables = {**game.variables, **game.exact_variables}
    dims = {d for var in variables.values() for d in var.dims}
    series = {SERIES_PREFIX + name for name in series_sources(game)} | {SERIES_DIM}  # store format 7
    return STORE_NAMES | set(variables) | dims | {f"{d}_name" for d in dims} | series


#: Values at most this many bytes long with no folder are looked up in the folder's listing.
NAME_MAX = 255


def maybe_files(values: Iterable[str]) -> list[str]:
    """The ``values`` that may name a file (a superset of those that do):
    every value but the plain names missing from the working folder."""
    values = list(values)
    if len(values) < 2:
        return values
    try:
        listed = {_key(name) for name in os.listdir(".")}
    except OSError:  # not listable: each one looked at, as before
        return values
    sep, alt = os.sep, os.altsep or os.sep
    key = _key if sys.platform == "win32" else str.casefold  # non-ASCII values: _key below
    return [v for v in values if (key(v) if v.isascii() else _key(v)) in listed or sep in v or alt in v
            or v[:1] == "~" or v in ("", ".", "..")
            or (len(v) * 4 > NAME_MAX and len(v.encode("utf-8", "surrogateescape")) > NAME_MAX)]


def _key(name: str) -> str:
    """``name`` as a case-insensitive, normalising file system may compare it."""
    key = name.casefold() if name.isascii() else unicodedata.normalize("NFC", name).casefold()
    return key.rstrip(" .") if sys.platform == "win32" else key
