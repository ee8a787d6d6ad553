"""The store's schema: its variables, dims, chunks and attributes, as a template.

Layout (read with ``xarray.open_zarr(path)``, no boardsweep import needed):

* dims: one per grid axis (coordinate = axis values), ``replicate``,
  ``checkpoint`` (coordinate = checkpoint values), the game's own dims;
* every simulated variable ``v`` of the game: dims ``(*axes, replicate, *v.dims)``,
  its integer dtype, fill value :data:`FILL` (int64's least value, which no
  output may take: -1 is a value) declared as ``_FillValue`` while the store
  is being filled, so that cells no task has written read as NaN, never as
  zero; once complete and packed, without it (integers read as integers),
  see :func:`.integers.integer_fill`.  A variable that can hold cells
  without a value in the finished store (:func:`may_miss`: seats that do not
  play, replicate slots a precision rule did not use) is float64 instead,
  NaN there, its integer dtype in the attribute ``integer_dtype``
  (:mod:`.integers`, store format 6);
* ``series_<v>`` for each headline variable ``v`` (store format 7; none
  with ``[checkpoints] batches = 0``): dims ``(*axes, replicate, batch,
  *v.dims[1:])``, ``v``'s counts in each of the run's equal batches (not
  cumulative; coordinate ``batch`` = the batches' ends), the draws of the
  convergence diagnostics; stored as ``v`` is;
* every exact variable, named ``exact_*``: dims ``(*axes, *v.dims)``, float64
  (NaN = no exact value);
* ``done`` ``(*axes, replicate)`` and ``exact_done`` ``(*axes)``: completion masks;
* attributes: the spec text, its SHA-256 and canonical JSON, versions, git
  revision, RNG and seed schemes, creation time, the names of the arrays
  boardsweep made (``arrays``), the integrity scheme, the store format and,
  once packed, the packed layout's record (``boardsweep_layout``): all of
  boardsweep's bookkeeping is here and in ``.boardsweep/``, none on a variable;
* ``.boardsweep/`` (a zarr group with no arrays, so zarr lists it quietly):
  ``manifests/``, what each task wrote, with checksums
  (:mod:`boardsweep.pipeline.store.integrity`), and the layout journal.

Chunks are the task's grid points along grid axes (``[tasks]
points_per_task``, recorded as ``grid_chunks`` where not one) and the task
block along ``replicate``, whole along every other dim, so each task writes
its own chunks and nothing else
(:mod:`.writes`).  The store is created from the :func:`skeleton` by
:mod:`.creation`, with zarr's own API (no dask, no ``to_zarr``).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import subprocess
from importlib.metadata import version
from pathlib import Path
from typing import Any, Mapping

import dask
import numpy as np
import xarray as xr
import zarr

from ...core.batches import equal_ends
from ...core.games import SERIES_DIM, SERIES_PREFIX, Game, series_sources
from ...core.seeds import RNG_SCHEME
from . import integers, metadata, writes
from .layout import GRID_CHUNKS_ATTR
from ..plan import SEED_SCHEME, STATES, TaskLayout, given
from ..spec import Spec

__all__ = ["FILL", "STORE_FORMAT", "SERIES_DIM", "series_names", "series_variables", "provenance", "source_revision", "code_revision", "template", "skeleton", "precision_variables", "unplayed", "blank_unplayed", "may_miss"]


#: Fill value of integer simulation arrays and their integer view's mark of no value
#: (:mod:`.integers`): int64's least value, which no output may take.
FILL = integers.FILL


#: The store format this code writes (attribute ``boardsweep_format``; stores
#: made before it was recorded have format 1); see :mod:`.metadata`.
STORE_FORMAT = metadata.STORE_FORMAT


def provenance(spec: Spec, layout: TaskLayout | None = None) -> dict[str, Any]:
    """The attributes recorded in a new store of ``spec`` laid out as ``layout``
    (the run's; the spec's own where None)."""
    layout = layout or given(spec)
    import numba  # heavy, and only a new store records its version

    return {
        "sweep": spec.name,
        "game": spec.game_name,
        "grid_axes": list(spec.axes),
        "replicates_per_task": layout.block,
        "checkpoint_of": spec.game.checkpoint_of,
        "simulated_variables": [*spec.game.variables, *series_names(spec)],
        "exact_variables": list(spec.game.exact_variables),
        "spec_file": spec.source,
        "spec_text": spec.text,
        "spec_sha256": spec.sha256,
        "spec_canonical": spec.canonical_json(),
        "boardsweep_version": version("boardsweep"),
        "numpy_version": np.__version__,
        "numba_version": numba.__version__,
        "dask_version": dask.__version__,
        "xarray_version": xr.__version__,
        "zarr_version": zarr.__version__,
        "git_revision": source_revision(),
        "rng_scheme": RNG_SCHEME,
        "integrity": writes.INTEGRITY_SCHEME,
        writes.BINDING_ATTR: writes.BINDING_SCHEME,
        "seed_scheme": SEED_SCHEME,
        "boardsweep_format": STORE_FORMAT,
        **({GRID_CHUNKS_ATTR: list(layout.grid_chunks)} if set(layout.grid_chunks) - {1} else {}),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def source_revision() -> str:
    """boardsweep's own source revision, as recorded when it was built.

    A built package carries ``boardsweep/_build_info.json`` (written by
    ``setup.py``).  An editable install, whose ``boardsweep`` folder is the
    checkout itself, reads that checkout: git is asked only when the folder
    holds boardsweep's ``pyproject.toml`` and its own ``.git``, never an
    enclosing repository.  Otherwise ``unknown``.
    """
    root = Path(__file__).resolve().parents[2]  # the boardsweep package
    try:
        return str(json.loads((root / "_build_info.json").read_text())["git_revision"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    pyproject = root / "pyproject.toml"
    if not ((root / ".git").exists() and pyproject.is_file()
            and 'name = "boardsweep"' in pyproject.read_text()):
        return "unknown"
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "describe", "--always", "--dirty", "--abbrev=40"],
            capture_output=True, text=True, timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


#: The package's folders whose Python sources :func:`code_revision` digests.
SOURCE_FOLDERS = ("core", "pipeline")


def code_revision(root: Path | None = None) -> str:
    """The key of anything kept from the code's results (the kept verdict).

    :func:`source_revision` where it names one commit; where the checkout
    has uncommitted changes (``-dirty``) or no revision is known, it is
    followed by the SHA-256 of the package's Python sources, so every edit
    changes the key (``-dirty`` alone stays the same across edits, and a
    verdict computed by older code would be read back).
    """
    revision = source_revision()
    if revision != "unknown" and not revision.endswith("-dirty"):
        return revision
    return f"{revision}+{sources_digest(root or Path(__file__).resolve().parents[2])}"


def sources_digest(root: Path) -> str:
    """SHA-256 over the names and bytes of every ``*.py`` file under ``root``'s
    :data:`SOURCE_FOLDERS` and at its top level, in sorted order."""
    digest = hashlib.sha256()
    files = sorted(root.glob("*.py")) + sorted(f for d in SOURCE_FOLDERS for f in (root / d).rglob("*.py"))
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def template(spec: Spec, game: Game, layout: TaskLayout | None = None) -> tuple[xr.Dataset, dict]:
    """The lazy Dataset (dask arrays) and encoding of an empty store for
    ``spec``: :func:`skeleton` as xarray's ``to_zarr(compute=False)`` takes it
    (growing a store, :mod:`.growth`)."""
    import dask.array as da  # 0.1-1.5 s to import: growth only; creation writes the skeleton itself

    ds, encoding = skeleton(spec, game, layout)
    for name, enc in encoding.items():
        var = ds[name].variable  # never computed: one dask chunk
        ds[name] = xr.Variable(var.dims, da.full(var.shape, enc["fill_value"], dtype=var.dtype, chunks=-1), var.attrs)
    return ds, encoding


def skeleton(spec: Spec, game: Game, layout: TaskLayout | None = None) -> tuple[xr.Dataset, dict]:
    """The Dataset and encoding of an empty store for ``spec``, chunked by
    ``layout`` (the run's; the spec's own where None), without dask.

    The arrays that start empty (simulated, exact, ``done``, ``exact_done``:
    the names in the encoding, each with its ``chunks`` and ``fill_value``)
    are read-only zero-stride views of their fill value (no memory, never
    written); coordinates and per-point markers hold their values.
    """
    params = dict(spec.resolved_points()[0][1])
    labels = game.coords_for(params)
    layout = layout or given(spec)
    axes, grid_chunks, block = spec.axes, layout.grid_chunks, layout.block
    sizes = {"replicate": spec.slots, "checkpoint": len(spec.checkpoints), SERIES_DIM: spec.series_batches}
    sizes.update({dim: len(v) for dim, v in labels.items()})
    data_vars, encoding = {}, {}

    def add(name: str, dims: tuple, dtype: str, chunks: tuple, fill: Any, attrs: dict) -> None:
        shape = tuple(len(spec.grid[d]) if d in spec.grid else sizes[d] for d in dims)
        data_vars[name] = xr.Variable(dims, np.broadcast_to(np.array(fill, dtype=dtype), shape), attrs)
        encoding[name] = {"chunks": chunks, "fill_value": fill}

    for name, var in game.variables.items():
        dims = (*axes, "replicate", *var.dims)
        chunks = (*grid_chunks, block, *(sizes[d] for d in var.dims))
        if may_miss(spec, game, var):  # float64, NaN where no value (store format 6, :mod:`.integers`)
            add(name, dims, "float64", chunks, np.nan, {"_FillValue": np.nan, integers.INTEGER_ATTR: str(var.dtype)})
            continue
        fill = integers.mark(var.dtype) if np.dtype(var.dtype).kind in "iu" else np.nan
        add(name, dims, var.dtype, chunks, fill, {"_FillValue": fill})
    for name, var in series_variables(spec, game).items():  # equal-batch series (format 7): the diagnostics' draws
        dims = (*axes, "replicate", SERIES_DIM, *var.dims[1:])
        chunks = (*grid_chunks, block, spec.series_batches, *(sizes[d] for d in var.dims[1:]))
        said = {"long_name": f"{name[len(SERIES_PREFIX):]} per equal batch",
                "description": f"{var.description or name}: the counts of each equal batch of the run (not cumulative)"}
        fill = np.nan if may_miss(spec, game, var) else integers.mark(var.dtype)
        extra = {integers.INTEGER_ATTR: str(var.dtype)} if may_miss(spec, game, var) else {}
        add(name, dims, "float64" if extra else var.dtype, chunks, fill, {"_FillValue": fill, **extra, **said})
    for name, var in game.exact_variables.items():
        chunks = (*grid_chunks, *(sizes[d] for d in var.dims))
        add(name, (*axes, *var.dims), var.dtype, chunks, np.nan, {"_FillValue": np.nan})
    add("done", (*axes, "replicate"), "bool", (*grid_chunks, block), False, {})
    add("exact_done", axes, "bool", grid_chunks or (), False, {})

    if spec.precision_stderr is not None:  # per-point decisions of the precision rule
        data_vars.update(precision_variables(spec))
    ds = xr.Dataset(data_vars, coords=_coordinates(spec, labels), attrs=provenance(spec, layout))
    ds = metadata.describe(ds, spec, game)
    ds.attrs["arrays"] = sorted(str(name) for name in ds.variables)
    return ds, encoding


def _coordinates(spec: Spec, labels: Mapping[str, Any]) -> dict[str, Any]:
    """A new store's coordinates: the grid axes, replicates, checkpoints, the
    equal batches' ends (store format 7) and the game's labelled dimensions."""
    coords: dict[str, Any] = {axis: metadata.axis_values(values) for axis, values in spec.grid.items()}
    coords["replicate"] = np.arange(spec.slots, dtype=np.int64)
    coords["checkpoint"] = xr.Variable("checkpoint", spec.checkpoints.astype(np.int64))
    if spec.series_batches:
        ends = equal_ends(int(spec.checkpoints[-1]), spec.series_batches)
        coords[SERIES_DIM] = xr.Variable(SERIES_DIM, ends, {
            "long_name": f"{spec.game.checkpoint_of} played at the batch's end",
            "description": f"end of each of {spec.series_batches} equal batches of the run; series_* hold "
                           "each batch's own counts (not cumulative)"})
    for dim, values in labels.items():
        coords[dim] = xr.Variable(dim, *metadata.label_coordinate(values))
    return coords


def series_names(spec: Spec) -> list[str]:
    """The store's equal-batch series variables: ``series_<name>`` for each
    of :func:`~boardsweep.core.games.series_sources`, none where the spec
    keeps no series (``[checkpoints] batches = 0``)."""
    if not spec.series_batches:
        return []
    return [SERIES_PREFIX + name for name in series_sources(spec.game)]


def series_variables(spec: Spec, game: Game) -> dict[str, Any]:
    """:func:`series_names` -> the game variable each is the series of."""
    return {name: game.variables[name[len(SERIES_PREFIX):]] for name in series_names(spec)}


def may_miss(spec: Spec, game: Game, var) -> bool:
    """Whether integer variable ``var`` can hold cells without a value once
    the store is finished, and so is stored as float64 with NaN there
    (:mod:`.integers`): a variable over seats of a game with a ``players``
    parameter (the seats that do not play), or any integer variable where a
    precision rule may leave replicate slots unused."""
    if np.dtype(var.dtype).kind not in "iu":
        return False
    if spec.precision_stderr is not None:
        return True
    return metadata.SEAT_DIM in var.dims and any(p.name == "players" for p in game.params)


def precision_variables(spec: Spec) -> dict[str, xr.Variable]:
    """The per-point variables of the precision rule (:mod:`boardsweep.pipeline.plan.precision`)
    in a new store: every point running, nothing used yet."""
    dims, shape = tuple(spec.axes), spec.shape
    target = f"{spec.precision_stderr:g}"
    return {
        "replicates_used": xr.Variable(dims, np.zeros(shape, dtype=np.int64), {
            "long_name": "replicates the precision rule used (planned in the current round while "
                         "precision_state = 0)", "units": "1"}),
        "stderr_reached": xr.Variable(dims, np.full(shape, np.nan), {
            "long_name": "largest standard error of the game's estimates over the replicates used "
                         f"(target {target})", "units": "1"}),
        "precision_state": xr.Variable(dims, np.zeros(shape, dtype=np.int64), {  # int64: CF flag_values (JSON) alike
            "long_name": "precision rule: 0 running, 1 target met, 2 max_replicates reached first",
            "flag_values": list(range(len(STATES))), "flag_meanings": " ".join(STATES)}),
    }


def unplayed(game: Game, params: dict, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``arrays`` (a task's simulated or exact arrays, the variable's own
    dims last) with the mark of no value (:func:`.integers.mark`, NaN for floats) at the
    seats beyond ``params["players"]`` (see :func:`metadata.playing`): a
    seat that does not play reads as missing, never as 0."""
    if metadata.playing(game, params) is None:
        return dict(arrays)
    out = {name: np.array(values, copy=True) for name, values in arrays.items()}
    blank_unplayed(game, params, out)
    return out


def blank_unplayed(game: Game, params: dict, arrays: Mapping[str, np.ndarray], where: tuple[int, ...] = ()) -> None:
    """:func:`unplayed` in place, on ``arrays[name][where]`` (one grid
    point of a task's chunk, the variable's own dims last)."""
    players = metadata.playing(game, params)
    if players is None:
        return
    variables = {**game.variables, **game.exact_variables}
    for name, values in arrays.items():
        var = variables.get(name)
        if var is None or metadata.SEAT_DIM not in var.dims:
            continue
        point = values[where]
        index = [slice(None)] * point.ndim
        index[point.ndim - len(var.dims) + var.dims.index(metadata.SEAT_DIM)] = slice(players, None)
        point[tuple(index)] = integers.mark(point.dtype) if point.dtype.kind in "iu" else np.nan
