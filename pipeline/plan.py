"""Grid x replicates -> tasks, and the seed of every replicate.

A task is one grid point and one block of consecutive replicates.  Seeds never
depend on the task layout: replicate ``r`` at parameter values ``p`` always
gets :func:`replicate_seed` ``(root, p, r)``, whatever the grid position, the
block size, the worker or the submission order.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

if TYPE_CHECKING:
    from .spec import Spec

__all__ = ["Task", "SEED_SCHEME", "param_words", "replicate_seed", "plan_tasks"]

SEED_SCHEME = (
    "replicate seed = numpy.random.SeedSequence([root_seed, *w, replicate]) where w are the "
    "8 little-endian uint32 words of SHA-256(JSON of the sorted [name, value] pairs of all "
    "game parameters)"
)


@dataclass(frozen=True)
class Task:
    """One grid point x one block of replicates ``[start, stop)``.

    ``base``: set where the task completes a chunk whose first replicates
    ``[base, start)`` are already stored (a grown store whose old replicate
    count was not a multiple of the block, see :mod:`boardsweep.pipeline.grow`).
    """

    index: tuple[int, ...]
    params: dict[str, Any]
    start: int
    stop: int
    base: int | None = None

    @property
    def key(self) -> str:
        return "-".join(map(str, self.index)) + f"-r{self.start}"


def param_words(params: Mapping[str, Any]) -> list[int]:
    """Canonical encoding of parameter values as eight 32-bit integers.

    JSON keeps types apart (``6``, ``6.0`` and ``"6"`` differ); sorting by name
    makes the encoding independent of the order parameters are listed in.
    """
    pairs = sorted((str(k), _plain(v)) for k, v in params.items())
    digest = hashlib.sha256(json.dumps(pairs, separators=(",", ":")).encode()).digest()
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 32, 4)]


def replicate_seed(root: int, params: Mapping[str, Any], replicate: int) -> np.random.SeedSequence:
    """The SeedSequence of one replicate (see :data:`SEED_SCHEME`)."""
    return np.random.SeedSequence([int(root), *param_words(params), int(replicate)])


def plan_tasks(spec: Spec, done: np.ndarray | None = None) -> list[Task]:
    """Tasks still to run: every block with a replicate not marked in ``done``.

    ``done`` has shape ``spec.shape + (spec.replicates,)``; ``None`` means nothing
    is done yet.  A block whose first replicates only are done (the partial
    last block of a grown store) runs just the rest (:attr:`Task.base`).
    Tasks come in grid order, then block order.
    """
    blocks = [(start, min(start + spec.block, spec.replicates)) for start in range(0, spec.replicates, spec.block)]
    points = spec.points()
    if done is None:
        return [Task(index, params, start, stop) for index, params in points for start, stop in blocks]
    flat = np.asarray(done, dtype=bool).reshape(len(points), -1)
    missing = np.zeros((len(points), len(blocks)), dtype=bool)
    kept = np.zeros((len(points), len(blocks)), dtype=np.int64)
    for b, (start, stop) in enumerate(blocks):  # a few blocks; every grid point at once
        missing[:, b], kept[:, b] = _missing_and_prefix(flat[:, start:stop])
    tasks = []
    for p, b in zip(*np.nonzero(missing)):  # row-major: grid order, then block order
        (index, params), (start, stop), k = points[p], blocks[b], int(kept[p, b])
        tasks.append(Task(index, params, start + k, stop, start if k else None))
    return tasks


def _missing_and_prefix(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``cells`` (one block of replicates per grid point): whether a
    cell is not done, and how many leading cells are done when exactly those
    are (else 0)."""
    missing = ~cells.all(axis=1)
    lead = np.argmin(cells, axis=1)  # the first cell not done, where one is
    only_lead = cells.sum(axis=1) == lead  # no done cell after it
    return missing, np.where(missing & only_lead, lead, 0)


def _plain(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value
