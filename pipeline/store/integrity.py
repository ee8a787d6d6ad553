"""Integrity of a sweep store: what each task wrote, and whether it is still there.

A cell is *done* only when its flag is set **and** its data is present and
readable.  Each task records, after its data and its done flags, a small JSON
manifest: the zarr chunk keys it wrote with the size and CRC-32 of each chunk
file (``None`` for a chunk zarr did not write because it held only fill
values).  Checking a store reads each finished task's chunk files as raw
bytes (no decompression) and compares; a missing manifest, a missing,
truncated or altered chunk makes the task's cells *damaged*.  ``run`` clears
the done flags of damaged cells and recomputes them (seeds are keyed, so the
repair is bit-identical); ``status`` names them; ``query``, ``report`` and
:func:`boardsweep.pipeline.store.open.open_sweep` refuse a damaged store in one line.

Before the cells, a store's labels are checked: every coordinate's values
(grid axes, ``replicate``, ``checkpoint``, the game's labels) must be those
its recorded spec implies (:func:`.identity.check_labels`), or the store is
damaged (``Damage.labels``; ``run`` rewrites them from the spec).  A
manifest is also bound to its sweep and cell (:mod:`.writes`): cells
copied in from another store, even one of the same spec, are damaged.

Manifests live under ``<store>/.boardsweep/manifests/`` (``sim/`` per task
block, ``exact/`` per grid point), beside the zarr arrays; zarr and xarray
ignore the folder.  Stores made before this scheme (no ``integrity``
attribute) are trusted by their done flags alone.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import zarr

from . import layout as packing
from ..errors import StoreDamaged
from .chunkfiles import fingerprint
from .identity import check_format, check_labels, read_attrs
from .layout import store_chunks
from .writes import (INTEGRITY_SCHEME, MANIFEST_DIR, Sweep, chunk_paths, exact_name, grid_region, record, sim_name,
                        sweep_of)
from ..plan import per_chunk
from .metadata import simulated_variables
from .reads import READ_CONCURRENCY, read_mask
from .zarr_private import quiet
from .metadata import recorded_spec
from .storage import Storage, open_storage

__all__ = ["INTEGRITY_SCHEME", "MANIFEST_DIR", "Damage", "record", "check", "read_mask", "describe", "assert_intact", "chunk_paths", "sim_name", "exact_name", "READ_CONCURRENCY"]



@dataclass
class Damage:
    """What a check found: damaged task blocks, exact points and arrays."""

    sim: list[tuple[tuple[int, ...], int]] = field(default_factory=list)  # (index, block start)
    exact: list[tuple[int, ...]] = field(default_factory=list)
    arrays: list[str] = field(default_factory=list)  # arrays whose metadata is missing or unreadable
    labels: dict[str, str] = field(default_factory=dict)  # coordinates that disagree with the spec: why
    reasons: dict[str, str] = field(default_factory=dict)  # first reason per damaged item
    done: np.ndarray | None = None  # the done masks as read by the check (flags, not verified data)
    exact_done: np.ndarray | None = None
    chunks: tuple[int, ...] | None = None  # grid points per task along each axis (None: one)

    def __bool__(self) -> bool:
        return bool(self.sim or self.exact or self.arrays or self.labels)

    def intact(self, block: int) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the ``done`` and ``exact_done`` masks the check read,
        with the damaged cells (task blocks of ``block`` replicates, exact
        points) cleared: what is done and intact."""
        done, exact_done = self.done.copy(), self.exact_done.copy()
        for index, start in self.sim:
            done[grid_region(index, self.chunks, done.shape[:-1]) + (slice(start, start + block),)] = False
        for index in self.exact:
            exact_done[grid_region(index, self.chunks, exact_done.shape)] = False
        return done, exact_done

    def describe(self, axes: list[str], grid: dict[str, list], block: int, limit: int = 4) -> str:
        """The damaged cells by coordinates, e.g. ``dice_sides=6, replicates 0-1 (chunk ... missing)``."""
        items = [f"coordinate {name!r} {why}" for name, why in self.labels.items()]
        items += [f"array {name!r} ({self.reasons.get(name, 'missing')})" for name in self.arrays]
        for index, start in self.sim:
            where = _where(axes, grid, index, self.chunks)
            items.append(f"{where}{', ' if where else ''}replicates {start}-{start + block - 1} "
                         f"({self.reasons.get(sim_name(index, start), '')})")
        for index in self.exact:
            where = _where(axes, grid, index, self.chunks) or "the single grid point"
            items.append(f"{where}, exact answer ({self.reasons.get(exact_name(index), '')})")
        shown = "; ".join(items[:limit])
        more = f"; and {len(items) - limit} more" if len(items) > limit else ""
        return shown + more


