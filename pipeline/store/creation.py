"""Creating a store from its skeleton, completing it, and removing it.

boardsweep never deletes anything it did not make: :func:`remove_store`
removes only the arrays listed in the ``arrays`` attribute, the root metadata
and the records in its own folder, so files a user put inside survive.

A creation cannot be left half done: before it writes anything else (or
removes the store ``--overwrite`` replaces), :func:`create_store` writes the
creation record :data:`CREATING` (the run's pid and host, the arrays it
makes or replaces) whole, and removes it only once the store is complete.
A store with that record is one boardsweep was creating (:func:`.identity.inspect`
says ``creating``): readers say so in one line (:func:`creating_line`), and the
next run removes what the record names (:func:`clear_interrupted`) and creates
it afresh; nothing had been computed in it.

The record is ``.boardsweep/creating``, in boardsweep's own folder, as the
run's lock is (:mod:`.lock` says why there): a zarr group, so zarr and
xarray, listing the store's group while a run creates it or after a kill
left the record, meet no file they do not recognise.  The folder's group
metadata is written right after the record, before the root's, and removing
an old store (``--overwrite``) keeps the record and the lock.  A record an
earlier release left beside the root ``zarr.json``
(:data:`.identity.LEGACY_CREATING`) is read and cleared as this one.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import socket
import struct
from pathlib import Path

import fsspec
import numpy as np
import xarray as xr
import zarr

from . import integers, metadata
from .chunkfiles import PACKED_SEPARATOR
from .storage import open_storage
from ..errors import StoreMismatch
from ..words import json_default
from .lock import LOCK_NAME, OWN_FOLDER, pid_alive
from .identity import CREATING, LEGACY_CREATING, check_labels, data_types, fixed_width_text, read_attrs
from .schema import skeleton
from ..plan import RECORDED, TaskLayout
from .zarr_private import quiet
from ..spec import Spec

__all__ = ["create_store", "ensure_arrays", "remove_store", "mark_own_folder", "rebuild_root", "OWN_FOLDER_META",
           "CREATING", "legacy_arrays", "creation_record", "clear_interrupted", "creating_line"]



#: The metadata that makes boardsweep's own folder (``.boardsweep/``: task
#: manifests, the layout journal, the kept task chunks, a run's lock) a zarr group: zarr
#: and ``xarray.open_zarr(store, consolidated=False)`` then list it as a
#: group (no arrays, so xarray shows nothing of it) instead of warning that
#: it is not part of the hierarchy.
OWN_FOLDER_META = {
    "zarr_format": 3,
    "node_type": "group",
    "attributes": {"description": "boardsweep's own records (task checksums, layout journal); not data"},
}


#: What :func:`remove_store` leaves in boardsweep's own folder: the run's lock and its creation record.
_KEPT = {LOCK_NAME.rsplit("/", 1)[1], CREATING.rsplit("/", 1)[1]}


def create_store(url: str, spec: Spec, replacing: list[str] | None = None, layout: TaskLayout | None = None) -> None:
    """Write the empty store for ``spec`` at ``url``, chunked as ``layout`` lays
    out its tasks (the run's; the spec's own where None): metadata, and the
    values of its coordinates and per-point markers (the empty arrays have no chunks).

    What xarray's ``to_zarr(compute=False, consolidated=True)`` of the
    template writes, written with zarr's own API (no dask, no xarray
    encoding pipeline; tests/pipeline/store/test_creation.py compares the
    two): the root group and its attributes, every array, then the
    consolidated metadata.  ``replacing``: the arrays of the boardsweep store
    there to remove first (``--overwrite``; ``[]``: only its root metadata and
    records).  All of it between the creation record's writing and its
    removal (:data:`CREATING`): a kill at any instant leaves the old store
    untouched, or a store the next run clears and creates again, or the new one whole.
    """
    ds, encoding = skeleton(spec, spec.game, layout)
    _begin(url, sorted({str(n) for n in ds.variables} | set(replacing or [])))
    if replacing is not None:
        remove_store(url, list(replacing))
    mark_own_folder(url)
    variables, attrs = xr.conventions.encode_dataset_coordinates(ds)
    with quiet():
        group = zarr.open_group(url, mode="a", zarr_format=3)
        group.attrs.put(_json(attrs))
        for name in variables:
            _create_array(group, str(name), variables[name], encoding.get(name))
        zarr.consolidate_metadata(group.store)
    _end(url)


def _begin(url: str, arrays: list[str]) -> None:
    """Write the creation record (:data:`CREATING`) whole, naming ``arrays``:
    on a folder into a temporary file renamed into place, on object storage in one put."""
    record = {"pid": os.getpid(), "host": socket.gethostname(), "arrays": arrays,
              "since": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    open_storage(url).write(CREATING, json.dumps(record, indent=2).encode())


def _end(url: str) -> None:
    """Remove the creation record (the store is whole), one an earlier
    release left (:data:`.identity.LEGACY_CREATING`), and any temporary
    file a kill left while one was written (:func:`_begin`)."""
    open_storage(url).delete([CREATING, LEGACY_CREATING])  # in a folder, a killed write's temporary files too


def creation_record(url: str) -> dict | None:
    """The creation record at ``url`` (:data:`CREATING`, else one an earlier
    release wrote, :data:`.identity.LEGACY_CREATING`): ``None`` where there
    is none, ``{}`` where it cannot be read as one."""
    fs, root = fsspec.core.url_to_fs(url)
    for name in (CREATING, LEGACY_CREATING):
        try:
            record = json.loads(fs.cat_file(f"{root}/{name}"))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except (OSError, ValueError):
            return {}
        return record if isinstance(record, dict) else {}
    return None


def clear_interrupted(url: str) -> None:
    """Remove what an interrupted creation made (lock held): the arrays its
    record names, the root metadata and boardsweep's own folder, the record last."""
    record = creation_record(url) or {}
    arrays = record.get("arrays")
    remove_store(url, [str(a) for a in arrays] if isinstance(arrays, list) else [])
    _end(url)


