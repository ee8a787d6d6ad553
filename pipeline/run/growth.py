"""Grow a sweep store in place: new grid-axis values and more replicates.

``boardsweep run NEW_SPEC --store STORE --extend`` compares NEW_SPEC with the
spec the store was made by (both in canonical form, :meth:`Spec.canonical`).
A *growth* may only

* add values to existing grid axes (new values go after the store's, in
  NEW_SPEC's order: cells are found by coordinate value, never by position),
* raise ``run.replicates``;

every other difference (seed, fixed parameters, run shape, checkpoints, task
size, game, an axis value removed, fewer replicates, an axis added) is
refused before anything is touched, naming every differing key.

Applying a growth (:meth:`boardsweep.pipeline.store.Store.apply_growth`, store
lock held; the steps are :mod:`boardsweep.pipeline.store.growth`) changes only metadata and
the small per-point arrays, in an order that a kill at any point leaves a
store that the same command completes:

1. the root attribute ``growing`` is set to NEW_SPEC's canonical JSON (and a
   ``history`` line says so): from here on ``status`` reports the store as
   incomplete and ``query``/``report`` refuse it;
2. every array with a grown dimension is resized (zarr rewrites only its
   ``zarr.json``; chunks already written stay as they are, new cells read as
   the fill value, i.e. not done) and the coordinates and per-point markers
   (``exact_exists``, ``exact_note``) are rewritten whole;
3. the spec attributes become NEW_SPEC's, ``growing`` is removed, a
   ``history`` line records the growth, and the metadata is re-consolidated.

Steps 1-3 are idempotent, so rerunning the command after a kill redoes them;
then the run computes the new cells like any resume.

When the old replicate count was not a multiple of the task block, or an
axis's old length not a multiple of the grid points per task, some chunks
are partly filled.  The task that completes one simulates only the new
cells, reads the chunk's old cells back (verified against their checksums
by the run first), and writes the chunk whole: old cells byte-identical,
new cells beside them, done flags and checksum record renewed
(:func:`kept_cells`, used by :func:`boardsweep.pipeline.run.worker.store_task`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np

from ..spec import Spec
from ..errors import GrowRefused
from ..store import read_array, read_attrs, differences, GROWING, interrupted, recorded_spec

__all__ = ["GROWING", "Growth", "compare", "aligned", "check", "interrupted", "kept_cells"]


@dataclass(frozen=True)
class Growth:
    """What NEW_SPEC adds to the store's sweep.

    ``added``: axis -> the new values (in the order they are appended);
    ``replicates``: (old, new) replicates per grid point.
    """

    added: dict[str, tuple] = field(default_factory=dict)
    replicates: tuple[int, int] = (0, 0)

    def __bool__(self) -> bool:
        return bool(self.added) or self.replicates[1] > self.replicates[0]

    def describe(self) -> str:
        """``grid.dice_sides: adds 10, 12; run.replicates: 4 -> 8``."""
        parts = [f"grid.{axis}: adds {', '.join(map(_value, values))}" for axis, values in self.added.items()]
        old, new = self.replicates
        if new > old:
            parts.append(f"run.replicates: {old} -> {new}")
        return "; ".join(parts) or "nothing to add"


def _value(v: Any) -> str:
    return json.dumps(v) if isinstance(v, str) else str(v)


def aligned(spec: Spec, old: Mapping[str, Any]) -> Spec:
    """``spec`` with each grid axis ordered as the store's (canonical ``old``):
    the store's values first, in its order, then the values it lacks, in
    ``spec``'s order.  Cells are identified by value, so the order of a
    spec's list does not change the sweep; axes the store lacks are kept."""
    stored = old.get("grid", {})
    grid = {}
    for axis, values in spec.grid.items():
        if list(values) == stored.get(axis):  # in the store's order already (a no-op re-run): no set per value
            grid[axis] = values
            continue
        wanted = set(values)  # sets: linear in an axis's length (a tuple's `in` made it quadratic)
        before = [v for v in stored.get(axis, []) if v in wanted]
        known = set(before)
        grid[axis] = tuple(before) + tuple(v for v in values if v not in known)
    return spec if grid == spec.grid else replace(spec, grid=grid)


