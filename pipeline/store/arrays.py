"""The zarr v3 store of a sweep: schema, template, region writes, done mask.

Layout (read with ``xarray.open_zarr(path)``, no boardsweep import needed):

* dims: one per grid axis (coordinate = axis values), ``replicate``,
  ``checkpoint`` (coordinate = checkpoint values), the game's own dims;
* every simulated variable ``v`` of the game: dims ``(*axes, replicate, *v.dims)``,
  its integer dtype, fill value -1 declared as ``_FillValue`` so that cells no
  task has written read as NaN, never as zero;
* every exact variable: dims ``(*axes, *v.dims)``, float64 (NaN = no exact value);
* ``done`` ``(*axes, replicate)`` and ``exact_done`` ``(*axes)``: completion masks;
* attributes: the spec text, its SHA-256 and canonical JSON, versions, git
  revision, RNG and seed schemes, creation time, the names of the arrays
  boardsweep made (``arrays``) and the integrity scheme;
* ``.boardsweep/manifests/``: what each task wrote, with checksums
  (:mod:`boardsweep.pipeline.store.integrity`).

boardsweep recognises its own stores by their attributes and never deletes
anything else: ``--overwrite`` removes only the arrays listed in ``arrays``,
the root metadata and the manifests, so files a user put inside survive.

Chunks are 1 along grid axes and the task block along ``replicate``, whole
along every other dim, so each task writes its own chunks and nothing else.
Workers write a task's chunk files directly on a local store
(:mod:`boardsweep.pipeline.store.chunkfiles`: the bytes zarr would write, renamed
into place) and through zarr elsewhere (:func:`write_region`); only the
template goes through xarray.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
import re
import subprocess
from collections import OrderedDict
from pathlib import Path
from importlib.metadata import version
from typing import Any, Mapping

import dask
import dask.array as da
import fsspec
import numpy as np
import xarray as xr
import zarr
from zarr.api.asynchronous import open_group

from ...core.games import Game
from ...core.rng import RNG_SCHEME
from . import chunkfiles, manifests, metadata, remote
from .chunkfiles import LAYOUT_ATTR, LayoutError, _chunk_of
from .zarr_private import quiet, sync
from ..errors import InputError
from ..plan import SEED_SCHEME
from ..precision import STATES
from ..spec import Spec

__all__ = [
    "StoreMismatch",
    "UnknownFormat",
    "STORE_FORMAT",
    "FILL",
    "store_exists",
    "inspect",
    "create_store",
    "ensure_arrays",
    "remove_store",
    "read_attrs",
    "check_spec",
    "check_format",
    "check_writable",
    "read_array",
    "read_done",
    "read_exact_done",
    "clear_done",
    "write_region",
    "write_exact",
    "provenance",
    "unplayed",
]

#: Fill value of integer simulation arrays: never a valid count.
FILL = -1


#: The store format this code writes (attribute ``boardsweep_format``; stores
#: made before it was recorded have format 1); see :mod:`.metadata`.
STORE_FORMAT = metadata.STORE_FORMAT


class StoreMismatch(InputError):
    """An existing store does not hold the sweep the spec describes."""


class UnknownFormat(InputError):
    """The store was written in a format (or with a random scheme) this code
    does not know: reading or resuming it could be silently wrong."""


#: Silence zarr's warnings about consolidated metadata and the files beside
#: the arrays (:class:`.zarr_private.quiet`).
quiet_zarr = quiet


def store_exists(url: str) -> bool:
    """Whether ``url`` holds a zarr group."""
    try:
        with quiet_zarr():
            zarr.open_group(url, mode="r")
        return True
    except (FileNotFoundError, zarr.errors.GroupNotFoundError, ValueError, KeyError):
        return False


def provenance(spec: Spec) -> dict[str, Any]:
    """The attributes recorded in a new store."""
    import numba  # heavy, and only a new store records its version

    return {
        "sweep": spec.name,
        "game": spec.game_name,
        "grid_axes": list(spec.axes),
        "replicates_per_task": spec.block,
        "checkpoint_of": spec.game.checkpoint_of,
        "simulated_variables": list(spec.game.variables),
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
        "integrity": manifests.INTEGRITY_SCHEME,
        "seed_scheme": SEED_SCHEME,
        "boardsweep_format": STORE_FORMAT,
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


def template(spec: Spec, game: Game) -> tuple[xr.Dataset, dict]:
    """The lazy Dataset and encoding of an empty store for ``spec``."""
    params = spec.points()[0][1]
    labels = game.coords_for(params)
    axes, grid_chunks = spec.axes, (1,) * len(spec.axes)
    sizes = {"replicate": spec.slots, "checkpoint": len(spec.checkpoints)}
    sizes.update({dim: len(v) for dim, v in labels.items()})
    data_vars, encoding = {}, {}

    def add(name: str, dims: tuple, dtype: str, chunks: tuple, fill: Any, attrs: dict) -> None:
        shape = tuple(len(spec.grid[d]) if d in spec.grid else sizes[d] for d in dims)
        data_vars[name] = xr.Variable(dims, da.full(shape, fill, dtype=dtype, chunks=-1), attrs)  # never computed: one dask chunk
        encoding[name] = {"chunks": chunks, "fill_value": fill}

    for name, var in game.variables.items():
        dims = (*axes, "replicate", *var.dims)
        chunks = (*grid_chunks, spec.block, *(sizes[d] for d in var.dims))
        fill = FILL if np.dtype(var.dtype).kind in "iu" else np.nan
        add(name, dims, var.dtype, chunks, fill, {"_FillValue": fill})
    for name, var in game.exact_variables.items():
        chunks = (*grid_chunks, *(sizes[d] for d in var.dims))
        add(name, (*axes, *var.dims), var.dtype, chunks, np.nan, {"_FillValue": np.nan})
    add("done", (*axes, "replicate"), "bool", (*grid_chunks, spec.block), False, {})
    add("exact_done", axes, "bool", grid_chunks or (), False, {})

    coords = {axis: _axis_values(values) for axis, values in spec.grid.items()}
    coords["replicate"] = np.arange(spec.slots, dtype=np.int64)
    if spec.precision_stderr is not None:  # per-point decisions of the precision rule
        data_vars.update(precision_variables(spec))
    coords["checkpoint"] = xr.Variable("checkpoint", spec.checkpoints.astype(np.int64))
    for dim, values in labels.items():
        coords[dim] = xr.Variable(dim, *metadata.label_coordinate(values))
    ds = xr.Dataset(data_vars, coords=coords, attrs=provenance(spec))
    ds = metadata.describe(ds, spec, game)
    ds.attrs["arrays"] = sorted(str(name) for name in ds.variables)
    return ds, encoding


def precision_variables(spec: Spec) -> dict[str, xr.Variable]:
    """The per-point variables of the precision rule (:mod:`boardsweep.pipeline.precision`)
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
        "precision_state": xr.Variable(dims, np.zeros(shape, dtype=np.int8), {
            "long_name": "precision rule: 0 running, 1 target met, 2 max_replicates reached first",
            "flag_values": list(range(len(STATES))), "flag_meanings": " ".join(STATES)}),
    }


