"""Finished tasks whose checksum records were lost, kept when their chunks are intact.

A store copied without its hidden ``.boardsweep/`` folder (a shell glob that
skips dot-files), or whose folder was deleted, still holds every finished
task's chunks and done flags, but no longer the manifests
(:mod:`boardsweep.pipeline.store.integrity`) that record their sizes and
CRC-32s.  The integrity check reports such a task as damaged ("no checksum
record"), and without this module ``run`` recomputed every task.

:func:`keep_unrecorded` keeps such a task when what it wrote can still be
checked: every chunk file of the task exists, decodes with its array's codecs
to the chunk's full size (a truncated or cut file fails to decode), and some of
its done flags are set (a chunk's flags are written last, in one file).  Its manifest is then written again from the files,
so later checks compare CRC-32s as usual.  A task with a chunk file missing
is recomputed: without its record, a chunk left out because it held only
fill values cannot be told from a lost one.  What is verified without the
record is weaker than a CRC (a flipped bit inside a zstd frame may still
decode), which is the price of keeping the work.
"""

from __future__ import annotations

import numpy as np
import zarr

from . import integrity, writes
from .metadata import simulated_variables
from .storage import open_storage
from .zarr_private import quiet

__all__ = ["LOST", "keep_unrecorded"]

#: The reason :func:`integrity.check` gives for a finished task with no manifest.
LOST = "no checksum record"


def keep_unrecorded(url: str, damage: "integrity.Damage", block: int) -> int:
    """Take out of ``damage`` the task blocks and exact points whose only
    fault is a lost manifest and whose chunks are intact (see the module
    docstring), writing their manifests again; return how many were kept."""
    sims = [key for key in damage.sim if damage.reasons.get(writes.sim_name(*key)) == LOST]
    points = [index for index in damage.exact if damage.reasons.get(writes.exact_name(index)) == LOST]
    if not sims and not points:
        return 0
    kept = 0
    with quiet():
        group = zarr.open_group(url, mode="r")
        attrs = dict(group.attrs)
        sim = [*simulated_variables(attrs), "done"]
        exact = [*attrs.get("exact_variables", []), "exact_done"]
        sweep = writes.sweep_of(attrs)
        for index, start in sims:
            if _keep(url, group, sim, index + (start // block,), index, start, sweep):
                damage.sim.remove((index, start))
                damage.reasons.pop(writes.sim_name(index, start))
                kept += 1
        for index in points:
            if _keep(url, group, exact, index, index, None, sweep):
                damage.exact.remove(index)
                damage.reasons.pop(writes.exact_name(index))
                kept += 1
    return kept


def _keep(url: str, group: zarr.Group, names: list[str], coords: tuple[int, ...],
          index: tuple[int, ...], start: int | None, sweep: "writes.Sweep | None" = None) -> bool:
    """Record the task again when its chunks at ``coords`` are intact (the
    last of ``names`` is its done-flag array); ``False`` when they are not."""
    paths = writes.chunk_paths(group, names, coords)
    if any(data is None for data in open_storage(url).read_many(paths, strict=False).values()):
        return False
    try:
        blocks = [group[name].get_block_selection(coords + (0,) * (group[name].ndim - len(coords)))
                  for name in names]
    except Exception:  # noqa: BLE001 - a chunk that does not decode (truncated, cut): recompute the task
        return False
    if not np.asarray(blocks[-1], dtype=bool).any():
        return False
    writes.record(url, paths, index, start, sweep=sweep)
    return True