def creating_line(url: str) -> str:
    """What a command that reads the store at ``url`` says of a store a run
    is creating (its pid, host and start), or whose creation was interrupted
    (and how to finish it)."""
    record = creation_record(url)
    if record is None:  # removed since the caller saw it: the creation ended, or a run cleared it
        return f"store {url}: a run was creating it a moment ago; read it again"
    pid, host = record.get("pid"), record.get("host")
    if not isinstance(pid, int) or not isinstance(host, str):
        who, live = "a run whose record is unreadable", False
    else:
        who, live = f"pid {pid} on host {host} since {record.get('since')}", host == socket.gethostname() and pid_alive(pid)
    if live:
        return f"store {url}: a run ({who}) is creating it now, nothing to read yet; read it again in a moment"
    if host is not None and host != socket.gethostname():
        return (f"store {url}: a run on another host ({who}) is creating it, or was interrupted while it did; "
                f"if it is gone, rerun `boardsweep run SPEC --store {url}` with the spec it ran to create it afresh")
    return (f"store {url}: a run creating it was interrupted ({who}) before anything was computed; rerun "
            f"`boardsweep run SPEC --store {url}` with the spec you ran to create it afresh")


def _create_array(group: zarr.Group, name: str, var: xr.Variable, encoding: dict | None,
                  overwrite: bool = False) -> None:
    """Array ``name`` of ``group`` as xarray's ``to_zarr`` creates it from
    ``var`` (its ``coordinates`` attribute already set): the fill value in
    the encoding (NaN for floats without one, else zarr's default), the
    ``_FillValue`` attribute as xarray encodes it (NaN for floats without
    one), ``encoding``'s chunks (else zarr's own choice); ``var``'s values
    written unless ``encoding`` says it starts empty."""
    attrs = dict(var.attrs)
    fill = (encoding or {}).get("fill_value")
    if fill is None and var.dtype.kind == "f":
        fill = np.nan
    marked = attrs.pop("_FillValue", np.nan if var.dtype.kind == "f" else None)  # xarray's default for floats
    if marked is not None:  # last, as xarray puts it
        attrs["_FillValue"] = _fill_attribute(marked, var.dtype)
    array = group.create_array(
        name, shape=var.shape, dtype=str if var.dtype.kind == "O" else var.dtype, fill_value=fill,
        chunks=(encoding or {}).get("chunks") or "auto", dimension_names=var.dims, overwrite=overwrite,
        attributes=_json(attrs))
    if encoding is None:
        array[...] = var.values