def compare(old: Mapping[str, Any], spec: Spec) -> tuple[Growth, list[str]]:
    """The growth from the store's canonical spec ``old`` to ``spec``, and
    the differences that are not a growth (one phrase each, naming the key)."""
    spec = aligned(spec, old)
    new = spec.canonical_data
    added: dict[str, tuple] = {}
    refused: list[str] = []
    replicates = (int(old.get("run", {}).get("replicates", 0)), spec.replicates)
    if ("precision" in old or "precision" in new) and dict(old) != new:
        return Growth({}, replicates), [
            "precision: --extend does not grow a sweep with a [precision] target (its rounds depend on "
            "the whole spec); run the larger spec into a new --store"]
    for key, was, now in differences(dict(old), new):
        if key.startswith("grid.") and key.count(".") == 1:
            axis = key[5:]
            if axis not in old.get("grid", {}) or axis not in spec.grid:
                refused.append(f"{key}: an axis cannot be added to or removed from a store "
                               f"({was} in the store, {now} in {spec.source})")
                continue
            lost = [v for v in old["grid"][axis] if v not in spec.grid[axis]]
            if lost:
                refused.append(f"{key}: {', '.join(map(_value, lost))} in the store but not in "
                               f"{spec.source} (--extend only adds values)")
            else:
                added[axis] = spec.grid[axis][len(old["grid"][axis]):]
        elif key == "run.replicates" and replicates[1] > replicates[0]:
            continue
        elif key.startswith("files.") and key[6:] not in old.get("files", {}):
            continue  # a file a new grid value names; the files kept are compared as any key
        elif key == "run.replicates":
            refused.append(f"{key}: {was} in the store, {now} in {spec.source} (--extend only raises it)")
        elif key.startswith("params.") and any(key == f"params.{a}" for a in {*old.get("grid", {}), *spec.grid}):
            continue  # a grid axis added or removed shows up here too; said once, above
        else:
            refused.append(f"{key}: {was} in the store, {now} in {spec.source}")
    return Growth(added, replicates), refused


def check(url: str, spec: Spec, extend: bool, attrs: Mapping[str, Any] | None = None) -> tuple[Spec, Growth]:
    """Read-only: ``spec`` aligned with the store at ``url``, and its growth.

    Raises :class:`GrowRefused` (nothing touched) when ``extend`` and
    ``spec`` is not a growth of the store's spec, when ``spec`` is a growth
    and ``extend`` was not given (the message suggests ``--extend``), and
    when an interrupted growth towards another spec must be finished first.
    Other differences without ``extend`` are left to
    :func:`boardsweep.pipeline.store.check_spec`.  ``attrs``: the store's
    attributes, where the caller has read them.
    """
    attrs = read_attrs(url) if attrs is None else attrs
    old = recorded_spec(attrs)
    spec = aligned(spec, old)
    growth, refused = compare(old, spec)
    target = interrupted(attrs)
    if target is not None and json.loads(target) != spec.canonical_data:
        raise GrowRefused(f"store {url} is being grown to another spec (interrupted); rerun the "
                          f"command that grows it (`boardsweep run SPEC --store {url} --extend` with that "
                          "spec) to finish, nothing was touched")
    if extend and refused:
        raise GrowRefused(f"store {url} cannot grow to {spec.source}: {'; '.join(refused)}; "
                          "--extend may only add grid values and raise run.replicates, nothing was touched")
    if not extend and growth and not refused:
        raise GrowRefused(f"store {url} holds a smaller sweep than {spec.source} ({growth.describe()}); "
                          f"rerun with --extend to grow it in place (only the new cells run), or use "
                          "--overwrite to replace it; nothing was touched")
    if not extend and target is not None:
        raise GrowRefused(f"store {url} is being grown to {spec.source} (interrupted); rerun "
                          "the same command with --extend to finish, nothing was touched")
    return spec, growth


def kept_cells(url: str, region: tuple[slice, ...], names: list[str]) -> dict[str, np.ndarray]:
    """The stored cells of one task's chunk (``region``: slices of the grid
    axes and the replicates) of each array ``names``, as written."""
    return {name: read_array(url, name, region) for name in names}
