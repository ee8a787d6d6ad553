"""What a Dask worker runs: simulate one task chunk or solve one chunk's exact answers,
write the result into the store itself, and return only small metadata.

Large arrays never travel back to the client.  Each record separates the
time spent compiling numba kernels (or loading them from numba's disk
cache, or waiting for another thread's compilation:
:class:`boardsweep.pipeline.run.warm.CompileClock`) from the kernel time proper.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any

import numpy as np

from ...core.batches import with_series
from ...core.games import SERIES_PREFIX, Game, column_groups, series_sources
from ..errors import OutputInvalid
from .growth import kept_cells
from ..plan import Cells, ExactTask, Task, exact_key, point_words, replicate_keys, replicate_seed
from ..store import blank_unplayed, write_exact, write_region, SEAT_DIM, mark, playing
from .warm import COMPILE_CLOCK
from .numba_cache import writable_numba_cache

writable_numba_cache()  # a worker process of any cluster: numba caches the games' kernels where it can write

__all__ = ["OutputInvalid", "checked_outputs", "simulate_block", "split_series", "batch_block", "point_block", "computed_mask", "run_task", "simulate_task", "store_task", "run_exact", "exact_points", "exact_columns", "exact_answer",
           "time_replicate", "at_point", "failed_at", "POINT_ATTRIBUTE"]


def checked_outputs(game: Game, params: dict, outputs: dict, checkpoints: np.ndarray,
                    exact: bool = False) -> dict[str, np.ndarray]:
    """``outputs`` of one run (``exact``: of the exact solver) as the
    declared arrays, or :class:`OutputInvalid` naming the first that differs.

    Each declared variable must be present (exact answers may be left out:
    NaN), shaped ``(len(checkpoints) or the label count per dim)``, and of
    its declared kind: an integer output integer-typed with every value in the
    declared type's range (no NaN, no float counts), a float output real."""
    declared = game.exact_variables if exact else game.variables
    labels = game.coords_for(params)
    where = f"game {game.name!r} ({'exact' if exact else 'simulate'}) at {params}"
    out = {}
    for name, var in declared.items():
        if name not in outputs:
            if exact:
                continue
            raise OutputInvalid(f"{where}: output {name!r} missing; nothing stored")
        values = np.asarray(outputs[name])
        shape = tuple(len(checkpoints) if d == "checkpoint" else len(labels[d]) for d in var.dims)
        if values.shape != shape:
            raise OutputInvalid(f"{where}: output {name!r} has shape {values.shape}, {shape} declared "
                                f"(dims {var.dims}); nothing stored")
        out[name] = _as_declared(where, name, values, np.dtype(var.dtype))
    return out


