"""The headline answers and the verdict of a large grid, block by block.

:func:`headlines.estimates` holds about a dozen float arrays of grid points x
labels per headline (some 5 KB a grid point for the money game: GBs at 10^6
points).  Here the store is read and estimated one block of grid points at
a time (:func:`grid_blocks`: consecutive points in grid order, at most
:data:`BLOCK_POINTS`), and what the verdict needs is kept per test as
floats: its raw p, and for the power its s.e. and df.

Holm over the whole family needs only the p-values: with p_(1) <= ... <=
p_(m), the adjusted p of p_(k) is max_{j <= k} min(1, (m - j + 1) p_(j)), a
non-decreasing function of the raw p, so a grid point's worst adjusted p is
that of its smallest raw p, and a test can be rejected at ``alpha`` only if
its raw p is below ``alpha`` (the only rows kept with their labels).

Each block's tests (:func:`block_tests`: its estimates without intervals,
which no test reads) are made in a thread of their own
(:data:`VERDICT_THREADS` at a time), or by a run's workers once it has packed the store (:func:`verdict_on_workers`,
each block a task where it is read); the client keeps what the family needs
of each, in grid order: the same verdict, bit for bit, however made.

:func:`run_overview` is what the run's summary prints from: the verdict over
every block, and the estimates of the few points shown, as
:func:`headlines.verdict` and :func:`headlines.estimates` give them.  A
packed store keeps its verdict once computed (:func:`kept_verdict`; the
store's :mod:`~boardsweep.pipeline.store.kept`): a run with nothing to do
and ``query --summary`` read it back instead of every cell.
"""

from __future__ import annotations

import collections
import concurrent.futures
import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import dask
import numpy as np
import pandas as pd
import xarray as xr

from ...core import stats
from ...core.games import Game
from ..store import code_revision, keep_summary, open_sweep, read_summary, summary_key
from ..words import count
from . import headlines
from .dataset import game_of, grid_points_at, grid_size, use_game

__all__ = ["BLOCK_POINTS", "ROW_BLOCK_POINTS", "KEPT_SCHEME", "grid_blocks", "block_chunks", "block_verdict", "block_tests",
           "block_tests_at", "verdict_on_workers", "VERDICT_THREADS", "kept_verdict",
           "run_overview", "shown_overview", "block_rows"]

#: Grid points estimated at once (about 250 MB of the money game's estimates;
#: each block pays xarray's fixed costs, some 0.2 s, once per headline).
BLOCK_POINTS = 50_000
#: Grid points whose every row ``query --summary --all`` holds at once (the
#: money game: about 30 rows a point, some 60 MB of table).
ROW_BLOCK_POINTS = 2_000
#: Blocks the verdict tests at once in this process (:func:`block_verdict`), each in a thread.
#: One: two were no faster on a loaded 2-core machine (60.9 s against 58.1 s at 10^6 points), and
#: threads race on Python's warning filters (xarray's catch_warnings): a stray numpy warning may print.
VERDICT_THREADS = 1
#: What a kept verdict is (:func:`kept_verdict`): a new one where :func:`block_verdict` changes what it gives.
KEPT_SCHEME = "block_verdict/1"