def _fill_attribute(value, dtype: np.dtype):
    """``_FillValue`` as xarray writes it in a zarr v3 attribute: a float as
    the base64 of its little-endian float64 bytes, an integer or boolean as itself."""
    if dtype.kind == "f":
        return base64.standard_b64encode(struct.pack("<d", float(value))).decode()
    return bool(value) if dtype.kind == "b" else int(value)


def _json(attrs: dict) -> dict:
    """``attrs`` as JSON holds them (numpy arrays and scalars as Python's, :func:`words.json_default`)."""
    return json.loads(json.dumps(attrs, default=json_default))


def mark_own_folder(url: str) -> None:
    """Write ``.boardsweep/zarr.json`` (:data:`OWN_FOLDER_META`) where it is missing."""
    fs, root = fsspec.core.url_to_fs(url)
    path = f"{root}/{OWN_FOLDER}/zarr.json"
    if not fs.exists(path):
        fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        fs.pipe_file(path, json.dumps(OWN_FOLDER_META, indent=2).encode())


def ensure_arrays(url: str, spec: Spec, layout: TaskLayout | None = None) -> list[str]:
    """Recreate the metadata of every array of ``spec``'s template (chunked as
    ``layout``, the store's) missing at ``url``.

    Completes a store whose creation was interrupted (disk full, process
    killed) and restores an array whose ``zarr.json`` was deleted; chunks
    already on disk are kept (the integrity check decides what is intact).
    Returns the names recreated.
    """
    fs, root = fsspec.core.url_to_fs(url)
    ds, encoding = skeleton(spec, spec.game, layout)
    mark_own_folder(url)
    missing = [str(n) for n in ds.variables if not _array_metadata(fs, f"{root}/{n}/zarr.json")]
    for name in missing:  # a garbled zarr.json (damage, a write cut short): rewritten from the spec below
        if fs.exists(f"{root}/{name}/zarr.json"):
            fs.rm_file(f"{root}/{name}/zarr.json")
    stale = [c for c in _stale_coordinates(url, ds) if c not in missing]
    if not missing and not stale:
        return []
    variables, _ = xr.conventions.encode_dataset_coordinates(ds)
    with quiet():
        group = zarr.open_group(url, mode="r+", use_consolidated=False)
        for name in missing + stale:  # a stale coordinate's array replaced whole; chunks of the others kept
            _create_array(group, name, variables[name], encoding.get(name), overwrite=name in stale)
        zarr.consolidate_metadata(group.store)
    return missing + stale


def _array_metadata(fs, path: str) -> bool:
    """Whether ``path`` holds an array's ``zarr.json`` (missing or garbled: False)."""
    try:
        meta = json.loads(fs.cat_file(path))
    except FileNotFoundError:
        return False
    except ValueError:
        return False
    return isinstance(meta, dict) and meta.get("node_type") == "array" and isinstance(meta.get("shape"), list)