def _as_declared(where: str, name: str, values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    kind = values.dtype.kind
    if dtype.kind in "iu":
        if kind not in "iub":
            raise OutputInvalid(f"{where}: output {name!r} is {values.dtype}, {dtype} declared (integer counts "
                                "only: no NaN, no fractions); nothing stored")
        info, least = np.iinfo(dtype), int(values.min()) if values.size else 0
        if values.size and (least < info.min or int(values.max()) > info.max):
            raise OutputInvalid(f"{where}: output {name!r} has values outside {dtype}; nothing stored")
        if values.size and least == mark(dtype):
            raise OutputInvalid(f"{where}: output {name!r} has the value {least}, the store's mark of a cell "
                                f"without a value (the least {dtype}); nothing stored")
    elif kind not in "iufb":
        raise OutputInvalid(f"{where}: output {name!r} is {values.dtype}, {dtype} declared; nothing stored")
    return values.astype(dtype, copy=False)

def simulate_block(
    game: Game, root: int, task: Task, run_shape: dict, checkpoints: np.ndarray, series: int = 0
) -> dict[str, np.ndarray]:
    """Simulate the cells of ``task``: per variable, the chunk's whole
    extent (grid axes, then replicates, then the variable's own dims) with
    the mark of no value where the task computes nothing and at the seats
    that do not play (:func:`_mark_no_value`).

    A game with ``simulate_batch`` runs a planned task's cells as one block
    (:func:`batch_block`) where they are :data:`BATCH_MIN_RUNS` runs or more; where the block fails, the task is run again
    point by point, so that the error names its grid point.  Each run's
    outputs are checked as :func:`checked_outputs` does; the value range
    of integer outputs (the mark of no value excluded) is checked once per
    task, on what the runs returned, before the cast to the declared type.
    ``series`` > 0: the runs also stop at the ends of that many equal
    batches, and the headline variables' counts per batch come back as
    ``series_<name>`` (:func:`split_series`)."""
    if series:
        union, at, ends = with_series(checkpoints, series)
        return split_series(game, simulate_block(game, root, task, run_shape, union), len(task.extent), at, ends)
    if game.simulate_batch is not None and isinstance(task.cells, Cells) and task.cells.rows is not None \
            and _runs(task.cells) >= BATCH_MIN_RUNS:
        try:
            return batch_block(game, root, task, run_shape, checkpoints)
        except Exception:
            point_block(game, root, task, run_shape, checkpoints)  # raises the error, naming the point
            raise
    return point_block(game, root, task, run_shape, checkpoints)


#: The fewest runs a task runs as a block: a block costs about 1 ms of Python
#: whatever its size (the columns, the vectorised seeds, the checks), a run
#: point by point 0.1-0.5 ms (Shut the Box, Monopoly, the money game's small
#: runs; ``benchmarks/sweep_games.py --tasks-only``).  The same integers either way.
BATCH_MIN_RUNS = 4


def _runs(cells: Cells) -> int:
    """The runs (grid point x replicate) of a task's cells."""
    rows = np.asarray(cells.rows)
    return len(cells) * int(rows[0].sum()) if rows.shape[0] == 1 else int(rows[:len(cells)].sum())


def split_series(game: Game, arrays: dict[str, np.ndarray], axis: int, at: np.ndarray, ends: np.ndarray
                 ) -> dict[str, np.ndarray]:
    """A block simulated at :func:`~boardsweep.core.batches.with_series`'s
    union of checkpoints (along ``axis``) as the store keeps it: every
    variable at its own checkpoints (``at``), and for each of
    :func:`~boardsweep.core.games.series_sources` its increments between
    the equal batches' ``ends``, ``s_k = x(e_k) - x(e_{k-1})`` (``x(e_0) = 0``),
    as ``series_<name>``; the mark of no value where a cell has none."""
    out = {name: np.take(values, at, axis=axis) for name, values in arrays.items()}
    for name in series_sources(game):
        cum = np.take(arrays[name], ends, axis=axis)
        if cum.dtype.kind in "iu":
            none = (cum == mark(cum.dtype)).any(axis=axis, keepdims=True)
            inc = np.diff(cum, axis=axis, prepend=np.zeros_like(np.take(cum, [0], axis=axis)))
            out[SERIES_PREFIX + name] = np.where(none, mark(cum.dtype), inc)
        else:
            out[SERIES_PREFIX + name] = np.diff(cum, axis=axis, prepend=0.0)
    return out


def batch_block(game: Game, root: int, task: Task, run_shape: dict, checkpoints: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`simulate_block` in blocks: the task's points as parameter
    columns, every run's seed key derived at once (bit for bit
    :func:`replicate_seed`'s), one ``simulate_batch`` call per distinct
    label set (``coords_params``), outputs checked per call and scattered
    into the chunk.  Python work per task, plus one SHA-256 per point."""
    cells = task.cells
    local, columns = cells.columns()
    point, reps = cells.replicates()
    keys = replicate_keys(root, point_words(columns)[point], reps)
    raw: dict[str, np.ndarray] = {}
    for runs in _label_groups(game, columns, point):
        params = {name: values[codes[point[runs[0]]]] for name, (values, codes) in columns.items()}
        where = f"game {game.name!r} (simulate, {runs.size} runs from {params}) in task {task.key}"
        part = {name: (values, codes[point[runs]]) for name, (values, codes) in columns.items()}
        outputs = game.simulate_batch(part, keys[runs], run_shape, checkpoints)
        shapes = {name: (runs.size, *shape) for name, shape in _declared_shapes(game, params, checkpoints).items()}
        at = (*(axis[point[runs]] for axis in local), reps[runs] - task.start)
        for name, values in _checked_run(game, where, outputs, shapes).items():
            if name not in raw:
                raw[name] = _buffer(task.extent + values.shape[1:], np.dtype(game.variables[name].dtype))
            raw[name][at] = values
    out = {name: _as_declared(f"game {game.name!r} (simulate) in task {task.key}", name, values,
                              np.dtype(game.variables[name].dtype))
           for name, values in raw.items()}
    idle = ~computed_mask(task)
    for values in out.values():
        values[idle] = mark(values.dtype) if values.dtype.kind in "iu" else np.nan
    _blank_columns(game, out, local, columns)
    return out


def _label_groups(game: Game, columns: dict, point: np.ndarray) -> list[np.ndarray]:
    """The runs (indices) in groups sharing one label set: all of them where
    the labels do not depend on the parameters, else per distinct value of
    ``coords_params`` (every parameter where the game does not say)."""
    runs = np.arange(point.size)
    if game.coords_fn is None:
        return [runs]
    names = tuple(columns) if game.coords_params is None else game.coords_params
    return column_groups(np.stack([columns[n][1][point] for n in names], axis=1))[2]


def _blank_columns(game: Game, arrays: dict[str, np.ndarray], local: tuple[np.ndarray, ...], columns: dict,
                   replicates: bool = True) -> None:
    """:func:`blank_unplayed` for a block's points at once: per distinct
    ``players`` value, its points' seats from ``players`` on marked
    (``replicates``: the arrays have a replicate axis after the grid's)."""
    if "players" not in columns:
        return
    variables, lead = {**game.variables, **game.exact_variables}, int(replicates)
    values, codes = columns["players"]
    for c, value in enumerate(values):
        players = playing(game, {"players": value})
        chosen = codes == c
        if players is None or not chosen.any():
            continue
        at = tuple(axis[chosen] for axis in local)
        for name, data in arrays.items():
            dims = variables[name].dims if name in variables else ()
            if SEAT_DIM in dims:
                seat = [slice(None)] * (lead + len(dims))
                seat[lead + dims.index(SEAT_DIM)] = slice(players, None)
                data[(*at, *seat)] = mark(data.dtype) if data.dtype.kind in "iu" else np.nan


def point_block(game: Game, root: int, task: Task, run_shape: dict, checkpoints: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`simulate_block` point by point: ``game.simulate`` per run."""
    raw: dict[str, np.ndarray] = {}
    lows = tuple(lo for lo, _ in task.bounds)
    points = []  # (where in the chunk, parameters): each grid point's parameters made once
    for index, params, replicates in task.cells:
        shapes = _declared_shapes(game, params, checkpoints)
        where = tuple(i - lo for i, lo in zip(index, lows))
        points.append((where, params))
        with at_point(params):
            for r in replicates:
                outputs = game.simulate(params, replicate_seed(root, params, r), run_shape, checkpoints)
                said = f"game {game.name!r} (simulate) at {params}"
                for name, values in _checked_run(game, said, outputs, shapes).items():
                    if name not in raw:
                        raw[name] = _buffer(task.extent + values.shape, np.dtype(game.variables[name].dtype))
                    raw[name][where][r - task.start] = values
    out = {name: _as_declared(f"game {game.name!r} (simulate) in task {task.key}", name, values,
                              np.dtype(game.variables[name].dtype))
           for name, values in raw.items()}
    _mark_no_value(game, task, out, points)
    return out


def _mark_no_value(game: Game, task: Task, arrays: dict[str, np.ndarray], points: list[tuple[tuple, dict]]) -> None:
    """Mark, in place, the cells of ``arrays`` (``task``'s chunk, in their
    declared types) without a value: those ``task`` computes nothing for,
    and the seats that do not play (:func:`blank_unplayed`); integers at
    their type's :func:`~boardsweep.pipeline.store.integers.mark`, floats NaN."""
    idle = ~computed_mask(task)
    for values in arrays.values():
        values[idle] = mark(values.dtype) if values.dtype.kind in "iu" else np.nan
    for where, params in points:
        blank_unplayed(game, params, arrays, where)


def _declared_shapes(game: Game, params: dict, checkpoints: np.ndarray) -> dict[str, tuple[int, ...]]:
    labels = game.coords_for(params)
    return {name: tuple(len(checkpoints) if d == "checkpoint" else len(labels[d]) for d in var.dims)
            for name, var in game.variables.items()}


def _checked_run(game: Game, where: str, outputs: dict, shapes: dict) -> dict[str, np.ndarray]:
    """One run's (or one block's) outputs as arrays, or :class:`OutputInvalid`
    naming the first that is missing, misshapen or of the wrong kind
    (``where``: the run's or block's description, for the message)."""
    out = {}
    for name, shape in shapes.items():
        if name not in outputs:
            raise OutputInvalid(f"{where}: output {name!r} missing; nothing stored")
        values = np.asarray(outputs[name])
        if values.shape != shape:
            raise OutputInvalid(f"{where}: output {name!r} has shape {values.shape}, {shape} declared "
                                f"(dims {game.variables[name].dims}); nothing stored")
        kind, declared = values.dtype.kind, np.dtype(game.variables[name].dtype)
        if declared.kind in "iu" and kind not in "iub":
            raise OutputInvalid(f"{where}: output {name!r} is {values.dtype}, {declared} declared (integer "
                                "counts only: no NaN, no fractions); nothing stored")
        if kind not in "iufb":
            raise OutputInvalid(f"{where}: output {name!r} is {values.dtype}, {declared} declared; nothing stored")
        if declared.kind in "iu" and not (np.can_cast(values.dtype, declared) and np.can_cast(values.dtype, np.int64)):
            _check_range(where, name, values, declared)  # a type that may hold a value neither can: look
        out[name] = values
    return out


def _check_range(where: str, name: str, values: np.ndarray, declared: np.dtype) -> None:
    """Refuse integer ``values`` outside ``declared``'s range or int64's (the
    task's buffer, :func:`_buffer`): stored as they are, they would wrap."""
    if not values.size:
        return
    low = max(np.iinfo(declared).min, np.iinfo(np.int64).min)
    high = min(np.iinfo(declared).max, np.iinfo(np.int64).max)
    least, most = int(values.min()), int(values.max())
    if least < low or most > high:
        bad = most if most > high else least
        raise OutputInvalid(f"{where}: output {name!r} has the value {bad}, outside {declared} "
                            f"({low} to {high}); nothing stored")


#: The attribute a kernel's error carries the grid point it was raised at in (its parameters).
POINT_ATTRIBUTE = "boardsweep_params"


@contextmanager
def at_point(params: dict):
    """Mark an Exception raised inside with ``params`` (:data:`POINT_ATTRIBUTE`,
    the innermost kept): a task of many points names the one that failed.
    The mark travels with the error from a worker (pickled with its ``__dict__``)."""
    try:
        yield
    except Exception as exc:
        if getattr(exc, POINT_ATTRIBUTE, None) is None:
            try:
                setattr(exc, POINT_ATTRIBUTE, dict(params))
            except (AttributeError, TypeError):  # an error that takes no attributes: the task's first point
                pass
        raise


def failed_at(exc: BaseException) -> dict | None:
    """The parameters of the grid point ``exc`` was raised at (:func:`at_point`), or None."""
    found = getattr(exc, POINT_ATTRIBUTE, None)
    return found if isinstance(found, dict) else None


def _buffer(shape: tuple[int, ...], declared: np.dtype) -> np.ndarray:
    """What a task's runs are gathered in before the cast: int64 for integer
    outputs (so a value out of the declared range is seen, not wrapped), 0
    where no run writes (so that the mark of no value is seen only where a
    run returned it; :func:`_mark_no_value` puts it there after the check)."""
    if declared.kind in "iu":
        return np.zeros(shape, dtype=np.int64)
    return np.full(shape, np.nan, dtype=np.float64)


def computed_mask(task: Task) -> np.ndarray:
    """The chunk's cells ``task`` computes (grid axes, then replicates):
    a planned task's from its members and rows at once (no grid point's
    parameters made), any other's cell by cell."""
    cells = task.cells
    if isinstance(cells, Cells) and cells.rows is not None and cells.start == task.start:
        flat = np.zeros((int(np.prod(task.extent[:-1], dtype=np.int64)), task.extent[-1]), dtype=bool)
        flat[np.asarray(cells.members)] = cells.rows  # one row for every member where they all run alike
        return flat.reshape(task.extent)
    mask = np.zeros(task.extent, dtype=bool)
    lows = tuple(lo for lo, _ in task.bounds)
    for index, _, replicates in task.cells:
        mask[tuple(i - lo for i, lo in zip(index, lows))][[r - task.start for r in replicates]] = True
    return mask


def run_task(
    game: Game, root: int, task: Task, run_shape: dict, checkpoints: np.ndarray, url: str,
    token: str | None = None, series: int = 0,
) -> dict[str, Any]:
    """Simulate ``task``, write its chunk and done flags; return timings.
    ``token`` (the spec's SHA-256) lets the worker keep the store open;
    ``series``: equal batches of the headline series (:func:`simulate_block`)."""
    arrays, record = simulate_task(game, root, task, run_shape, checkpoints, series)
    return store_task(url, task, arrays, record, token)


def simulate_task(
    game: Game, root: int, task: Task, run_shape: dict, checkpoints: np.ndarray, series: int = 0
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """(arrays, timings) of ``task`` simulated in this thread, nothing written."""
    t0, c0, mark = time.perf_counter(), COMPILE_CLOCK.seconds(), COMPILE_CLOCK.count()
    arrays = simulate_block(game, root, task, run_shape, checkpoints, series)
    compile_s = COMPILE_CLOCK.seconds() - c0
    return arrays, {"key": task.key, "kernel_s": time.perf_counter() - t0 - compile_s, "compile_s": compile_s,
                    "compile_spans": COMPILE_CLOCK.spans(mark), "points": len(task.cells), "runs": task.runs}


def store_task(url: str, task: Task, arrays: dict[str, np.ndarray], record: dict[str, Any],
               token: str | None = None) -> dict[str, Any]:
    """Write ``task``'s chunk, then its done flags; ``record`` with the
    write time.  A chunk with stored cells (:attr:`Task.keeps`) is written
    whole: its stored cells read back unchanged (verified against their
    checksums by the run first), the task's own beside them."""
    t1 = time.perf_counter()
    done = computed_mask(task)
    if task.keeps:
        kept = kept_cells(url, task.region, [*arrays, "done"])
        stored = kept.pop("done") & ~done
        arrays = {name: np.where(_expand(stored, values.ndim), kept[name], values)
                  for name, values in arrays.items()}
        done |= stored
    write_region(url, task.index, task.region, arrays, done, token)
    return {**record, "write_s": time.perf_counter() - t1}


def _expand(mask: np.ndarray, ndim: int) -> np.ndarray:
    """``mask`` with trailing axes of length 1 up to ``ndim`` dims (to broadcast)."""
    return mask.reshape(mask.shape + (1,) * (ndim - mask.ndim))


def run_exact(game: Game, task: ExactTask, run_shape: dict, checkpoints: np.ndarray, url: str,
              token: str | None = None) -> dict[str, Any]:
    """Compute the exact answers of one chunk of grid points (NaN where
    none) and write them, then their ``exact_done`` flags.  A game that
    declares what its exact answer depends on (``Game.exact_params``) is
    solved once per distinct set of those values in this process
    (:func:`exact_answer`)."""
    t0, c0, mark = time.perf_counter(), COMPILE_CLOCK.seconds(), COMPILE_CLOCK.count()
    if isinstance(task.cells, Cells) and game.exact is not None and game.exact_params is not None and len(task.cells):
        out, solves, done = exact_columns(game, task, run_shape, checkpoints)
    else:
        out, solves, done = exact_points(game, task, run_shape, checkpoints)
    t1, compile_s = time.perf_counter(), COMPILE_CLOCK.seconds() - c0
    if task.keeps:  # every exact array of the chunk rewritten: its stored points as they are
        kept = kept_cells(url, task.region, [*game.exact_variables, "exact_done"])
        stored = kept.pop("exact_done") & ~done
        out = {name: np.where(_expand(stored, values.ndim), values,
                              out[name] if name in out else np.nan)
               for name, values in kept.items()}
        done |= stored
    write_exact(url, task.index, task.region, out, done, token)
    return {"key": task.key, "kernel_s": t1 - t0 - compile_s, "compile_s": compile_s,
            "compile_spans": COMPILE_CLOCK.spans(mark), "write_s": time.perf_counter() - t1,
            "points": len(task.cells), "solves": solves}


def exact_points(game: Game, task: ExactTask, run_shape: dict,
                  checkpoints: np.ndarray) -> tuple[dict[str, np.ndarray], int, np.ndarray]:
    """(the chunk's exact arrays, solves, the points done), point by point."""
    out: dict[str, np.ndarray] = {}
    lows = tuple(lo for lo, _ in task.bounds)
    solves = 0
    points = tuple(int(c) for c in checkpoints)
    done = np.zeros(task.extent, dtype=bool)
    for index, params in task.cells:
        with at_point(params):
            arrays, solved = exact_answer(game, params, run_shape, checkpoints, points)
        solves += solved
        where = tuple(i - lo for i, lo in zip(index, lows))
        for name, values in arrays.items():
            if name not in out:
                out[name] = np.full(task.extent + np.shape(values), np.nan)
            out[name][where] = values
        blank_unplayed(game, params, out, where)
        done[where] = True
    return out, solves, done


def exact_columns(game: Game, task: ExactTask, run_shape: dict,
                  checkpoints: np.ndarray) -> tuple[dict[str, np.ndarray], int, np.ndarray]:
    """:func:`exact_points` for a game that says what its answer depends on
    (``exact_params``), its points as columns: one :func:`exact_answer` per
    distinct combination of those values in the chunk, copied to its points
    at once; no parameter dict made per point."""
    local, columns = task.cells.columns()
    members = column_groups(np.stack([columns[n][1] for n in game.exact_params], axis=1))[2]
    out: dict[str, np.ndarray] = {}
    solves = 0
    points = tuple(int(c) for c in checkpoints)
    for chosen in members:
        params = {name: values[c[chosen[0]]] for name, (values, c) in columns.items()}
        with at_point(params):
            arrays, solved = exact_answer(game, params, run_shape, checkpoints, points)
        solves += solved
        at = tuple(axis[chosen] for axis in local)
        for name, values in arrays.items():
            if name not in out:
                out[name] = np.full(task.extent + np.shape(values), np.nan)
            out[name][at] = values
    _blank_columns(game, out, local, columns, replicates=False)
    done = np.zeros(task.extent, dtype=bool)
    done[local] = True
    return out, solves, done


#: Exact answers solved in this process, per (game, what the answer depends
#: on, run shape, checkpoints); a game without ``exact_params`` is not kept.
_SOLVED: OrderedDict[tuple, dict[str, np.ndarray]] = OrderedDict()
_SOLVED_MAX = 256
_SOLVING = threading.Lock()


def exact_answer(game: Game, params: dict, run_shape: dict, checkpoints: np.ndarray,
                 points: tuple[int, ...] | None = None) -> tuple[dict[str, np.ndarray], int]:
    """(the checked exact arrays of ``params``, how many solves it took: 0 or 1).

    Where ``game.exact_params`` names what the answer depends on, points
    that agree on those values share one solve per process (worker
    threads share it; a lock keeps two threads from solving one key).
    ``points``: the checkpoints as a tuple, where the caller has made it."""
    if game.exact is None:
        return {}, 0
    key = exact_key(game, params, run_shape, checkpoints if points is None else points)
    if key is None:
        return _solve(game, params, run_shape, checkpoints), 1
    with _SOLVING:
        if key in _SOLVED:
            _SOLVED.move_to_end(key)
            return _SOLVED[key], 0
        arrays = _solve(game, params, run_shape, checkpoints)
        _SOLVED[key] = arrays
        while len(_SOLVED) > _SOLVED_MAX:
            _SOLVED.popitem(last=False)
    return arrays, 1


def _solve(game: Game, params: dict, run_shape: dict, checkpoints: np.ndarray) -> dict[str, np.ndarray]:
    return checked_outputs(game, params, game.exact(params, run_shape, checkpoints), checkpoints, exact=True)


#: A first (compiling) run shorter than this is repeated warm when timing a replicate.
COLD_LIMIT_S = 60.0


def time_replicate(
    game: Game, root: int, points: list[dict], run_shape: dict, checkpoints: np.ndarray, budget: float
) -> float:
    """Seconds one replicate takes on this worker: the largest over ``points``.

    Each point's replicate 0 runs once (compiling the kernel on a fresh
    worker) and then once more warm, whose time counts; when the first run
    took longer than :data:`COLD_LIMIT_S` and twice ``budget`` (so that a
    task of one replicate is right anyway) it is not repeated.  Nothing is
    written.
    """
    worst = 0.0
    for params in points:
        seed = replicate_seed(root, params, 0)
        with at_point(params):
            t0 = time.perf_counter()
            game.simulate(params, seed, run_shape, checkpoints)
            took = time.perf_counter() - t0
            if took < max(COLD_LIMIT_S, 2 * budget):
                t0 = time.perf_counter()
                game.simulate(params, seed, run_shape, checkpoints)
                took = time.perf_counter() - t0
        worst = max(worst, took)
    return worst