def _where(axes: list[str], grid: dict[str, list], index: tuple[int, ...],
           chunks: tuple[int, ...] | None = None) -> str:
    """A task chunk's grid values: ``a=1, b='x'``, or ``a=1..4`` where it spans several."""
    parts = []
    for axis, region in zip(axes, grid_region(index, chunks, tuple(len(grid[a]) for a in axes))):
        values = grid[axis][region]
        parts.append(f"{axis}={values[0]!r}" if len(values) == 1 else f"{axis}={values[0]!r}..{values[-1]!r}")
    return ", ".join(parts)


def check(url: str, attrs: dict[str, Any] | None = None, state: str | None = None,
          coords: dict[str, np.ndarray | None] | None = None) -> Damage:
    """Verify the store's labels against its recorded spec
    (:func:`.identity.check_labels`), then every finished cell of the store
    at ``url`` against its manifest (``attrs``, ``state``, ``coords``: its
    attributes, :func:`.layout.layout` and coordinate values, where the
    caller has read them).  Relabelled coordinates end the check: the cells
    are not looked at until the labels are put right (``run`` does)."""
    with quiet():
        attrs = dict(zarr.open_group(url, mode="r").attrs) if attrs is None else attrs
        check_format(url, attrs)
        damage = Damage()
        files = open_storage(url)
        state = packing.layout(url) if state is None else state
        _check_arrays(url, files, attrs, state, damage)
        if damage.arrays:
            return damage
        damage.labels = check_labels(url, attrs, coords)
        if damage.labels or attrs.get("integrity") != INTEGRITY_SCHEME:
            return damage
        block, chunks = int(attrs["replicates_per_task"]), store_chunks(attrs)
        done, _ = read_mask(None, "done", url)  # the group is opened only if the chunk files cannot be read directly
        exact_done, _ = read_mask(None, "exact_done", url)
        damage.done, damage.exact_done, damage.chunks = done, exact_done, chunks
        if state == "packed":  # the task manifests describe the task-chunked copy, kept aside
            _check_packed(url, attrs, block, damage)
            return damage
        sizes = chunks or (1,) * (done.ndim - 1)
        blocks = {}
        for cell in np.argwhere(per_chunk(done, sizes, block)):  # each task chunk with a finished cell
            index, start = tuple(int(i) for i in cell[:-1]), int(cell[-1]) * block
            blocks[(index, start)] = sim_name(index, start)
        exact = {}
        for cell in np.argwhere(per_chunk(exact_done, sizes)):
            index = tuple(int(i) for i in cell)
            exact[index] = exact_name(index)
        manifests = files.read_many([f"{MANIFEST_DIR}/{n}" for n in [*blocks.values(), *exact.values()]], strict=False)
        sweep = sweep_of(attrs)
        for found, records in ((damage.sim, blocks), (damage.exact, exact)):
            for key, name in records.items():
                task = key if found is damage.sim else (key, None)
                reason = _verify(files, manifests[f"{MANIFEST_DIR}/{name}"], sweep, task)
                if reason:
                    damage.reasons[name] = reason
                    found.append(key)
        return damage


def _check_arrays(url: str, files: Storage, attrs: dict[str, Any], state: str, damage: Damage) -> None:
    """Name in ``damage`` every array whose metadata is missing or unreadable,
    whose layout is not recognised, or the journal of an interrupted change
    of layout (``state``)."""
    sim_names = [*simulated_variables(attrs), "done"]
    exact_names = [*attrs.get("exact_variables", []), "exact_done"]
    arrays = attrs.get("arrays") or [*sim_names, *exact_names]
    metas = files.read_many([f"{name}/zarr.json" for name in arrays], strict=False)
    for name in arrays:
        reason = _metadata_problem(metas[f"{name}/zarr.json"])
        if reason:
            damage.arrays.append(name)
            damage.reasons[name] = reason
    if state == packing.UNKNOWN:
        for name, reason in packing.unrecognised(url).items():
            if name in damage.arrays:  # its metadata is damaged: said once, above
                continue
            damage.arrays.append(name)
            damage.reasons[name] = reason
    elif state not in ("tasks", "packed"):
        damage.arrays.append(packing.JOURNAL)
        damage.reasons[packing.JOURNAL] = (f"a change of the store's layout was interrupted ({state}); "
                                           "the next `boardsweep run` finishes it")


