"""A spec's grid resolved: every grid point's parameters, and the points per task.

:func:`resolve_grid` validates each axis value once and gives a
:class:`ResolvedGrid`, which makes each point's parameter dict when asked
(never a dict per point for the whole grid: a task's chunk of it is
:meth:`ResolvedGrid.chunk`);
:func:`grid_chunks` splits a grid into tasks of at most ``points`` points.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterator, Sequence
from typing import Any

from ...core.games import Game

__all__ = ["ResolvedGrid", "resolve_grid", "grid_chunks"]


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

    def chunk(self, bounds: tuple[tuple[int, int], ...]) -> "ResolvedGrid":
        """The grid points within ``bounds`` (``[lo, hi)`` along each axis) as a
        grid of their own: each axis's values cut to its bounds (a task's few
        values, whatever the whole grid's size); index ``i`` here is ``lo + i``
        on the whole grid."""
        return ResolvedGrid(self.base, {a: v[lo:hi] for (a, v), (lo, hi) in zip(self.axis_values.items(), bounds)})

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


def resolve_grid(game: Game, fixed: dict[str, Any], grid: dict[str, tuple], validated: bool = False) -> ResolvedGrid:
    """Every grid point's parameters as ``game.resolve_params`` resolves them
    (defaults filled, every value validated, ``check_params`` passed), as a
    :class:`ResolvedGrid`.

    Each distinct value is validated once and ``check_params`` runs once per
    distinct combination of the parameters it reads (``Game.checked_params``):
    linear in the axes' lengths, not in the grid's size, where a game says
    what its check reads.  ``validated``: the grid's values are already
    validated (:meth:`~boardsweep.pipeline.spec.tables.Tables.parse_grid`), not again.

    Raises
    ------
    ParameterError
        A value or a combination is not allowed (the first point with it is
        not named: :meth:`~boardsweep.pipeline.spec.tables.Tables.check_each_point` names it).
    """
    given = {**fixed, **grid}
    for name in given:
        game.param(name)  # an unknown parameter: named as resolve_params names it
    values = dict(grid) if validated else {a: tuple(map(game.param(a).validate, grid[a])) for a in grid}
    base = {p.name: values[p.name][0] if p.name in values else p.validate(fixed.get(p.name, p.default))
            for p in game.params}
    resolved = ResolvedGrid(base, values)
    if game.check_params is not None:
        for names in check_groups(game.checked_params):
            for params in resolved.combinations(names):
                game.check_params(params)
    return resolved


def check_groups(checked: tuple | None) -> list[tuple[str, ...] | None]:
    """``Game.checked_params`` as groups checked apart: ``None`` (all
    parameters), one group of names, or several (a tuple of tuples: the
    check holds at a point where it holds for each group's values there)."""
    if checked is None or all(isinstance(name, str) for name in checked):
        return [checked]
    return [tuple(group) for group in checked]
