"""Grid x replicates -> tasks, and the seed of every replicate.

A task is one chunk of the store: a block of grid points (``[tasks]
points_per_task``, the last grid axis filled first: :func:`grid_chunks`)
and one block of consecutive replicates.  Seeds never
depend on the task layout: replicate ``r`` at parameter values ``p`` always
gets :func:`replicate_seed` ``(root, p, r)``, whatever the grid position, the
block size, the worker or the submission order.

Exact work, counted once (:func:`exact_tasks`, :func:`exact_solves`,
:func:`answer_counts`): what a sweep plans and what its store holds, four
quantities with one name each (the words every command prints):

* **exact tasks**: the tasks that compute exact answers, one per chunk of
  grid points of the task layout (a run counts those it ran in ``RunReport.exact_run``);
* **exact solves**: the solver's calls those tasks make, one per distinct
  set of the values an exact answer depends on (``Game.exact_params``), so
  points that agree on them share a solve (a run counts those it made in ``RunReport.exact_solves``);
* **exact answers**: one per grid point, in the store: *stored*, *none
  exists* (no single exact answer) or *not computed yet*
  (:func:`answer_counts` of :func:`boardsweep.pipeline.store.metadata.exact_states`);
* **tested points**: the points whose stored exact answer the verdict tests,
  where it applies (a headline's ``exact_unless``): counted by the verdict
  (``tested_points`` of :func:`boardsweep.pipeline.analysis.headlines.verdict`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ...core.seeds import int_words, seed_keys
from ..words import python_value
from ..spec import ResolvedGrid, grid_chunks
from .task_layout import TaskLayout, given

if TYPE_CHECKING:
    from ..spec import Spec  # noqa: F401

__all__ = ["Task", "ExactTask", "Cells", "plan_exact", "SEED_SCHEME", "grid_chunks", "per_chunk", "task_count", "task_shape", "chunk_bounds", "exact_key", "param_words", "replicate_seed", "point_words", "replicate_keys", "plan_tasks",
           "exact_tasks", "exact_solves", "answer_counts", "ANSWER_STATES"]

SEED_SCHEME = (
    "replicate seed = numpy.random.SeedSequence([root_seed, *w, replicate]) where w are the "
    "8 little-endian uint32 words of SHA-256(JSON of the sorted [name, value] pairs of all "
    "game parameters)"
)


class Cells(Sequence):
    """The cells a task computes, each grid point's parameters made when asked.

    Held as the grid (``grid``: a plan's tasks share the whole grid, never
    copied; its index 0 is ``origin`` on the whole grid), the task's chunk
    (``bounds``: ``[lo, hi)`` along each axis of the whole grid), the chunk's
    grid points it computes (``members``: flat indices in the chunk,
    row-major; a ``range`` where it computes them all) and their replicates
    (``rows``: per member, which of the chunk's replicates ``start + j`` to
    run; None for the exact cells, which have none).  Item ``i`` is (index
    on the whole grid, parameter dict, replicates) for simulation, (index,
    parameter dict) for exact answers: the same tuples a tuple of cells
    gives, but nothing is held per grid point, so a plan's memory is a few
    numbers a task, whatever the grid's size.  Pickled (sent to a worker or
    a scheduler), it carries its chunk of the grid only
    (:meth:`ResolvedGrid.chunk`: the task's few values)."""

    def __init__(self, grid: ResolvedGrid, bounds: tuple[tuple[int, int], ...], members: Sequence[int],
                 start: int = 0, rows: np.ndarray | None = None, origin: tuple[int, ...] | None = None) -> None:
        self.grid, self.bounds, self.start = grid, tuple(bounds), start
        self.origin = origin or (0,) * len(self.bounds)
        self.extent = tuple(hi - lo for lo, hi in self.bounds)
        size = int(np.prod(self.extent, dtype=np.int64))
        self.members = range(size) if len(members) == size else members  # sorted and distinct: all of them
        self.rows = rows if rows is None or not rows.all() else np.ones((1, rows.shape[1]), dtype=bool)

    def __reduce__(self):
        """Pickled with the grid cut to the chunk: a worker gets the task's values, not the grid's."""
        inside = tuple((lo - o, hi - o) for (lo, hi), o in zip(self.bounds, self.origin))
        lows = tuple(lo for lo, _ in self.bounds)
        return Cells, (self.grid.chunk(inside), self.bounds, self.members, self.start, self.rows, lows)

    def __len__(self) -> int:
        return len(self.members)

    def __getitem__(self, item):
        if isinstance(item, slice):
            return [self[i] for i in range(*item.indices(len(self)))]
        local = np.unravel_index(int(self.members[item]), self.extent)
        index = tuple(lo + int(k) for (lo, _), k in zip(self.bounds, local))
        _, params = self.grid._point(tuple(i - o for i, o in zip(index, self.origin)))
        if self.rows is None:
            return index, params
        row = self.rows[item if len(self.rows) > 1 else 0]
        return index, params, tuple(int(self.start + r) for r in np.flatnonzero(row))

    def __iter__(self) -> Iterator[tuple]:
        return (self[i] for i in range(len(self)))

    def columns(self) -> tuple[tuple[np.ndarray, ...], dict[str, tuple[tuple, np.ndarray]]]:
        """The computed points as columns, no parameter dict made: (each
        point's index in the chunk along each grid axis, and per parameter
        its distinct values in the chunk with each point's index into them).
        Point ``i`` is item ``i``'s grid point."""
        members = np.asarray(self.members, dtype=np.int64)
        local = np.unravel_index(members, self.extent) if self.extent else ()  # a grid of no axes: one point
        grid, axes = self.grid, dict(zip(self.grid.axes, range(len(self.grid.axes))))
        columns = {}
        for name, value in grid.base.items():
            if name in axes:
                k = axes[name]
                lo, hi = (b - self.origin[k] for b in self.bounds[k])
                columns[name] = (tuple(grid.axis_values[name][lo:hi]), local[k])
            else:
                columns[name] = ((value,), np.zeros(len(self), dtype=np.int64))
        return tuple(local), columns

    def replicates(self) -> tuple[np.ndarray, np.ndarray]:
        """(each run's point, each run's replicate): the cells as runs, point by point."""
        if self.rows is None:
            raise ValueError("exact cells have no replicates")
        if len(self.rows) == 1:
            idx = np.flatnonzero(self.rows[0])
            return np.repeat(np.arange(len(self)), idx.size), np.tile(idx, len(self)) + self.start
        point, j = np.nonzero(np.asarray(self.rows)[:len(self)])
        return point, j + self.start

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class Task:
    """One chunk of the store: a block of grid points x a block of replicates.

    ``index``: the chunk's coordinates along the grid axes (a grid point's
    index divided by the layout's ``grid_chunks``); ``start``/``stop``: its
    replicates ``[start, stop)``, the whole chunk's; ``cells``: what the
    task computes, per grid point (index, parameters, replicates; a
    :class:`Cells` where planned, which makes each dict when read), every
    other cell of the chunk being either stored already (read back and
    written again unchanged) or not wanted yet (left missing).
    """

    index: tuple[int, ...]
    start: int
    stop: int
    cells: Sequence[tuple[tuple[int, ...], dict[str, Any], tuple[int, ...]]]
    bounds: tuple[tuple[int, int], ...] = ()  # the chunk's [lo, hi) along each grid axis
    keeps: bool = False  # some cells of the chunk are stored already

    @property
    def key(self) -> str:
        return "-".join(map(str, self.index)) + f"-r{self.start}"

    @property
    def params(self) -> dict[str, Any]:
        """The parameters of the task's first grid point (for messages)."""
        return self.cells[0][1]

    @property
    def runs(self) -> int:
        """Replicates the task simulates (a planned task's counted from its rows, no point made)."""
        cells = self.cells
        if isinstance(cells, Cells) and cells.rows is not None:
            rows = np.asarray(cells.rows)
            return int(rows[0].sum()) * len(cells) if len(rows) == 1 else int(rows[:len(cells)].sum())
        return sum(len(reps) for _, _, reps in cells)

    @property
    def region(self) -> tuple[slice, ...]:
        """The chunk's slices: grid axes (cut at the grid's edge), then replicates."""
        return (*(slice(lo, hi) for lo, hi in self.bounds), slice(self.start, self.stop))

    @property
    def extent(self) -> tuple[int, ...]:
        """The chunk's cells along the grid axes and replicates."""
        return (*(hi - lo for lo, hi in self.bounds), self.stop - self.start)


@dataclass(frozen=True)
class ExactTask:
    """The exact answers of one chunk of grid points: ``cells`` (index,
    parameters) are solved, the chunk's other points are stored already
    (:attr:`keeps`) or outside the grid."""

    index: tuple[int, ...]
    cells: Sequence[tuple[tuple[int, ...], dict[str, Any]]]
    bounds: tuple[tuple[int, int], ...] = ()
    keeps: bool = False

    @property
    def key(self) -> str:
        return "exact-" + "-".join(map(str, self.index))

    @property
    def params(self) -> dict[str, Any]:
        return self.cells[0][1]

    @property
    def region(self) -> tuple[slice, ...]:
        return tuple(slice(lo, hi) for lo, hi in self.bounds)

    @property
    def extent(self) -> tuple[int, ...]:
        return tuple(hi - lo for lo, hi in self.bounds)


def plan_exact(spec: Spec, exact_done: np.ndarray | None = None, *, layout: TaskLayout | None = None) -> list[ExactTask]:
    """The chunks of grid points (``layout``'s; the spec's own where None,
    :func:`.task_layout.given`) with an exact answer still to compute."""
    shape, chunks = spec.shape, (layout or given(spec)).grid_chunks
    todo = np.ones(shape, dtype=bool) if exact_done is None else ~np.asarray(exact_done, dtype=bool)
    grid = spec.resolved_points()
    tasks = []
    for index in map(tuple, np.argwhere(per_chunk(todo, chunks))):
        bounds = chunk_bounds(index, chunks, shape)
        part = todo[tuple(slice(lo, hi) for lo, hi in bounds)].ravel()
        members = np.flatnonzero(part).astype(np.int32)
        cells = Cells(grid, bounds, members)
        tasks.append(ExactTask(tuple(int(i) for i in index), cells, bounds, len(members) < part.size))
    return tasks


def chunk_bounds(index: tuple[int, ...], chunks: tuple[int, ...],
                 shape: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """``[lo, hi)`` along each grid axis of the task chunk at grid
    coordinates ``index`` (``chunks`` points per task; cut at the grid's edge)."""
    return tuple((int(c) * g, min((int(c) + 1) * g, n)) for c, g, n in zip(index, chunks, shape))


def exact_key(game, params: Mapping[str, Any], run_shape: Mapping[str, int],
              checkpoints: np.ndarray | tuple) -> tuple | None:
    """What identifies the exact answer of ``params`` (``None`` where the
    game does not say what it depends on: every point is its own).  Values
    are kept with their type, as the seeds keep them (``6`` is not ``6.0``)."""
    if game.exact_params is None:
        return None
    values = tuple((k, type(v).__name__, v if _hashable(v) else json.dumps(python_value(v), sort_keys=True))
                   for k, v in ((k, params[k]) for k in game.exact_params))
    return (game.name, values, tuple(sorted(run_shape.items())), tuple(int(c) for c in checkpoints))


def _hashable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool, type(None)))