def grid_blocks(shape: tuple[int, ...], most: int = BLOCK_POINTS) -> Iterator[tuple[int, tuple[slice, ...]]]:
    """(offset, region) of consecutive blocks of at most ``most`` grid points
    covering the grid in order: each block is a slice of one axis ``k`` (the
    first whose later axes hold at most ``most`` points) at one index of
    every earlier axis, whole along the later ones, so its points are the
    flat indices ``[offset, offset + size)``."""
    if not shape:
        yield 0, ()
        return
    k = next(a for a in range(len(shape)) if math.prod(shape[a + 1:]) <= most)
    inner = math.prod(shape[k + 1:])
    step = max(1, most // max(inner, 1))
    for outer in np.ndindex(*shape[:k]):
        for lo in range(0, shape[k], step):
            offset = int(np.ravel_multi_index((*outer, lo), shape[:k + 1])) * inner
            region = (*(slice(i, i + 1) for i in outer), slice(lo, min(lo + step, shape[k])))
            yield offset, region + (slice(None),) * (len(shape) - k - 1)


def block_chunks(ds: xr.Dataset, most: int = BLOCK_POINTS) -> dict[str, int]:
    """Dask chunks along the grid axes of ``ds`` that hold one block of
    :func:`grid_blocks` each ({axis: size}, ``open_sweep``'s ``chunks``): a
    store opened so reads each block once, not a larger chunk per block."""
    axes = list(ds.attrs.get("grid_axes", []))
    _, region = next(grid_blocks(tuple(ds.sizes[a] for a in axes), most))
    return {a: (ds.sizes[a] if r.stop is None else r.stop - r.start) for a, r in zip(axes, region)}


#: The columns of the tests :func:`headlines.power` reads (the weakest test's point and label named).
_POWER_COLUMNS = ["point", "headline", "label", "test", "se", "df", "se_df", "skew_a", "known_se"]


@dataclass
class _Family:
    """What the verdict keeps of the tests, block after block."""

    points: int
    p: list[np.ndarray] = field(default_factory=list)
    power: list[pd.DataFrame] = field(default_factory=list)  # point, headline, label, test, se, df: what power() reads
    kinds: dict[str, xr.Dataset] = field(default_factory=dict)  # each headline's attributes (bounded or not)
    candidates: list[pd.DataFrame] = field(default_factory=list)  # each point's smallest p, where below alpha
    worst: pd.Series | None = None
    tested: int = 0
    no_se: int = 0
    void: dict[str, tuple[int, str]] = field(default_factory=dict)

    def add(self, part: "_Part", alpha: float) -> None:
        """The tests of one block (:func:`block_tests`), after those of the blocks before it."""
        table = part.table
        for name, attrs in part.kinds.items():
            self.kinds.setdefault(name, xr.Dataset(attrs=attrs))
            if attrs.get("exact_void"):
                before = self.void.get(name, (0, ""))[0]
                self.void[name] = (before + int(attrs["exact_void"]), attrs["exact_void_text"])
        self.tested += part.tested
        self.no_se += part.no_se
        if not len(table):
            return
        self.p.append(table["p"].to_numpy(np.float64))
        self.power.append(table[_POWER_COLUMNS])
        smallest = table.sort_values("p", kind="stable").drop_duplicates("point")
        if self.worst is None or smallest["p"].iloc[0] < self.worst["p"]:
            self.worst = smallest.iloc[0]
        self.candidates.append(smallest[smallest["p"] < alpha])


@dataclass
class _Part:
    """One block's tests (:func:`block_tests`): the rows (points in the whole
    grid's flat order), each headline's attributes, the points tested and
    those with an exact answer but no s.e."""

    table: pd.DataFrame
    kinds: dict[str, dict]
    tested: int
    no_se: int


def block_tests(ds: xr.Dataset, axes: list[str], offset: int, region: tuple[slice, ...]) -> _Part:
    """The tests of one block of ``ds`` (:func:`grid_blocks`' ``offset`` and
    ``region``), read and estimated without intervals, the grid axes'
    indexes dropped (xarray compares a 50,000-label index at every
    operation otherwise; nothing here selects by label): what
    :func:`block_verdict` keeps of a block, computed in a thread of its own."""
    with np.errstate(divide="ignore", invalid="ignore"):
        block = ds.isel(dict(zip(axes, region))).load(scheduler="synchronous")  # in this thread, a worker's too
        block = block.drop_indexes([a for a in axes if a in block.xindexes])
        found = headlines.estimates(block, intervals=False)  # the tests need no interval
        table = headlines.tests(block, found, spread=True, known=True)
        tested = np.unique(table["point"].to_numpy(np.int64))
        exact = np.fromiter(headlines.points_with_exact(block, found), dtype=np.int64)
    table["point"] += offset
    return _Part(table, {name: dict(est.attrs) for name, est in found.items()}, len(tested),
                 len(np.setdiff1d(exact, tested)))


@functools.lru_cache(maxsize=2)
def _opened(url: str, key: str, most: int) -> xr.Dataset:
    """The store at ``url`` opened lazily, a dask chunk a block of ``most``
    points (as the summary reads a large grid: each block read once, never
    the whole store), once per worker for the store as ``key`` (its kept
    summary's key) is."""
    return open_sweep(url, check=False, chunks=block_chunks(open_sweep(url, check=False), most))


def block_tests_at(url: str, key: str, most: int, axes: list[str], offset: int,
                   region: tuple[slice, ...], game: Game | None = None) -> _Part:
    """:func:`block_tests` of one block of the store at ``url`` (its kept
    summary's ``key``; blocks of ``most`` points), read by the worker that
    runs it (:func:`verdict_on_workers`), the store's ``game`` as the client
    found it (its exact answers: a worker process need not have it registered)."""
    if game is not None:
        use_game(game)
    return block_tests(_opened(url, key, most), axes, offset, region)


def _tested_blocks(ds: xr.Dataset, axes: list[str], shape: tuple[int, ...], most: int,
                   threads: int) -> Iterator[_Part]:
    """:func:`block_tests` of every block in grid order, ``threads`` at a
    time (at most twice that many blocks' tables waiting to be taken)."""
    with concurrent.futures.ThreadPoolExecutor(threads, thread_name_prefix="boardsweep-verdict") as pool:
        waiting: collections.deque = collections.deque()
        for offset, region in grid_blocks(shape, most):
            waiting.append(pool.submit(block_tests, ds, axes, offset, region))
            if len(waiting) >= 2 * threads:
                yield waiting.popleft().result()
        while waiting:
            yield waiting.popleft().result()


def _holm_of(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted raw p, their Holm-adjusted p): the adjusted p of any raw p of
    the family is that of its rank in the first array (:func:`stats.holm`)."""
    ordered = np.sort(p, kind="stable")
    return ordered, stats.holm(ordered)


def holm_adjusted(raw: np.ndarray, ordered: np.ndarray, adjusted: np.ndarray) -> np.ndarray:
    """The Holm-adjusted p of each ``raw`` p of the family."""
    if not len(ordered):
        return np.full(len(raw), np.nan)
    return adjusted[np.minimum(np.searchsorted(ordered, raw, side="left"), len(ordered) - 1)]


def block_verdict(ds: xr.Dataset, alpha: float = headlines.ALPHA, most: int = BLOCK_POINTS,
                  parts: Callable[..., Iterator[_Part]] | None = None) -> dict[str, Any]:
    """:func:`headlines.verdict` of ``ds`` (lazy: each block is read when
    estimated), in memory of one block of ``most`` grid points and a few
    floats per test.  The same keys, except ``point_agree`` (not made) and
    ``p_holm`` (no rows: :func:`run_overview` gives the shown points').
    ``parts(axes, shape, most)``: the blocks' tests in grid order, made
    elsewhere (:func:`verdict_on_workers`); else here, in threads."""
    axes = list(ds.attrs.get("grid_axes", []))
    shape = tuple(ds.sizes[a] for a in axes)
    family = _Family(math.prod(shape))
    tested = (parts(axes, shape, most) if parts is not None
              else _tested_blocks(ds, axes, shape, most, VERDICT_THREADS))
    for part in tested:
        family.add(part, alpha)
    p = np.concatenate(family.p) if family.p else np.zeros(0)
    ordered, adjusted = _holm_of(p)
    out: dict[str, Any] = {"alpha": alpha, "tests": int(len(p)), "points": family.points,
                           "tested_points": family.tested, "holm": (ordered, adjusted)}
    table = pd.concat(family.power, ignore_index=True) if family.power else pd.DataFrame(columns=_POWER_COLUMNS)
    out["power"] = headlines.power(table, alpha, found=family.kinds, ds=ds)
    flagged = pd.concat(family.candidates, ignore_index=True) if family.candidates else pd.DataFrame()
    if len(flagged):
        flagged["p_holm"] = holm_adjusted(flagged["p"].to_numpy(), ordered, adjusted)
        flagged = flagged[flagged["p_holm"] < alpha].sort_values(["p_holm", "p"], kind="stable")
    out["agree"] = family.tested - len(flagged)
    void = "".join(f"; {text} ({count(n, 'point')})" for n, text in family.void.values())
    if not family.tested:
        with_exact = family.no_se
        out.update(min_p_holm=None, min_p=None, at=None, flagged=[], flagged_points=[],
                   text="nothing to test: " + (headlines.no_se_text(with_exact, family.points) if with_exact
                                               else f"no grid point has an exact answer "
                                                    f"({count(family.points, 'point')})") + void)
        return out
    _worst(ds, family.worst, flagged, (ordered, adjusted), out)
    out["text"] = headlines.verdict_text(out, p, alpha) + _untested(family) + void
    return out


def _worst(ds: xr.Dataset, worst: pd.Series, flagged: pd.DataFrame, holm, out: dict[str, Any]) -> None:
    """The smallest p (``min_p_holm``, ``min_p``, ``at``) and the points that
    disagree, worst first (``flagged_points``, ``flagged``), as the verdict says them."""
    where = headlines.where_text(grid_points_at(ds, [int(worst["point"])])[0])
    out["min_p_holm"] = float(holm_adjusted(np.array([worst["p"]]), *holm)[0])
    out["min_p"] = float(worst["p"])
    out["at"] = {"point": where, "headline": worst["headline"], "label": worst["label"]}
    out["flagged_points"] = [int(i) for i in flagged["point"]] if len(flagged) else []
    out["flagged"] = [{"point": headlines.where_text(point), "headline": r.headline, "label": r.label,
                       "test": r.test, "statistic": r.statistic, "p_holm": r.p_holm}
                      for r, point in zip(flagged.itertuples(), grid_points_at(ds, out["flagged_points"]))]


def _untested(family: _Family) -> str:
    """The points not tested, and why (:func:`headlines._untested_text`, from counts)."""
    text = ""
    if family.no_se:
        text += "; " + headlines.no_se_text(family.no_se, family.points)
    untested = family.points - family.tested - family.no_se
    if untested:
        text += f"; {count(untested, 'point')} not tested (no exact answer applies)"
    return text


def kept_verdict(ds: xr.Dataset, url: str | None = None, most: int = BLOCK_POINTS,
                 parts: Callable[..., Iterator[_Part]] | None = None) -> dict[str, Any]:
    """:func:`block_verdict` of ``ds``, the store at ``url``: read back where
    the store keeps it under its present key (:func:`store.summary_key`),
    else computed and kept there where the store is packed (the family's
    sorted p-values kept beside it; their Holm-adjusted ones made again)."""
    depends = f"{KEPT_SCHEME} boardsweep {code_revision()} alpha {headlines.ALPHA}" if url is not None else ""
    key = summary_key(url, depends) if url is not None else None
    found = read_summary(url, key) if key is not None else None
    if found is not None:
        kept, ordered = found
        return {**kept, "holm": (ordered, stats.holm(ordered))}
    verdict = block_verdict(ds, most=most, parts=parts)
    if key is not None and summary_key(url, depends) == key:  # the store did not change meanwhile
        keep_summary(url, key, {k: v for k, v in verdict.items() if k != "holm"}, verdict["holm"][0])
    return verdict


def verdict_on_workers(url: str, client, most: int | None = None) -> bool:
    """The verdict of the complete, packed store at ``url`` made by the
    workers of the Dask ``client`` (each block's tests a task,
    :func:`block_tests_at`, where the block is read; the client merges their
    p-values and counts in grid order) and kept in the store
    (:func:`kept_verdict`): what the run's summary then reads back, twice
    as many blocks' tables as workers held at once (one where the workers
    are threads of this process).  False (nothing done) where the store
    keeps no summary (not packed whole), or where its grid is one block of
    ``most`` points (:data:`BLOCK_POINTS`): the summary's own verdict then
    costs less than sending it (a warm quickstart: 0.15-0.25 s)."""
    most = most or BLOCK_POINTS
    depends = f"{KEPT_SCHEME} boardsweep {code_revision()} alpha {headlines.ALPHA}"
    key = summary_key(url, depends)
    if key is None:
        return False

    if grid_size(open_sweep(url, check=False)) <= most:  # declined on one plain open: no block chunks made
        return False
    opened = _opened(url, key, most)
    game = game_of(opened)  # the workers test against this process's game, registered here or installed
    workers = list(client.scheduler_info().get("workers", {}))
    # blocks' tables held at once; one block at a time where the workers are threads of this process
    # (they would race on the warning filters, and share its cores and memory: VERDICT_THREADS)
    window = 1 if all(w.startswith("inproc://") for w in workers) else 2 * max(1, len(workers))

    def parts(axes: list[str], shape: tuple[int, ...], most: int) -> Iterator[_Part]:
        waiting: collections.deque = collections.deque()
        for offset, region in grid_blocks(shape, most):
            waiting.append(client.submit(block_tests_at, url, key, most, axes, offset, region, game, pure=False))
            if len(waiting) >= window:
                yield _taken(waiting.popleft())
        while waiting:
            yield _taken(waiting.popleft())

    kept_verdict(opened, url, most, parts)  # its blocks read by the workers, not here
    return True


def _taken(future) -> _Part:
    """A finished block's tests, its future released (the worker forgets them)."""
    part = future.result()
    future.release()
    return part


@dataclass
class Overview:
    """What the run's summary prints: the shown points' store (``ds``: the
    grid cut to the values of the points shown), their estimates
    (``found``), the verdict over the whole grid with its tests at the points
    shown (``verdict``; points are indices into ``ds``'s grid) and the
    whole grid's size (``points``)."""

    ds: xr.Dataset
    found: dict[str, xr.Dataset]
    verdict: dict[str, Any]
    points: int


def run_overview(ds: xr.Dataset, rows: int, shown_points: Callable[[dict, int, int], list[int]],
                 most: int = BLOCK_POINTS, url: str | None = None) -> Overview:
    """The verdict of ``ds`` block by block (kept in the store at ``url``:
    :func:`kept_verdict`), and the estimates of at most ``rows`` points to
    show, ``shown_points(verdict, points, rows)`` (flat indices:
    :func:`boardsweep.pipeline.views.overview.shown_points`), with their
    tests' Holm-adjusted p over the whole family."""
    verdict = kept_verdict(ds, url, most)
    picked = shown_points(verdict, verdict["points"], min(verdict["points"], rows))
    return shown_overview(ds, verdict, picked, rows)


def shown_overview(ds: xr.Dataset, verdict: dict[str, Any], picked: list[int], rows: int) -> Overview:
    """The grid of ``ds`` cut to the values of the points ``picked`` (flat
    indices), read, with its estimates and its tests' Holm-adjusted p over
    the whole family of ``verdict`` (:func:`block_verdict`; its ``holm``
    taken out), and its first ``rows`` flagged points (each in the cut grid)."""
    axes = list(ds.attrs.get("grid_axes", []))
    shape = tuple(ds.sizes[a] for a in axes)
    where = np.unravel_index(np.asarray(picked, dtype=np.int64), shape) if axes else ()
    keep = [np.unique(w) for w in where]
    with dask.config.set(scheduler="synchronous"):
        sub = ds.isel({a: k for a, k in zip(axes, keep)}).load()
    sub_shape = tuple(len(k) for k in keep)

    def inside(points) -> list[int]:  # whole-grid flat indices -> the cut grid's
        idx = np.unravel_index(np.asarray(points, dtype=np.int64), shape) if axes else ()
        return np.ravel_multi_index([np.searchsorted(k, i) for k, i in zip(keep, idx)], sub_shape).tolist() \
            if axes else [0] * len(points)

    with np.errstate(divide="ignore", invalid="ignore"):
        found = headlines.estimates(sub)
    table = headlines.tests(sub, found)
    table["p_holm"] = holm_adjusted(table["p"].to_numpy(np.float64), *verdict.pop("holm"))
    verdict.update(p_holm=table, flagged_points=inside(verdict["flagged_points"][:rows]))
    return Overview(sub, found, verdict, verdict["points"])


def block_rows(ds: xr.Dataset, checkpoint: int = -1, level: float = headlines.LEVEL,
               most: int = BLOCK_POINTS) -> pd.DataFrame:
    """:func:`headlines.summary` of ``ds`` (lazy: each block is read when
    estimated), in the memory of one block of ``most`` grid points and the
    table: the blocks' rows in the whole table's order (headline after
    headline, each in grid order)."""
    axes = list(ds.attrs.get("grid_axes", []))
    shape = tuple(ds.sizes[a] for a in axes)
    if math.prod(shape) <= most:
        return headlines.summary(ds, checkpoint, level)
    tables = []
    with np.errstate(divide="ignore", invalid="ignore"), dask.config.set(scheduler="synchronous"):
        for _, region in grid_blocks(shape, most):
            tables.append(headlines.summary(ds.isel(dict(zip(axes, region))).load(), checkpoint, level))
    table = pd.concat([t for t in tables if len(t)] or tables[:1], ignore_index=True)
    order = {name: i for i, name in enumerate(dict.fromkeys(table["headline"]))} if len(table) else {}
    return table.sort_values("headline", key=lambda h: h.map(order), kind="stable", ignore_index=True)