def _check_packed(url: str, attrs: dict[str, Any], block: int, damage: Damage) -> None:
    """Name the cells of every packed chunk file that is missing or altered:
    the task blocks (simulated arrays, ``done``) or exact points it covers."""
    sim = {*simulated_variables(attrs), "done"}
    for key, reason in packing.damaged_chunks(url).items():
        name, region = packing.chunk_region(url, key)
        ndim = damage.done.ndim if name in sim else damage.exact_done.ndim
        sizes = damage.chunks or (1,) * damage.exact_done.ndim
        points = itertools.product(*[range(r.start // g, -(-r.stop // g))
                                     for r, g in zip(region[:ndim - (name in sim)], sizes)])
        if name in sim:
            reps = region[ndim - 1]
            cells = [((tuple(p), s), sim_name(tuple(p), s)) for p in points
                     for s in range(reps.start // block * block, reps.stop, block)]
            found = damage.sim
        else:
            cells, found = [(tuple(p), exact_name(tuple(p))) for p in points], damage.exact
        for cell, manifest in cells:
            if manifest not in damage.reasons:
                damage.reasons[manifest] = reason
                found.append(cell)


def _verify(files: Storage, manifest: bytes | None, sweep: Sweep | None = None,
            task: tuple[tuple[int, ...], int | None] = ((), None)) -> str | None:
    """Why a task's recorded chunks do not match the files, or its record is
    not bound to this store's ``sweep`` and ``task`` (index, first replicate)
    (``None`` when they match)."""
    if manifest is None:
        return "no checksum record"
    try:
        parsed = json.loads(manifest)
        chunks, bound = parsed["chunks"], parsed.get("bound")
        if not isinstance(chunks, dict):
            raise TypeError
    except (ValueError, KeyError, TypeError, AttributeError):
        return "checksum record unreadable"
    if sweep is not None and (bound is not None or sweep.required):
        if bound is None:
            return "checksum record not bound to this sweep (copied from an older store?)"
        if bound != sweep.binding(*task, chunks):
            return "cells of another sweep or grid point (their checksum record is bound to other cells)"
    data = files.read_many(list(chunks), strict=False)
    for path, expected in chunks.items():
        got = fingerprint(data[path])
        if got != expected:
            if got is None:
                return f"chunk {path} {files.why_unread(path)}"
            if expected is None or got[0] != expected[0]:
                return f"chunk {path} has {got[0]} bytes, {expected[0] if expected else 0} written"
            return f"chunk {path} altered (checksum differs)"
    return None


def _metadata_problem(raw: bytes | None) -> str:
    """Why an array's ``zarr.json`` cannot serve ('' when it can): missing, or
    not an array's metadata (garbled, cut short, another node's)."""
    if raw is None:
        return "its metadata is missing"
    try:
        meta = json.loads(raw)
    except ValueError:
        return "its metadata is damaged (zarr.json is not JSON)"
    if not isinstance(meta, dict) or meta.get("node_type") != "array" or not isinstance(meta.get("shape"), list):
        return "its metadata is damaged (zarr.json is not an array's)"
    return ""


def describe(url: str, damage: Damage, limit: int = 4, attrs: dict[str, Any] | None = None) -> str:
    """``damage`` in words, the cells named by the spec's grid values
    (``attrs``: the store's attributes, where the caller has read them)."""
    attrs = read_attrs(url) if attrs is None else attrs
    spec = recorded_spec(attrs)
    grid = spec.get("grid", {})
    damage.chunks = damage.chunks or store_chunks(attrs)
    return damage.describe(list(attrs.get("grid_axes", grid)), grid,
                           int(attrs.get("replicates_per_task", 1)), limit)


def assert_intact(url: str, damage: Damage | None = None, attrs: dict[str, Any] | None = None) -> None:
    """Raise :class:`StoreDamaged` (one line naming the cells) unless every
    finished cell of the store at ``url`` is present and readable
    (``damage``, ``attrs``: what :func:`check` found and the store's
    attributes, where the caller has them)."""
    damage = check(url, attrs) if damage is None else damage
    if damage:
        raise StoreDamaged(
            f"store {url} is damaged: {describe(url, damage, attrs=attrs)}; rerun `boardsweep run SPEC --store {url}` "
            "to recompute these cells (`boardsweep status` names them all)"
        )