def task_shape(target_s: float, replicate_s: float, replicates: int, points: int) -> tuple[int, int]:
    """(replicates, grid points) per task for tasks of about ``target_s``
    seconds when one replicate takes ``replicate_s``: as many replicates as
    fit (at least one); where all of a point's fit, as many points as fit."""
    each = max(replicate_s, 1e-9)
    block = max(1, min(replicates, int(target_s // each)))
    if block < replicates:
        return block, 1
    return block, max(1, min(points, int(target_s // (each * replicates))))


def task_count(spec: Spec, layout: TaskLayout | None = None) -> int:
    """Simulation tasks of a whole sweep laid out as ``layout`` (the spec's
    own where None): :math:`\\prod_a \\lceil n_a / g_a \\rceil` grid chunks x
    :math:`\\lceil S / b \\rceil` replicate blocks."""
    layout = layout or given(spec)
    chunks = 1
    for n, g in zip(spec.shape, layout.grid_chunks):
        chunks *= -(-n // g)
    return chunks * layout.blocks(spec.slots)


def param_words(params: Mapping[str, Any]) -> list[int]:
    """Canonical encoding of parameter values as eight 32-bit integers.

    JSON keeps types apart (``6``, ``6.0`` and ``"6"`` differ); sorting by name
    makes the encoding independent of the order parameters are listed in.
    """
    pairs = sorted((str(k), python_value(v)) for k, v in params.items())
    digest = hashlib.sha256(json.dumps(pairs, separators=(",", ":")).encode()).digest()
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 32, 4)]


def replicate_seed(root: int, params: Mapping[str, Any], replicate: int) -> np.random.SeedSequence:
    """The SeedSequence of one replicate (see :data:`SEED_SCHEME`)."""
    return np.random.SeedSequence([int(root), *param_words(params), int(replicate)])


def point_words(columns: Mapping[str, tuple[Sequence[Any], np.ndarray]]) -> np.ndarray:
    """:func:`param_words` of every point of a block at once, bit for bit.

    ``columns``: per parameter, (its distinct values, each point's index
    into them).  A pair's JSON is made once per distinct value; a point's
    text is its pairs' joined in name order, as :func:`param_words` writes
    them, and its SHA-256 the one step made per point.

    Returns
    -------
    ndarray
        uint32 (points, 8): each point's words.
    """
    text = None
    for i, name in enumerate(sorted(columns, key=str)):
        values, codes = columns[name]
        pairs = [("[" if i == 0 else ",") + json.dumps([str(name), python_value(v)], separators=(",", ":"))
                 for v in values]
        part = np.array(pairs, dtype=object)[np.asarray(codes, dtype=np.intp)]
        text = part if text is None else text + part
    if text is None:
        raise ValueError("point_words: a block without parameters")
    digests = b"".join(hashlib.sha256((t + "]").encode()).digest() for t in text)
    return np.frombuffer(digests, dtype="<u4").reshape(-1, 8).astype(np.uint32)


def replicate_keys(root: int, words: np.ndarray, replicates: np.ndarray) -> np.ndarray:
    """``seed_key(replicate_seed(root, p, r))`` of every run at once, bit for
    bit: the entropy ``[root, *words(p), r]`` of each run mixed as
    SeedSequence mixes it (:func:`boardsweep.core.rng.seed_keys`).

    Parameters
    ----------
    root : int
        The sweep's root seed.
    words : ndarray
        uint32 (runs, 8): each run's point's :func:`param_words`.
    replicates : ndarray
        Each run's replicate, ``0 <= r < 2^32``.

    Returns
    -------
    ndarray
        uint64 (runs, 2).
    """
    reps = np.asarray(replicates, dtype=np.int64).reshape(-1)
    if reps.size and (reps.min() < 0 or reps.max() >= 2 ** 32):
        raise ValueError("replicate_keys: replicates must be in [0, 2^32)")
    head = np.array(int_words(int(root)), dtype=np.uint32)
    entropy = np.concatenate([np.broadcast_to(head, (reps.size, head.size)), np.asarray(words, dtype=np.uint32),
                              reps[:, None].astype(np.uint32)], axis=1)
    return seed_keys(entropy)


def plan_tasks(spec: Spec, done: np.ndarray | None = None, wanted: np.ndarray | None = None, *,
               layout: TaskLayout | None = None) -> list[Task]:
    """Tasks still to run: every chunk (of ``layout``: the run's, decided
    once; the spec's own where None) with a wanted cell not marked in ``done``.

    ``done`` has shape ``spec.shape + (spec.slots,)`` (``None``: nothing is
    done yet); ``wanted`` (shape ``spec.shape``) the replicates wanted per
    grid point (default ``spec.replicates``).  A chunk's cells that are done
    are kept (:attr:`Task.keeps`); its task computes the others that are
    wanted.  Tasks come in chunk order along the grid (row-major), then
    block order.  Linear in the number of cells.
    """
    layout = layout or given(spec)
    shape, slots, block, chunks = spec.shape, spec.slots, layout.block, layout.grid_chunks
    if wanted is None:  # every point's first replicates: no per-point count (80 MB at 10^7 points)
        todo = np.zeros((*shape, slots), dtype=bool)
        todo[..., :spec.replicates] = True
    else:
        todo = np.arange(slots) < np.asarray(wanted)[..., None]
    stored = np.zeros(todo.shape, dtype=bool) if done is None else np.asarray(done, dtype=bool)
    todo &= ~stored
    grid = spec.resolved_points()
    tasks = []
    for *index, b in map(tuple, np.argwhere(per_chunk(todo, chunks, block))):  # row-major: chunks, then blocks
        bounds = chunk_bounds(index, chunks, shape)
        start = int(b) * block
        stop = min(start + block, slots)
        region = (*(slice(lo, hi) for lo, hi in bounds), slice(start, stop))
        part = todo[region].reshape(-1, stop - start)  # the chunk's points in row-major order
        members = np.flatnonzero(part.any(axis=1)).astype(np.int32)
        cells = Cells(grid, bounds, members, start, part[members])
        tasks.append(Task(tuple(int(i) for i in index), start, stop, cells, bounds, bool(stored[region].any())))
    return tasks


def per_chunk(cells: np.ndarray, chunks: tuple[int, ...], block: int | None = None) -> np.ndarray:
    """Whether any of ``cells`` (grid dims, then replicates) is set, per
    chunk of ``chunks`` grid points x ``block`` replicates (no replicate dim
    where ``block`` is ``None``)."""
    sizes = [*chunks] + ([] if block is None else [block])
    if not sizes:  # a sweep of one grid point: its one exact flag
        return np.asarray(cells, dtype=bool)
    counts = [-(-n // g) for n, g in zip(cells.shape, sizes)]
    padded = np.pad(cells, [(0, c * g - n) for n, g, c in zip(cells.shape, sizes, counts)])
    split = [k for c, g in zip(counts, sizes) for k in (c, g)]
    return padded.reshape(split).any(axis=tuple(range(1, 2 * len(sizes), 2)))


#: The states of a grid point's exact answer (:func:`metadata.exact_states`), in the order they are told.
ANSWER_STATES = ("stored", "none", "pending")


def exact_tasks(spec: Spec, layout: TaskLayout | None = None) -> int:
    """Exact tasks of a whole sweep: one per chunk of ``layout``'s grid
    points (the spec's own where None), prod over axes of ceil(points /
    points per task) (every point's exact answer is computed, or marked done
    where the game has no solver)."""
    chunks = 1
    for n, g in zip(spec.shape, (layout or given(spec)).grid_chunks):
        chunks *= -(-n // g)
    return chunks


def exact_solves(spec: Spec) -> int:
    """Exact solves a whole sweep needs: one per distinct set of the values
    its exact answer depends on (``Game.exact_params``), else one per point."""
    game = spec.game
    if game.exact is None:
        return 0
    if game.exact_params is None:
        return len(spec.resolved_points())
    checkpoints = tuple(int(c) for c in spec.checkpoints)
    combinations = spec.resolved_points().combinations(game.exact_params)  # the key reads nothing else
    return len({exact_key(game, params, spec.run_shape, checkpoints) for params in combinations})


def answer_counts(states: np.ndarray) -> dict[str, int]:
    """Grid points per exact answer state: {``stored``, ``none``, ``pending``: count}
    of the states :func:`metadata.exact_states` reads."""
    states = np.asarray(states, dtype=object)
    return {state: int((states == state).sum()) for state in ANSWER_STATES}