def _stale_coordinates(url: str, ds: xr.Dataset) -> list[str]:
    """Coordinates whose stored values are unreadable or differ from the spec's
    (a creation stopped between a coordinate's metadata and its values)."""
    stale = []
    with quiet():
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
    the store's ``arrays`` attribute), root metadata and its own folder's
    records, but the lock of the run that removes them (:data:`.lock.LOCK_NAME`);
    anything else in the folder (a user's files) stays."""
    fs, root = fsspec.core.url_to_fs(url)
    ours = set(names if names is not None else (read_attrs(url, check=False).get("arrays") or legacy_arrays(url)))
    for entry in fs.ls(root, detail=False):
        name = Path(entry).name
        if name in ours and fs.isdir(entry):
            fs.rm(entry, recursive=True)
    if fs.exists(f"{root}/zarr.json"):
        fs.rm(f"{root}/zarr.json")
    own = f"{root}/{OWN_FOLDER}"
    if fs.isdir(own):  # its records; the lock of the run doing this (and its creation record) kept
        for entry in fs.ls(own, detail=False):
            if Path(entry).name not in _KEPT:
                fs.rm(entry, recursive=True)
    elif fs.exists(own):
        fs.rm(own)


def legacy_arrays(url: str) -> list[str]:
    """Array names of a store made before ``arrays`` was recorded: all its arrays."""
    with quiet():
        return list(zarr.open_group(url, mode="r").array_keys())


def rebuild_root(url: str, spec: Spec) -> str:
    """Write the root metadata (``zarr.json``: the attributes and the
    consolidated metadata) of a store that lost it, its arrays and task
    records intact, from ``spec``; return what was done, in words.

    ``spec`` must describe the arrays found: the ``done`` array's shape and
    the coordinates' values (grid axes, checkpoints, labels) are compared
    with it first, and :class:`StoreMismatch` (one line, nothing touched)
    says what differs.  The task size is the ``done`` array's chunk (grid
    points along the grid axes, replicates along ``replicate``).  A packed store kept its layout record in the lost
    metadata, so it is refused too.  The cells are then checked by the run
    as usual: the task records are bound to the sweep that wrote them
    (:mod:`.writes`), so cells of another seed are recomputed.
    """
    fs, root = fsspec.core.url_to_fs(url)
    lost = f"store {url} has lost its root metadata (zarr.json; its arrays and task records are there)"
    try:
        done = json.loads(fs.cat_file(f"{root}/done/zarr.json"))
        shape, chunk = list(done["shape"]), [int(c) for c in done["chunk_grid"]["configuration"]["chunk_shape"]]
        block = chunk[-1]
        separator = done.get("chunk_key_encoding", {}).get("configuration", {}).get("separator", "/")
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        raise StoreMismatch(f"{lost} and no readable done array either: nothing can be rebuilt; replace it "
                            f"with `boardsweep run SPEC --store {url} --overwrite`") from None
    expected = [*spec.shape, spec.slots]
    if shape != expected:
        raise StoreMismatch(f"{lost}, and its done array has shape {shape}, {spec.source} says {expected}: "
                            f"rerun with the spec that made it to rebuild it, or replace it with --overwrite")
    if separator == PACKED_SEPARATOR or not 1 <= block <= max(spec.replicates, 1):
        raise StoreMismatch(f"{lost}; it was packed, and its layout record was in that metadata: replace it "
                            f"with `boardsweep run SPEC --store {url} --overwrite`")
    layout = TaskLayout(block, tuple(chunk[:-1]), RECORDED)  # the store's chunks, however chosen
    ds, _ = skeleton(spec, spec.game, layout)
    attrs = _json(dict(ds.attrs))
    if old := fixed_width_text(url, [str(n) for n in ds.variables if ds[n].dtype.kind == "O"]):  # no mixed formats
        raise StoreMismatch(f"{lost}; it was written in an older store format (its {old[0]!r} holds fixed-width "
                            f"text): replace it with `boardsweep run SPEC --store {url} --overwrite`")
    if old := _int64_where_float(url, [str(n) for n in ds.data_vars if integers.INTEGER_ATTR in ds[n].attrs]):
        raise StoreMismatch(f"{lost}; it was written in an older store format (its {old[0]!r} holds int64 "
                            f"where format {metadata.STORE_FORMAT} keeps float64): replace it with "
                            f"`boardsweep run SPEC --store {url} --overwrite`")
    wrong = check_labels(url, attrs)
    if wrong:
        name, why = next(iter(wrong.items()))
        raise StoreMismatch(f"{lost}, and its coordinate {name!r} {why.replace('the spec recorded in the store', spec.source)}: "
                            "rerun with the spec that made it to rebuild it, or replace it with --overwrite")
    attrs["history"] = str(attrs.get("history", "")).rstrip("\n") + "\n" + metadata.history_line(
        f"root metadata (zarr.json) lost: rebuilt from {spec.source}; cells checked against their records")
    meta = {"zarr_format": 3, "node_type": "group", "attributes": attrs}
    fs.pipe_file(f"{root}/zarr.json", json.dumps(meta, indent=2).encode())
    with quiet():
        zarr.consolidate_metadata(url)
    return f"root metadata (zarr.json) was missing: rebuilt from {spec.source}"


def _int64_where_float(url: str, names: list[str]) -> list[str]:
    """The arrays among ``names`` (float64 integers in this format,
    :mod:`.integers`) that the store at ``url`` holds as integers (format 5
    and before)."""
    return [name for name, kind in data_types(url, names).items()
            if isinstance(kind, str) and kind.startswith(("int", "uint"))]