def _axis_values(values: list) -> np.ndarray:
    """A grid axis's values: numbers as they are, text as fixed-width unicode."""
    array = np.asarray(values)
    return array.astype(str) if array.dtype.kind in "OUT" else array


def unplayed(game: Game, params: dict, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``arrays`` (a task's simulated or exact arrays, the variable's own
    dims last) with the fill value (:data:`FILL`, NaN for floats) at the
    seats beyond ``params["players"]`` (see :func:`metadata.playing`): a
    seat that does not play reads as missing, never as 0."""
    players = metadata.playing(game, params)
    variables = {**game.variables, **game.exact_variables}
    out = dict(arrays)
    for name, values in arrays.items():
        var = variables.get(name)
        if players is None or var is None or metadata.SEAT_DIM not in var.dims:
            continue
        axis = values.ndim - len(var.dims) + var.dims.index(metadata.SEAT_DIM)
        values = np.array(values, copy=True)
        index = [slice(None)] * values.ndim
        index[axis] = slice(players, None)
        values[tuple(index)] = FILL if values.dtype.kind in "iu" else np.nan
        out[name] = values
    return out


def inspect(url: str) -> str:
    """What is at ``url``: ``absent``, ``empty`` (a folder holding nothing or only
    boardsweep's lock), ``file``, ``boardsweep`` (a store boardsweep made),
    ``zarr-group`` or ``zarr-array`` (someone else's), ``folder`` (other files),
    ``leftover`` (boardsweep's ``.boardsweep/`` folder without a store: a
    removal cut short) or ``unreadable`` (a zarr.json that does not parse)."""
    fs, root = fsspec.core.url_to_fs(url)
    if not fs.exists(root):
        return "absent"
    if fs.isfile(root):
        return "file"
    names = {Path(p).name for p in fs.ls(root, detail=False)}
    if not names - {".boardsweep.lock"}:
        return "empty"
    if "zarr.json" not in names and ".zgroup" not in names and ".zarray" not in names:
        return "leftover" if manifests.MANIFEST_DIR.split("/")[0] in names else "folder"
    try:
        meta = json.loads(fs.cat_file(f"{root}/zarr.json")) if "zarr.json" in names else {}
    except (OSError, ValueError):
        return "unreadable"
    if meta.get("node_type") == "array" or ".zarray" in names:
        return "zarr-array"
    return "boardsweep" if "spec_canonical" in meta.get("attributes", {}) else "zarr-group"


def create_store(url: str, spec: Spec) -> None:
    """Write the empty store for ``spec`` at ``url`` (metadata only, no chunks)."""
    ds, encoding = template(spec, spec.game)
    with quiet_zarr():
        ds.to_zarr(url, mode="a", compute=False, encoding=encoding, consolidated=True, zarr_format=3)


def ensure_arrays(url: str, spec: Spec) -> list[str]:
    """Recreate the metadata of every array of ``spec``'s template missing at ``url``.

    Completes a store whose creation was interrupted (disk full, process
    killed) and restores an array whose ``zarr.json`` was deleted; chunks
    already on disk are kept (the integrity check decides what is intact).
    Returns the names recreated.
    """
    fs, root = fsspec.core.url_to_fs(url)
    ds, encoding = template(spec, spec.game)
    missing = [str(n) for n in ds.variables if not fs.exists(f"{root}/{n}/zarr.json")]
    missing += [c for c in _stale_coordinates(url, ds) if c not in missing]
    if not missing:
        return []
    data = [n for n in missing if n in ds.data_vars]
    subset = ds[data] if data else ds.drop_vars(list(ds.data_vars))
    with quiet_zarr():
        subset.to_zarr(url, mode="a", compute=False, consolidated=True, zarr_format=3,
                       encoding={k: v for k, v in encoding.items() if k in subset.variables})
    return missing


def _stale_coordinates(url: str, ds: xr.Dataset) -> list[str]:
    """Coordinates whose stored values are unreadable or differ from the spec's
    (a creation stopped between a coordinate's metadata and its values)."""
    stale = []
    with quiet_zarr():
        group = zarr.open_group(url, mode="r")
        for name in ds.coords:
            try:
                stored = np.asarray(group[str(name)][...])
                same = stored.shape == ds[name].shape and bool(np.all(stored == ds[name].values))
            except Exception:  # noqa: BLE001 - missing or unreadable: rewrite it
                same = False
            if not same:
                stale.append(str(name))
    return stale


def remove_store(url: str, names: list[str] | None = None) -> None:
    """Remove what boardsweep made at ``url``: its arrays (``names``, default
    the store's ``arrays`` attribute), root metadata and manifests; anything
    else in the folder (a user's files) stays."""
    fs, root = fsspec.core.url_to_fs(url)
    ours = set(names if names is not None else (read_attrs(url, check=False).get("arrays") or _legacy_arrays(url)))
    for entry in fs.ls(root, detail=False):
        name = Path(entry).name
        if name in ours and fs.isdir(entry):
            fs.rm(entry, recursive=True)
    for name in ("zarr.json", manifests.MANIFEST_DIR.split("/")[0]):
        if fs.exists(f"{root}/{name}"):
            fs.rm(f"{root}/{name}", recursive=True)


def _legacy_arrays(url: str) -> list[str]:
    """Array names of a store made before ``arrays`` was recorded: all its arrays."""
    with quiet_zarr():
        return list(zarr.open_group(url, mode="r").array_keys())


def read_attrs(url: str, check: bool = True) -> dict[str, Any]:
    """The store's attributes; with ``check``, those of a boardsweep store in
    a format this code knows (:func:`check_format`)."""
    with quiet_zarr():
        attrs = dict(zarr.open_group(url, mode="r").attrs)
    if check and "spec_canonical" in attrs:
        check_format(url, attrs)
    return attrs


def check_format(url: str, attrs: Mapping[str, Any]) -> None:
    """Raise :class:`UnknownFormat` (one line) unless the store's format, its
    integrity scheme, its random and seed schemes are the ones this code
    writes, and no newer boardsweep release (major.minor) wrote it."""
    ours = version("boardsweep")
    problems = []
    if metadata.store_format(attrs) not in metadata.READABLE_FORMATS:
        problems.append(f"boardsweep_format {attrs.get('boardsweep_format')!r}, this version reads "
                        f"{', '.join(map(str, metadata.READABLE_FORMATS))}")
    for key, known in (("integrity", manifests.INTEGRITY_SCHEME), ("rng_scheme", RNG_SCHEME),
                       ("seed_scheme", SEED_SCHEME)):
        if key not in attrs:
            problems.append(f"no {key} recorded")
        elif attrs[key] != known:
            problems.append(f"{key} {_short(attrs[key])} is not this version's")
    written = _release(attrs.get("boardsweep_version"))
    if written is None:
        problems.append(f"boardsweep_version {_short(attrs.get('boardsweep_version'))} is not a version")
    elif written > _release(ours):
        problems.append(f"written by boardsweep {attrs.get('boardsweep_version')}, newer than this {ours}")
    if problems:
        raise UnknownFormat(f"store {url} was written in a format this boardsweep {ours} does not know "
                            f"({'; '.join(problems)}); use the boardsweep that wrote it, or replace the "
                            "store with `boardsweep run SPEC --overwrite`")


def _release(text: Any) -> tuple[int, int] | None:
    """(major, minor) of a version string such as ``0.1.0``, ``None`` where it has none."""
    found = re.match(r"\s*v?(\d+)(?:\.(\d+))?", str(text))
    return None if found is None else (int(found[1]), int(found[2] or 0))


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "...'"


def check_spec(url: str, spec: Spec, attrs: Mapping[str, Any] | None = None) -> None:
    """Raise :class:`StoreMismatch` unless the store at ``url`` was made by ``spec``.

    Specs are compared by canonical content, so comments, layout and the store
    path do not matter; the message lists every key that differs.  ``attrs``:
    the store's attributes where the caller has read them.
    """
    attrs = read_attrs(url) if attrs is None else attrs
    if "spec_canonical" not in attrs:
        raise StoreMismatch(f"store {url} is not a boardsweep sweep store; boardsweep writes only "
                            "into a new folder or a store it made")
    old, new = json.loads(attrs["spec_canonical"]), spec.canonical()
    diffs = _differences(old, new)
    if diffs:
        shown = "; ".join(f"{k}: {a} in the store, {b} in {spec.source}" for k, a, b in diffs[:5])
        more = "" if len(diffs) <= 5 else f" (and {len(diffs) - 5} more)"
        raise StoreMismatch(
            f"store {url} was made by a different spec ({shown}{more}); "
            "use --overwrite to replace it or choose another --store"
        )


def check_writable(url: str, attrs: Mapping[str, Any] | None = None) -> None:
    """Raise :class:`StoreMismatch` (one line) unless the store at ``url`` has
    the layout this boardsweep writes (:data:`metadata.STORE_FORMAT`); an
    older store is still read by query, status, report and verify."""
    found = metadata.store_format(read_attrs(url) if attrs is None else attrs)
    if found != metadata.STORE_FORMAT:
        raise StoreMismatch(
            f"store {url} has store format {found}, written by an older boardsweep; this one writes "
            f"format {metadata.STORE_FORMAT} and cannot add to it (query, status, report and verify "
            "still read it): rerun with --overwrite, or --store NEW_PATH, to write it anew")


def _differences(old: Any, new: Any, prefix: str = "") -> list[tuple[str, str, str]]:
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new)):
            sub = f"{prefix}.{key}" if prefix else key
            if key not in old or key not in new:
                out.append((sub, _show(old.get(key)), _show(new.get(key))))
            else:
                out.extend(_differences(old[key], new[key], sub))
        return out
    return [] if old == new else [(prefix, _show(old), _show(new))]


def _show(value: Any) -> str:
    return "(absent)" if value is None else json.dumps(value)


def read_array(url: str, name: str, region: tuple[slice, ...] = (),
               unreadable_as_fill: bool = False) -> np.ndarray:
    """Array ``name`` of the store at ``url`` as written (fill values where no
    task wrote; ``region``: slices of its leading dims), straight from its
    chunk files where :mod:`~boardsweep.pipeline.store.chunkfiles` applies, else
    through zarr.  ``unreadable_as_fill``: a chunk that does not decode reads
    as the fill value (for callers that use only cells found intact)."""
    values = chunkfiles.read(url, name, region, unreadable_as_fill)
    if values is None:
        with quiet_zarr():
            values = np.asarray(zarr.open_array(url, path=name, mode="r")[tuple(region) or ...])
    return values


def read_done(url: str) -> np.ndarray:
    """The ``done`` mask, shape ``grid shape + (replicates,)`` (unreadable chunks: not done)."""
    with quiet_zarr():
        return read_mask(zarr.open_group(url, mode="r"), "done", url)[0]


def read_exact_done(url: str) -> np.ndarray:
    """The ``exact_done`` mask, shape ``grid shape``."""
    with quiet_zarr():
        return read_mask(zarr.open_group(url, mode="r"), "exact_done", url)[0]


#: Chunk reads zarr keeps in flight when reading a mask (its default is 10;
#: a mask is thousands of tiny chunks, one per task).
READ_CONCURRENCY = 64


def read_mask(group: zarr.Group, name: str, url: str | None = None) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """A boolean mask array read chunk by chunk where a whole read fails.

    With ``url`` (the group's) a local store is read straight from its chunk
    files (:mod:`boardsweep.pipeline.store.chunkfiles`).  Returns the mask
    (unreadable chunks read as ``False``) and the chunk coordinates that could
    not be read.
    """
    if url is not None:
        try:
            fast = chunkfiles.read(url, name)
        except chunkfiles.ChunkUnreadable:
            fast = None  # a damaged chunk: find which, below
        if fast is not None:
            return fast.astype(bool), []
    array = group[name]
    try:
        with zarr.config.set({"async.concurrency": READ_CONCURRENCY}):
            return np.asarray(array[...], dtype=bool), []
    except Exception:  # noqa: BLE001 - a damaged chunk: find which, below
        pass
    mask = np.zeros(array.shape, dtype=bool)
    bad = []
    grid = [range(-(-s // c)) for s, c in zip(array.shape, array.chunks)]
    for coords in np.ndindex(*[len(g) for g in grid]):
        region = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(coords, array.chunks, array.shape))
        try:
            mask[region] = np.asarray(array[region], dtype=bool)
        except Exception:  # noqa: BLE001 - unreadable chunk: not done
            bad.append(coords)
    return mask, bad


#: Arrays a process has opened for writing, per (store, canonical spec hash): a
#: worker opens a store's arrays once, not once per task (opening the group
#: re-reads its consolidated metadata).  The hash keys the entry, so a
#: store replaced by another spec is opened afresh.
_WRITERS: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
_MAX_WRITERS = 8


def _writer(url: str, token: str | None, names: list[str]) -> dict[str, Any]:
    """The opened async arrays ``names`` of the store at ``url`` (cached by ``token``)."""
    key = (url, token or "")
    arrays = _WRITERS.get(key, {}) if token else {}
    missing = [n for n in names if n not in arrays]
    if missing:
        async def open_arrays() -> dict[str, Any]:
            group = await open_group(store=url, mode="r+")
            return {n: await group.getitem(n) for n in missing}

        with quiet_zarr():
            arrays = {**arrays, **sync(open_arrays())}
        if token:
            _WRITERS[key] = arrays
            while len(_WRITERS) > _MAX_WRITERS:
                _WRITERS.popitem(last=False)
    if token:
        _WRITERS.move_to_end(key)
    return arrays


def _write(url: str, token: str | None, region: tuple, values: Mapping[str, np.ndarray],
           flag: str) -> list[str] | dict[str, list[int]]:
    """Write every variable of one task's ``region``, then set its ``flag``
    (``done`` / ``exact_done``) once the data is on disk; return the chunk
    paths written.

    A local store's region, one chunk per array, is written straight to its
    chunk files (:func:`chunkfiles.write_chunk`); otherwise the arrays
    (kept open per worker) are written through zarr, concurrently.  On object
    storage the chunks are put as objects (:func:`.remote.write_task`): the
    paths come with their sizes and CRC-32s.
    """
    paths = [chunkfiles.write_chunk(url, name, region, v) for name, v in values.items()]
    if all(paths):
        flag_path = chunkfiles.write_chunk(url, flag, region, np.ones(1, dtype=bool))
        if flag_path:
            return [*paths, flag_path]
    written = remote.write_task(url, token, region, values, flag)  # object storage: batched, checksums known
    if written is not None:
        return written
    return _write_zarr(url, token, region, values, flag)


def _write_zarr(url: str, token: str | None, region: tuple, values: Mapping[str, np.ndarray],
                flag: str) -> list[str]:
    arrays = _writer(url, token, [*values, flag])
    for name in [*values, flag]:
        _require_own_chunk(url, name, arrays[name], region)

    async def write_all() -> None:
        await asyncio.gather(*(arrays[n].setitem(region, np.asarray(v, dtype=arrays[n].dtype))
                               for n, v in values.items()))
        await arrays[flag].setitem(region, True)

    with quiet_zarr():
        sync(write_all())
    return manifests.chunk_paths(arrays, [*values, flag], _chunk_coords(region, arrays[flag]))


def _require_own_chunk(url: str, name: str, array, region: tuple) -> None:
    """Raise :class:`LayoutError` unless ``region`` of ``array`` is exactly one
    chunk: a task never writes into a chunk that other cells share."""
    if LAYOUT_ATTR in array.attrs or _chunk_of(region, array.shape, array.chunks) is None:
        raise LayoutError(f"array {name} of {url} is not chunked per task: a task would write into a "
                          "chunk shared with other cells, so nothing was written")


def _chunk_coords(region: tuple, array) -> tuple[int, ...]:
    """Chunk coordinates of the leading dims ``region`` starts at."""
    return tuple((r.start or 0) // c if isinstance(r, slice) else int(r) // c
                 for r, c in zip(region, array.chunks))


def write_region(
    url: str, index: tuple[int, ...], start: int, stop: int, arrays: Mapping[str, np.ndarray],
    token: str | None = None,
) -> None:
    """Write one task's arrays (leading dim = its replicates), then its done
    flags, then its manifest.  ``token`` (a hash of the canonical spec) lets
    the worker keep a remote store's arrays open between tasks."""
    paths = _write(url, token, index + (slice(start, stop),), arrays, "done")
    manifests.record(url, paths, index, start)


def clear_done(url: str, blocks: list[tuple[tuple[int, ...], int]], points: list[tuple[int, ...]],
               block: int) -> None:
    """Clear the done flags of damaged task blocks and exact points (and their
    manifests), so that a run computes them again."""
    fs, root = fsspec.core.url_to_fs(url)
    with quiet_zarr():
        group = zarr.open_group(url, mode="r+")
        done, exact_done = group["done"], group["exact_done"]
        for index, start in blocks:
            done[index + (slice(start, min(start + block, done.shape[-1])),)] = False
        for index in points:
            exact_done[index] = False
    names = [manifests.sim_name(i, s) for i, s in blocks] + [manifests.exact_name(i) for i in points]
    for name in names:
        path = f"{root}/{manifests.MANIFEST_DIR}/{name}"
        if fs.exists(path):
            fs.rm(path)


def write_exact(url: str, index: tuple[int, ...], arrays: Mapping[str, np.ndarray],
                token: str | None = None) -> None:
    """Write the exact answer of one grid point, then its ``exact_done`` flag."""
    values = {name: np.asarray(v, dtype=np.float64) for name, v in arrays.items()}
    paths = _write(url, token, index, values, "exact_done")
    manifests.record(url, paths, index, None)


def write_whole(url: str, values: Mapping[str, np.ndarray]) -> None:
    """Rewrite small arrays whole (per-point decisions: the client writes them, lock held)."""
    with quiet_zarr():
        group = zarr.open_group(url, mode="r+")
        for name, array in values.items():
            group[name][...] = array


def open_raw(url: str, mask_and_scale: bool = False) -> xr.Dataset:
    """The store as xarray reads it, lazily and without dask (``chunks=None``),
    values as stored unless ``mask_and_scale`` (the callers decode and mask)."""
    with quiet_zarr():
        return xr.open_zarr(url, chunks=None, mask_and_scale=mask_and_scale)


def array_names(url: str) -> set[str]:
    """The names of the arrays in the store at ``url``."""
    with quiet_zarr():
        return set(zarr.open_group(url, mode="r").array_keys())


def read_raw(url: str, name: str) -> np.ndarray:
    """Array ``name`` exactly as stored (fill values included), read through zarr."""
    with quiet_zarr():
        return np.asarray(zarr.open_array(url, path=name, mode="r")[...])


def coordinate_labels(url: str, name: str, index: tuple[int, ...]) -> str:
    """Cell ``index`` of array ``name`` by its coordinates: ``dice_sides=6, replicate=3``."""
    with quiet_zarr():
        array = zarr.open_array(url, path=name, mode="r")
        dims = list(getattr(array.metadata, "dimension_names", None) or [])
        group = zarr.open_group(url, mode="r")
        keys = set(group.array_keys())
        parts = []
        for axis, (dim, i) in enumerate(zip(dims or [None] * len(index), index)):
            label: Any = i
            if dim is not None and dim in keys and dim != name:
                coord = group[dim]
                if len(coord.shape) == 1 and coord.shape[0] > i:
                    label = coord[i]
                    label = label.item() if hasattr(label, "item") else label
            parts.append(f"{dim or f'axis{axis}'}={label!r}")
    return ", ".join(parts)


def many_reads() -> None:
    """Let zarr keep more chunk reads in flight in this (CLI) process: a
    store holds one small chunk per task and variable."""
    zarr.config.set({"async.concurrency": READ_CONCURRENCY})
