"""The game interface between the core and the pipeline, and the registry.

A game is a :class:`Game`: its parameters (with defaults and validation), the
shape of one run, its output variables (dimensions, dtypes, coordinate labels),
a deterministic ``simulate`` and, where the mathematics allows, an ``exact``.
The pipeline knows games only through this module.

Registry
--------
Games are found through the entry-point group ``boardsweep.games``
(:data:`ENTRY_POINT_GROUP`): each entry maps a game name to a module that
defines ``GAME`` (or to the :class:`Game` object itself, ``module:attr``).
boardsweep's own games are registered that way in its ``pyproject.toml``; a
game in another installed distribution adds one line to its own::

    [project.entry-points."boardsweep.games"]
    chutes_ladders = "chutes_ladders.game"

and is swept, stored, queried and reported with no change to boardsweep.
:func:`register` adds a game by module name at run time (tests, notebooks).
A :class:`Game` sent to a Dask worker is pickled as its name and module, so a
worker lacking the game's distribution fails the task with one line naming
the game and the distribution (:class:`GameNotInstalled`).

Conventions
-----------
* ``simulate(params, seed, run_shape, checkpoints)`` returns cumulative
  results at each checkpoint.  ``checkpoints`` is a strictly increasing int64
  array of values of the run-shape entry named by ``Game.checkpoint_of``
  (e.g. turns for Monopoly, games for Shut the Box); its last value equals
  that entry.  Every array returned has ``checkpoint`` as its first axis.
* ``seed`` is an ``int`` or a :class:`numpy.random.SeedSequence`; the same
  seed gives the same arrays, bit for bit.
* ``exact(params, run_shape, checkpoints)`` returns arrays named in
  ``Game.exact_variables``, every name starting with ``exact_``
  (:data:`EXACT_PREFIX`; a Game breaking the rule is refused); an entry that has no exact value for these
  parameters is filled with NaN.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import socket
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from .errors import GameNotInstalled, ParameterError  # the game interface: plugins import these from here
from .schema import Headline, Param, Ratio, Variable  # the game interface: plugins import these from here

__all__ = [
    "Deferred",
    "ParameterError",
    "Param",
    "Variable",
    "Ratio",
    "Headline",
    "Game",
    "EXACT_PREFIX",
    "GameNotInstalled",
    "ENTRY_POINT_GROUP",
    "GAME_MODULES",
    "register",
    "get_game",
    "game_names",
    "game_source",
    "headlines_of",
    "interval_headlines",
    "SERIES_PREFIX", "SERIES_DIM",
    "series_sources",
    "column_groups",
]


#: The prefix of every exact variable's name (``exact_frequency``,
#: ``exact_expected_rolls``): in a store, exact answers and simulated sums are
#: told apart by name.  :class:`Game` refuses a game that breaks the rule.
EXACT_PREFIX = "exact_"


@dataclass(frozen=True)
class Game:
    """Everything the pipeline needs to know about a game.

    Attributes
    ----------
    name : str
        Registry name, e.g. ``"monopoly"``.
    params : tuple of Param
        Rule parameters (sweep axes).
    run_shape : dict
        Run-shape entries and their defaults (e.g. games, players, turns).
    checkpoint_of : str
        Which run-shape entry the checkpoints count (turns, games, ...).
    coords : dict
        Labels of the game's own dimensions (e.g. 41 ``location`` labels).
    variables : dict of Variable
        Arrays returned by ``simulate``.
    exact_variables : dict of Variable
        Arrays returned by ``exact``; every name starts with
        :data:`EXACT_PREFIX` (``exact_``), no simulated variable's does.
    simulate : callable
        ``simulate(params, seed, run_shape, checkpoints) -> dict[str, ndarray]``.
    exact : callable, optional
        ``exact(params, run_shape, checkpoints) -> dict[str, ndarray]``.
    summarize : callable
        ``summarize(params, sim, run_shape) -> dict``: a JSON-ready summary of a
        simulation (what ``boardsweep simulate`` prints).
    summarize_exact : callable, optional
        ``summarize_exact(params) -> dict``: what ``boardsweep exact`` prints.
    check_params : callable, optional
        Cross-parameter validation of a full parameter dict.
    extras : dict
        Game-specific capabilities (e.g. ``"replay"``) used by the CLI.  Optional
        entries the analysis uses when present:
        ``"asymptotic_variance"(params) -> {"variance": (DIM,) array, "per": name}``,
        the CLT variance of the simulated frequencies, ``Var(f_hat) ~ variance / N``
        with ``N`` the simulated per-checkpoint variable ``name`` (NaN: no theory;
        a run asks it of a small grid's points while its tasks run, and its
        summary asks again: a game caches it where it costs);
        ``"replicate_exact"(params, seed, run_shape) -> {exact variable: array}``,
        the exact answer of the random environment (e.g. deck shuffles) that the
        replicate with this seed played; ``"modal"(frequency) -> str``, the
        game's short name for the most frequent labels (PE84's modal string);
        ``"compiled_code"(params, run_shape) -> {unit: cached}``, the units
        of compiled code a simulation at ``params`` runs, each with whether
        numba's disk cache holds it, and ``"compile_code"(unit)``, compiling
        one there: a run's start compiles the units missing in parallel
        processes (:mod:`boardsweep.pipeline.run.warm`).
    coords_fn : callable, optional
        ``coords_fn(params) -> coords`` where labels depend on parameters.
    ratios : dict of Ratio
        Estimates the report shows with 95% intervals (win shares, mean rolls).
        Where a ratio has a ``seat`` dimension and the grid point a ``players``
        parameter, only the first ``players`` seats are reported.
    label_names : dict, optional
        Full names of a dimension's labels where the labels are codes (e.g.
        Monopoly's ``location``: ``CC1`` -> "Community Chest"); the store
        carries them as a ``<dim>_name`` coordinate.
    exact_params : tuple of str, optional
        The parameters the exact answer depends on (``None``: all of them);
        grid points that agree on these share one solve.
    checked_params : tuple of str, optional
        The parameters ``check_params`` reads (``None``: all of them): a grid
        is checked once per distinct combination of their values, not once
        per grid point.  A tuple of such tuples: groups checked apart (the
        check holds at a point where it holds for each group's values there),
        e.g. ``(("players", "buy_policy"), ("players", "jail_strategy"))``.
    coords_params : tuple of str, optional
        The parameters ``coords_fn`` reads (``None``: all of them): a grid's
        labels are made once per distinct combination of their values.
    headlines : tuple of Headline
        The few quantities the game exists to answer, first the one a user
        asks for first; summaries, ``query`` and the report lead with them.
        A game that declares none gets :func:`headlines_of`'s fallback (its
        ratios and its distribution variables with an exact counterpart).
    simulate_batch : callable, optional
        ``simulate_batch(columns, keys, run_shape, checkpoints) -> dict[str, ndarray]``:
        many runs in one call, run ``i`` being ``simulate(params_i, seed_i, ...)``
        bit for bit.  ``columns``: per parameter, (its distinct values, each
        run's index into them), so a value is parsed once per call, not per
        run; ``keys``: uint64 (runs, 2), each run's
        ``seed_i.generate_state(2, uint64)`` (:func:`boardsweep.core.rng.seed_key`);
        each array returned has the runs as its first axis, then the
        declared dims.  The runs of one call share the values of
        ``coords_params`` (one label set).  A game without it is run point
        by point through ``simulate``; a game derived with
        ``dataclasses.replace(game, simulate=...)`` must clear or replace it
        too (``simulate_batch=None``), or its planned tasks run the old rules.
    """

    name: str
    description: str
    params: tuple[Param, ...]
    run_shape: dict[str, int]
    checkpoint_of: str
    coords: dict[str, tuple[str, ...]]
    variables: dict[str, Variable]
    exact_variables: dict[str, Variable]
    simulate: Callable[..., dict[str, np.ndarray]]
    summarize: Callable[..., dict]
    exact: Callable[..., dict[str, np.ndarray]] | None = None
    summarize_exact: Callable[..., dict] | None = None
    check_params: Callable[[dict], None] | None = None
    run_shape_minimum: dict[str, int] = field(default_factory=dict)
    run_shape_maximum: dict[str, int] = field(default_factory=dict)
    extras: dict[str, Callable] = field(default_factory=dict)
    coords_fn: Callable[[dict], dict[str, tuple[str, ...]]] | None = None
    ratios: dict[str, Ratio] = field(default_factory=dict)
    exact_params: tuple[str, ...] | None = None
    checked_params: tuple[str, ...] | tuple[tuple[str, ...], ...] | None = None
    coords_params: tuple[str, ...] | None = None
    #: (module[:attr], distribution) it was loaded from; set by the registry
    #: (not copied by ``dataclasses.replace``), used to pickle it by name.
    origin: tuple[str, str] | None = field(default=None, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        """Refuse, in one line, a game that breaks the store's naming rule
        (:data:`EXACT_PREFIX`): every exact variable starts with it and no
        simulated one does, so a reader tells them apart by name alone."""
        for name in self.exact_variables:
            if not name.startswith(EXACT_PREFIX):
                raise ParameterError(
                    f"game {self.name!r}: exact variable {name!r} must be named {EXACT_PREFIX}* "
                    f"(e.g. {EXACT_PREFIX + name!r}): every exact answer is stored under that prefix")
        for name in self.variables:
            if name.startswith(EXACT_PREFIX):
                raise ParameterError(
                    f"game {self.name!r}: simulated variable {name!r} must not start with "
                    f"{EXACT_PREFIX!r}, the prefix of exact answers")

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickle a registered game as (name, module, distribution): the
        receiving process imports it, or raises :class:`GameNotInstalled`."""
        if self.origin is None:
            return super().__reduce_ex__(protocol)
        return (_unpickle_game, (self.name, *self.origin))

    @property
    def has_exact(self) -> bool:
        """Whether the game has an exact solver (for some parameters at least)."""
        return self.exact is not None

    label_names: dict[str, tuple[str, ...]] = field(default_factory=dict)
    headlines: tuple[Headline, ...] = ()
    simulate_batch: Callable[..., dict[str, np.ndarray]] | None = None

    def coords_for(self, params: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
        """Coordinate labels for these parameters (``coords`` unless the game
        derives them from a parameter, e.g. a user-supplied board file)."""
        return dict(self.coords) if self.coords_fn is None else self.coords_fn(dict(params))

    def param(self, name: str) -> Param:
        """The parameter called ``name`` (ParameterError naming the known ones)."""
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params)
        raise ParameterError(
            f"game {self.name!r} has no parameter {name!r}; known parameters: {known}"
        )

    def resolve_params(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Fill defaults and validate every value; return the full parameter dict."""
        for name in given:
            self.param(name)
        full = {p.name: p.validate(given.get(p.name, p.default)) for p in self.params}
        if self.check_params is not None:
            self.check_params(full)
        return full

    def resolve_run_shape(self, given: Mapping[str, Any]) -> dict[str, int]:
        """Fill run-shape defaults and check that each entry is a positive integer."""
        out = dict(self.run_shape)
        for key, value in given.items():
            if key not in self.run_shape:
                known = ", ".join(self.run_shape)
                raise ParameterError(
                    f"game {self.name!r} has no run-shape entry {key!r}; known: {known}"
                )
            lo = self.run_shape_minimum.get(key, 1)
            hi = self.run_shape_maximum.get(key)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, np.integer))
                or value < lo
                or (hi is not None and value > hi)
            ):
                bound = f">= {lo}" + ("" if hi is None else f" and <= {hi}")
                raise ParameterError(
                    f"run shape {key!r}: {value!r} is not allowed; expected an integer {bound}"
                )
            out[key] = int(value)
        return out

    def default_checkpoints(self, run_shape: Mapping[str, int], count: int = 16) -> np.ndarray:
        """Log-spaced checkpoints ending at the run length (distinct integers)."""
        return log_checkpoints(run_shape[self.checkpoint_of], count)


class Deferred:
    """A function of a game's module imported at its first call (``module``,
    ``name``): the kernels (numba) and solvers (scipy) of a game cost nothing
    to a command that never calls them.  ``Deferred(m, f)(*a) == m.f(*a)``;
    once imported, the function itself is kept and called.  One object per
    function: a Game pickled by value (a derived game) keeps the very same
    one, as it would a module's function."""

    _made: dict[tuple[str, str], "Deferred"] = {}

    def __new__(cls, module: str, name: str) -> "Deferred":
        found = cls._made.get((module, name))
        if found is None:
            found = super().__new__(cls)
            found.module, found.name, found._function = module, name, None
            found = cls._made.setdefault((module, name), found)
        return found

    def __reduce__(self) -> tuple:
        return Deferred, (self.module, self.name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._function is None:
            # the import statement's own path (``__import__``), which ``python -X importtime`` times and names
            self._function = getattr(__import__(self.module, fromlist=[self.name]), self.name)
        return self._function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Deferred({self.module!r}, {self.name!r})"


def headlines_of(game: Game) -> tuple[Headline, ...]:
    """The game's headline quantities; for a game that declares none, its
    ``ratios`` (shares pooled per unit, means per replicate) and every
    simulated ``(checkpoint, DIM)`` variable as a distribution compared with
    the first exact variable over DIM (per replicate)."""
    if game.headlines:
        return tuple(game.headlines)
    found = []
    for name, r in game.ratios.items():
        squares = r.numerator if r.kind == "share" else None
        found.append(Headline(name, name.replace("_", " "), r.numerator, r.denominator, squares, r.exact))
    for name, var in game.variables.items():
        if len(var.dims) == 2 and var.dims[0] == "checkpoint":
            exact = next((e for e, ev in game.exact_variables.items() if ev.dims[-1:] == var.dims[1:]), None)
            found.append(Headline(f"{name}_frequency", f"relative frequency of each {var.dims[1]}",
                                  name, None, None, exact, "distribution"))
    return tuple(found)


def interval_headlines(game: Game) -> list[Headline]:
    """The headlines with one interval per label (what a precision target
    bounds): all but a distribution over independent games, which is tested
    as a whole by its goodness of fit."""
    return [h for h in headlines_of(game) if not (h.kind == "distribution" and h.squares is not None)]


#: The prefix of a store's equal-batch series of a simulated variable
#: (``series_counts`` holds ``counts`` per equal batch of the run).
SERIES_PREFIX = "series_"
#: The dimension of those series (one entry per equal batch).
SERIES_DIM = "batch"


def series_sources(game: Game) -> tuple[str, ...]:
    """The simulated variables whose equal-batch series a store keeps: every
    integer ``(checkpoint, ...)`` variable that a headline divides
    (numerator or denominator), in the game's order."""
    named = {n for h in headlines_of(game) for n in (h.numerator, h.denominator)}
    return tuple(n for n, v in game.variables.items()
                 if n in named and v.dims[:1] == ("checkpoint",) and np.dtype(v.dtype).kind in "iu")


def log_checkpoints(total: int, count: int = 16) -> np.ndarray:
    """Up to ``count`` distinct log-spaced integers in [1, total], ending at ``total``."""
    if total < 1:
        raise ParameterError(f"checkpoint range must be >= 1, got {total}")
    points = np.unique(np.round(np.geomspace(1, total, count)).astype(np.int64))
    points[-1] = total
    return np.unique(points)


#: The entry-point group through which installed distributions register games.
ENTRY_POINT_GROUP = "boardsweep.games"

#: Games registered at run time with :func:`register`: name -> ``module`` or
#: ``module:attr``.  They take precedence over entry points of the same name.
GAME_MODULES: dict[str, str] = {}


def register(name: str, target: str) -> None:
    """Register game ``name`` as ``target``, a module defining ``GAME`` (or
    ``module:attr``), for this process.  Installed packages use the
    ``boardsweep.games`` entry point instead; this is for tests and notebooks.
    A worker process imports ``target`` by name, so it must be importable there.
    """
    GAME_MODULES[name] = target


#: The installed entry points as last scanned (:func:`_entry_points`): a scan reads every
#: installed distribution's metadata (about 7 ms), and a run looks its game up several times.
_SCANNED: list[dict[str, list[tuple[str, str]]]] = []


def _entry_points(fresh: bool = True) -> dict[str, list[tuple[str, str]]]:
    """name -> [(target, distribution)] from the installed entry points
    (unless ``fresh``, those of the last scan, where there was one)."""
    if not fresh and _SCANNED:
        return {name: list(entries) for name, entries in _SCANNED[0].items()}
    found: dict[str, list[tuple[str, str]]] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist.name if ep.dist is not None else ep.value.split(".")[0].split(":")[0]
        entry = (ep.value, dist)
        if entry not in found.setdefault(ep.name, []):
            found[ep.name].append(entry)
    _SCANNED[:] = [found]
    return {name: list(entries) for name, entries in found.items()}


def _sources(fresh: bool = True) -> dict[str, list[tuple[str, str]]]:
    """Every registered game: name -> [(target, distribution)], run-time first."""
    found = _entry_points(fresh)
    for name, target in GAME_MODULES.items():
        found[name] = [(target, target.split(".")[0].split(":")[0])]
    return found


def game_source(name: str) -> tuple[str, str]:
    """``(target, distribution)`` of the registered game ``name``: from the
    last scan of the installed entry points where it names the game once,
    else from a new scan (a game installed since is found).

    Raises ParameterError for an unknown name or one that two installed
    distributions both register.
    """
    sources = _sources(fresh=False)
    if len(sources.get(name, ())) != 1:
        sources = _sources()
    if name not in sources:
        known = ", ".join(game_names()) or "(none)"
        raise ParameterError(f"unknown game {name!r}; known games: {known}")
    if len(sources[name]) > 1:
        dists = " and ".join(repr(d) for d in sorted(d for _, d in sources[name]))
        raise ParameterError(
            f"game {name!r} is registered by both {dists} (entry point group "
            f"{ENTRY_POINT_GROUP!r}); uninstall one of them"
        )
    return sources[name][0]


def _importable(target: str) -> bool:
    try:
        return importlib.util.find_spec(target.split(":")[0]) is not None
    except (ImportError, ValueError):
        return False


def game_names() -> list[str]:
    """Sorted names of the registered games whose module is importable."""
    return sorted(
        name for name, entries in _sources().items() if any(_importable(t) for t, _ in entries)
    )


def _import_game(name: str, target: str, dist: str) -> Game:
    """Import the Game at ``target`` (``module`` defining GAME, or ``module:attr``)."""
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or module_name
        if not (module_name == missing or module_name.startswith(missing + ".")):
            raise  # the game's own dependency is missing: the original error says which
        raise GameNotInstalled(
            f"game {name!r} is not installed on host {socket.gethostname()}: its "
            f"distribution {dist!r} (module {module_name!r}) cannot be imported; "
            f"pip install {dist} on every Dask worker"
        ) from None
    game = getattr(module, attr or "GAME")
    if not isinstance(game, Game) or game.name != name:
        raise ParameterError(
            f"game {name!r} ({target}, distribution {dist!r}) is not a boardsweep "
            f"Game named {name!r}"
        )
    if game.origin is None:
        object.__setattr__(game, "origin", (target, dist))
    return game


class MissingGame:
    """Stands for a pickled game whose distribution is not installed in this
    process.  A Dask scheduler only passes it on (pickled as the same name);
    the first use of a game attribute (a worker running a task) raises
    :class:`GameNotInstalled`, which names the game and the distribution."""

    def __init__(self, name: str, target: str, dist: str, error: str) -> None:
        self._ref = (name, target, dist)
        self._error = error

    def __reduce__(self) -> Any:
        return (_unpickle_game, self._ref)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") or attr in ("_ref", "_error"):
            raise AttributeError(attr)
        raise GameNotInstalled(self._error)


def _unpickle_game(name: str, target: str, dist: str) -> Game | MissingGame:
    """The game, or a :class:`MissingGame` where its module is not installed."""
    try:
        return _import_game(name, target, dist)
    except GameNotInstalled as exc:
        return MissingGame(name, target, dist, str(exc))


def get_game(name: str) -> Game:
    """Return the registered game ``name`` (ParameterError listing the known ones;
    GameNotInstalled when its distribution is registered but not importable)."""
    target, dist = game_source(name)
    return _import_game(name, target, dist)


def column_groups(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The distinct rows of ``codes`` (runs, k) of value indices (each
    ``simulate_batch`` column's second part), each run's row among them and
    each row's runs: ``np.unique(codes, axis=0, return_inverse=True)``'s rows,
    order (lexicographic) and inverse, found through one int64 key per run
    (the mixed-radix number of its indices) and one stable sort: O(runs log
    runs) whatever the number of groups.

    Returns
    -------
    (ndarray, ndarray, list of ndarray)
        int64 (groups, k); int64 (runs,) each run's group; per group, its
        runs' indices in ascending order.
    """
    codes = np.asarray(codes, dtype=np.int64)
    if codes.ndim != 2 or codes.size == 0 or codes.min() < 0 \
            or float(np.prod(codes.max(axis=0) + 1.0)) >= 2.0 ** 62:
        rows, inverse = np.unique(codes.reshape(len(codes), -1), axis=0, return_inverse=True)
        inverse = inverse.reshape(-1).astype(np.int64)
        return rows, inverse, [np.flatnonzero(inverse == g) for g in range(len(rows))]
    dims = tuple(int(d) for d in codes.max(axis=0) + 1)
    key = np.ravel_multi_index(tuple(codes.T), dims)
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    first = np.r_[True, ordered[1:] != ordered[:-1]]
    starts = np.flatnonzero(first)
    inverse = np.empty(len(key), dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    rows = np.stack(np.unravel_index(ordered[starts], dims), axis=1).astype(np.int64)
    return rows, inverse, np.split(order, starts[1:])
