"""What is at a store's URL, and whether this code may read or add to it.

:func:`inspect` says what a URL holds (boardsweep recognises its own stores by
their attributes and never deletes anything else); :func:`read_attrs` reads a
store's attributes and checks its format (:func:`check_format`);
:func:`check_spec` and :func:`check_writable` refuse, in one line, a store
made by another spec or in an older format.
"""

from __future__ import annotations

import functools
import json
import re
from importlib.metadata import version
from pathlib import Path
from typing import Any, Mapping

import fsspec
import numpy as np
import zarr

from ...core.seeds import RNG_SCHEME
from . import metadata, writes
from .layout import json_document
from .lock import LEGACY_LOCK_NAME, LOCK_NAME, OWN_FOLDER, StoreLock, pid_alive, run_holds
from .zarr_private import quiet
from ..errors import RootDamaged, StoreMismatch, UnknownFormat
from ..plan import SEED_SCHEME
from ..spec import Spec

__all__ = ["held", "holds_a_file", "CREATING", "LEGACY_CREATING", "has_creation_record", "check_root", "store_exists", "inspect", "read_attrs", "check_format", "check_spec", "check_writable", "data_types", "fixed_width_text", "differences", "expected_coordinates", "check_labels", "read_coordinates", "rootless_line", "lock_only_line", "lock_files"]

#: The creation record (:mod:`.creation`), relative to the store's folder:
#: a file in boardsweep's own folder (a zarr group, as for the lock:
#: :mod:`.lock`), from before a store's first write to after its last.
CREATING = f"{OWN_FOLDER}/creating"

#: Where releases before this one wrote the creation record (beside the root
#: ``zarr.json``): one a killed run left there is still read, and cleared.
LEGACY_CREATING = ".boardsweep.creating"


def store_exists(url: str) -> bool:
    """Whether ``url`` holds a zarr group."""
    try:
        with quiet():
            zarr.open_group(url, mode="r")
        return True
    except (FileNotFoundError, zarr.errors.GroupNotFoundError, ValueError, KeyError):
        return False


def inspect(url: str, looks: int = 3) -> str:
    """What is at ``url``: ``absent``, ``empty`` (a folder holding nothing or only
    boardsweep's lock, :func:`lock_files`), ``file``, ``boardsweep`` (a store boardsweep made),
    ``zarr-group`` or ``zarr-array`` (someone else's), ``folder`` (other files),
    ``leftover`` (boardsweep's ``.boardsweep/`` folder without a store: a
    removal cut short), ``rootless`` (that folder and arrays, but no root
    ``zarr.json``: a store whose root metadata was lost), ``unreadable``
    (a zarr.json that does not parse) or ``creating`` (a store a run is
    creating, or was when it was interrupted: its creation record,
    :data:`CREATING`, is there).  Asked of the storage now: never of a
    listing cached before (object storage's filesystem keeps its listings,
    and another process may have made or changed the store since).  A root
    ``zarr.json`` listed and gone when read (a run clearing a creation a
    kill interrupted: the arrays, the root, then the record) is looked at
    again, up to ``looks`` times in all: never ``unreadable`` for that."""
    fs, root = fsspec.core.url_to_fs(url)
    fs.invalidate_cache(root)
    if not fs.exists(root):
        return "absent"
    if fs.isfile(root):
        return "file"
    names = {Path(p).name for p in fs.ls(root, detail=False)}
    if LEGACY_CREATING in names or (OWN_FOLDER in names and has_creation_record(fs, root)):
        return "creating"
    names = held(fs, root, {n for n in names if not n.startswith(f".{LEGACY_CREATING}.")})  # a record's temporary file
    if lock_files(fs, root, names) is not None:
        return "empty"
    if "zarr.json" not in names and ".zgroup" not in names and ".zarray" not in names:
        if OWN_FOLDER not in names or lock_files(fs, root, {OWN_FOLDER}) is not None:  # a lock: no records
            return "folder"
        arrays = [n for n in names - {OWN_FOLDER} if fs.exists(f"{root}/{n}/zarr.json")]
        return "rootless" if arrays else "leftover"
    try:
        meta = json_document(fs.cat_file(f"{root}/zarr.json")) if "zarr.json" in names else {}
    except FileNotFoundError:  # removed since it was listed: what is there now
        return inspect(url, looks - 1) if looks > 1 else "unreadable"
    except (OSError, ValueError):
        return "unreadable"
    if meta.get("node_type") == "array" or ".zarray" in names:
        return "zarr-array"
    if "spec_canonical" in meta.get("attributes", {}):
        return "boardsweep"
    if has_creation_record(fs, root):  # a run began creating it after the listing: its root not yet described
        return "creating"
    if _describes_a_sweep(fs, root):  # a creation that ended between the root's read and the record's ask
        return "boardsweep"
    if OWN_FOLDER in names and run_holds(url):  # boardsweep's own folder, a run at work: its root in flux
        return "creating"
    return "zarr-group"


def held(fs, root: str, names: set[str]) -> set[str]:
    """``names`` (the entries of the folder ``root``) less the empty folders
    (:func:`holds_a_file`) where boardsweep's own folder is there and no root
    ``zarr.json``: what a run clearing or making a store has put there."""
    if "zarr.json" in names or OWN_FOLDER not in names:
        return names
    return {n for n in names if n == OWN_FOLDER or holds_a_file(fs, f"{root}/{n}")}


def holds_a_file(fs, path: str, budget: int = 64) -> bool:
    """Whether ``path`` is a file or a folder with a file somewhere inside:
    an object store (SeaweedFS) lists the folders of objects a run removed
    (a cleared array: ``done/c/0/...``) as empty folders, the last as a
    marker object named with a trailing ``/``: they hold nothing.  Looked at folder by folder, at most ``budget`` listings (more: True)."""
    todo = [path]
    for _ in range(budget):
        if not todo:
            return False
        folder = todo.pop()
        fs.invalidate_cache(folder)
        try:
            entries = fs.ls(folder, detail=True)
        except (FileNotFoundError, NotADirectoryError):
            continue
        entries = [e for e in entries if not e["name"].endswith("/")]  # a folder's own marker (an empty one's)
        if any(e.get("type") != "directory" for e in entries):
            return True
        todo += [e["name"] for e in entries if e["name"] != folder.rstrip("/")]  # not itself again
    return bool(todo)


def _describes_a_sweep(fs, root: str) -> bool:
    """Whether the root metadata of the folder ``root``, read now, carries a sweep's ``spec_canonical``
    (a creation writes it before it removes its record)."""
    try:
        return "spec_canonical" in json_document(fs.cat_file(f"{root}/zarr.json")).get("attributes", {})
    except (OSError, ValueError, AttributeError):
        return False


def rootless_line(url: str) -> str:
    """What a command that has no spec says of a ``rootless`` store (:func:`inspect`)."""
    return (f"store {url} is damaged: its root metadata (zarr.json) is missing, its arrays and task records "
            f"are there; rebuild it with `boardsweep run SPEC --store {url}` and the spec that made it "
            "(or replace it with --overwrite)")


def has_creation_record(fs, root: str) -> bool:
    """Whether the store folder ``root`` holds a creation record (:data:`CREATING`),
    read without a listing (a listing on object storage may be one cached before)."""
    try:
        fs.cat_file(f"{root}/{CREATING}")
    except FileNotFoundError:
        return False
    except (IsADirectoryError, NotADirectoryError):
        return False
    return True


def lock_files(fs, root: str, names: set[str]) -> list[str] | None:
    """The lock files in the folder ``root`` whose entries are ``names`` (a
    creation record's temporary files left out) where it holds nothing but
    boardsweep's lock: its own folder holding only the lock
    (:data:`.lock.LOCK_NAME`; or nothing, or the temporary files a killed
    run left there, named with a leading dot: the lock's, the creation
    record's, a storage probe),
    and an earlier release's lock (:data:`.lock.LEGACY_LOCK_NAME`);
    ``[]`` for a folder holding nothing of that; None where it holds anything else."""
    if names - {LEGACY_LOCK_NAME, OWN_FOLDER}:
        return None
    found = [f"{root}/{LEGACY_LOCK_NAME}"] if LEGACY_LOCK_NAME in names else []
    if OWN_FOLDER in names:
        own = f"{root}/{OWN_FOLDER}"
        try:
            if not fs.isdir(own):
                return None if fs.exists(own) else found  # a file of that name; or removed (below)
            inside = {Path(p).name for p in fs.ls(own, detail=False)}
        except FileNotFoundError:  # removed meanwhile: a run released the lock that alone made it
            return found
        lock = LOCK_NAME.rsplit("/", 1)[1]
        if {n for n in inside if not n.startswith(".")} - {lock}:  # a dot: a temporary file of a run, a probe
            return None
        found += [f"{root}/{LOCK_NAME}"] * (lock in inside)
    return found


def lock_only_line(url: str) -> str | None:
    """What a command that reads a store says of a folder holding only
    boardsweep's lock (:func:`lock_files`: a run killed after taking it,
    before its store was made; or one making it now): the run's pid, host
    and start, and how to resume; None for anything else (a store, an empty
    folder, no folder)."""
    try:
        fs, root = fsspec.core.url_to_fs(url)
        names = {Path(p).name for p in fs.ls(root, detail=False)} if fs.isdir(root) else set()
        if not lock_files(fs, root, held(fs, root, {n for n in names if not n.startswith(f".{LEGACY_CREATING}.")})):
            return None
        lock = StoreLock(url)
        holder = lock.holder() or {}
    except Exception:  # noqa: BLE001 - a URL or storage the commands' own checks name in their line
        return None
    who = (f"pid {holder['pid']} on host {holder['host']} since {holder.get('since')}" if holder
           else "a run whose record is unreadable")
    resume = f"`boardsweep run SPEC --store {url}` with the spec you ran"
    if holder and holder["host"] == lock.me["host"] and pid_alive(holder["pid"]):
        return f"store {url}: a run ({who}) is making the store now, nothing to read yet; rerun in a moment"
    if holder and holder["host"] != lock.me["host"]:
        return (f"store {url}: holds only the lock of a run on another host ({who}), no store yet: that run is "
                f"making it or was interrupted before; if it is gone, remove {lock.found} and resume with {resume}")
    return (f"store {url}: a run was interrupted before it made the store (only its lock is there, {who}); "
            f"resume with {resume} (the stale lock is taken over)")


def read_attrs(url: str, check: bool = True) -> dict[str, Any]:
    """The store's attributes; with ``check``, those of a boardsweep store in
    a format this code knows (:func:`check_format`)."""
    with quiet():
        group = zarr.open_group(url, mode="r")
        attrs = dict(group.attrs)
    if check and "spec_canonical" in attrs:
        check_format(url, attrs)
        check_root(url, attrs, _done_dims(group))
    return attrs




@functools.lru_cache(maxsize=2)
def canonical_of(text: str) -> dict[str, Any]:
    """A store's ``spec_canonical`` parsed: once per text in a process (10 MB
    at 10^7 grid points, read by each check).  Shared: read it, never change it."""
    return json.loads(text)


def check_root(url: str, attrs: Mapping[str, Any], done_dims: list[str] | None = None) -> None:
    """Raise :class:`RootDamaged` (one line) unless the attributes every
    command reads are well formed: ``spec_canonical`` a JSON object with a
    ``grid`` table, ``grid_axes`` its axes (in the order of the ``done``
    array's dimensions, ``done_dims``, where known), ``replicates_per_task``
    a positive integer.  A garbled or swapped attribute would otherwise
    fail deep in a command, or label the cells wrongly."""
    problems = []
    try:
        canonical = canonical_of(attrs["spec_canonical"])
        grid = canonical["grid"]
        if not isinstance(grid, dict):
            raise TypeError
    except (TypeError, ValueError, KeyError):
        canonical, grid = None, None
        problems.append(f"spec_canonical {_short(attrs.get('spec_canonical'))} is not a spec's canonical JSON")
    axes = attrs.get("grid_axes", [])
    if not isinstance(axes, list) or not all(isinstance(a, str) for a in axes) or len(set(axes)) != len(axes):
        problems.append(f"grid_axes {_short(axes)} is not a list of distinct axis names")
    elif grid is not None and set(axes) != set(grid):
        problems.append(f"grid_axes {axes} are not the spec's grid axes {list(grid)}")
    elif done_dims is not None and axes != [d for d in done_dims if d != "replicate"]:
        problems.append(f"grid_axes {axes} are not in the order of the arrays' dimensions "
                        f"{[d for d in done_dims if d != 'replicate']}")
    block = attrs.get("replicates_per_task")
    if isinstance(block, bool) or not str(block).isdigit() or int(block) < 1:
        problems.append(f"replicates_per_task {_short(block)} is not a positive integer")
    problems += _variable_lists(attrs)
    if problems:
        raise RootDamaged(f"store {url} has damaged root metadata (its zarr.json attributes: "
                          f"{'; '.join(problems)}); nothing was read or changed: restore zarr.json from a copy, "
                          "or replace the store with `boardsweep run SPEC --store URL --overwrite`")


def _variable_lists(attrs: Mapping[str, Any]) -> list[str]:
    """What is wrong with the lists naming the store's variables: each a list
    of names, every one an array the store lists in ``arrays``."""
    arrays = attrs.get("arrays")
    known = set(arrays) if isinstance(arrays, list) and all(isinstance(a, str) for a in arrays) else None
    problems = []
    for key in ("simulated_variables", "exact_variables"):
        names = attrs.get(key, [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            problems.append(f"{key} {_short(names)} is not a list of variable names")
        elif known is not None and not set(names) <= known:
            problems.append(f"{key} names {sorted(set(names) - known)}, which the store does not hold")
    return problems


def _done_dims(group) -> list[str] | None:
    """The ``done`` array's dimension names from the group's consolidated metadata (no extra read)."""
    try:
        meta = group.metadata.consolidated_metadata
        names = meta.metadata["done"].dimension_names if meta is not None else None
    except (AttributeError, KeyError, TypeError):
        return None
    return [str(n) for n in names] if names else None


def check_format(url: str, attrs: Mapping[str, Any]) -> None:
    """Raise :class:`UnknownFormat` (one line) unless the store's format, its
    integrity scheme, its random and seed schemes are the ones this code
    writes, and no newer boardsweep release (major.minor) wrote it."""
    ours = version("boardsweep")
    problems = []
    if metadata.store_format(attrs) not in metadata.READABLE_FORMATS:
        problems.append(f"boardsweep_format {attrs.get('boardsweep_format')!r}, this version reads "
                        f"{', '.join(map(str, metadata.READABLE_FORMATS))}")
    for key, known in (("integrity", writes.INTEGRITY_SCHEME), ("rng_scheme", RNG_SCHEME),
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
    old, new = canonical_of(attrs["spec_canonical"]), spec.canonical_data
    diffs = differences(old, new)
    if diffs:
        shown = "; ".join(f"{k}: {a} in the store, {b} in {spec.source}" for k, a, b in diffs[:5])
        more = "" if len(diffs) <= 5 else f" (and {len(diffs) - 5} more)"
        raise StoreMismatch(
            f"store {url} was made by a different spec ({shown}{more}); "
            "use --overwrite to replace it or choose another --store"
        )


def data_types(url: str, names: list[str]) -> dict[str, Any]:
    """Each readable array's ``data_type`` among ``names``, as its own
    ``zarr.json`` declares it (arrays whose metadata cannot be read are left
    out): what says a store's format where its root metadata is lost."""
    fs, root = fsspec.core.url_to_fs(url)
    found = {}
    for name in names:
        try:
            found[name] = json.loads(fs.cat_file(f"{root}/{name}/zarr.json")).get("data_type")
        except (OSError, ValueError, AttributeError):
            continue
    return found


def fixed_width_text(url: str, names: list[str]) -> list[str]:
    """The arrays among ``names`` that hold text in zarr-python's
    ``fixed_length_utf32`` (store formats 2 to 4; format 5 writes zarr's
    ``string``)."""
    return [name for name, kind in data_types(url, names).items()
            if isinstance(kind, dict) and kind.get("name") == "fixed_length_utf32"]


def check_writable(url: str, attrs: Mapping[str, Any] | None = None) -> None:
    """Raise :class:`StoreMismatch` (one line) unless the store at ``url`` has
    the layout this boardsweep writes (:data:`metadata.STORE_FORMAT`); an
    older store is still read by query, status, report and verify."""
    found = metadata.store_format(read_attrs(url) if attrs is None else attrs)
    if found not in metadata.WRITABLE_FORMATS:
        raise StoreMismatch(
            f"store {url} has store format {found}, written by an older boardsweep; this one writes "
            f"format {metadata.STORE_FORMAT} and cannot add to it (query, status, report and verify "
            "still read it): rerun with --overwrite, or --store NEW_PATH, to write it anew")


def differences(old: Any, new: Any, prefix: str = "") -> list[tuple[str, str, str]]:
    """Every key where two canonical specs differ, as (dotted key, old as JSON, new as JSON)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new)):
            sub = f"{prefix}.{key}" if prefix else key
            if key not in old or key not in new:
                out.append((sub, _show(old.get(key)), _show(new.get(key))))
            else:
                out.extend(differences(old[key], new[key], sub))
        return out
    return [] if old == new else [(prefix, _show(old), _show(new))]


def _show(value: Any) -> str:
    return "(absent)" if value is None else json.dumps(value)


def expected_coordinates(attrs: Mapping[str, Any]) -> dict[str, tuple[np.ndarray, ...]]:
    """The values each coordinate of a store must hold, as its recorded spec
    (``spec_canonical``) implies them: name -> the accepted forms of its
    values (grid axes, ``replicate``, ``checkpoint``, the game's labels,
    e.g. ``location``, and their names, ``location_name``; a label coordinate of an older store, stored as text,
    in that form too).  The labels of a game that is not installed, or that
    cannot give them without its files, are left out."""
    from .metadata import label_coordinate

    canonical = canonical_of(attrs["spec_canonical"])
    grid = canonical.get("grid", {})
    out: dict[str, tuple[np.ndarray, ...]] = {}
    for axis, values in grid.items():  # text as <U, made whole (compared as text: :func:`_same`)
        array = np.asarray(values)
        out[axis] = (array if array.dtype.kind == "U" else metadata.axis_values(list(values)),)
    run = canonical.get("run", {})
    slots = canonical.get("precision", {}).get("max_replicates") or run.get("replicates")
    if isinstance(slots, int):
        out["replicate"] = (np.arange(slots, dtype=np.int64),)
    out["checkpoint"] = (np.asarray(canonical.get("checkpoints", []), dtype=np.int64),)
    try:
        from ...core.games import get_game

        game = get_game(str(canonical.get("game")))
        params = {**canonical.get("params", {}), **{a: v[0] for a, v in grid.items() if v}}
        labels = game.coords_for(params)
    except Exception:  # noqa: BLE001 - a game not installed here, a board file gone: its labels go unchecked
        return out
    for dim, values in labels.items():
        if dim not in out:
            out[dim] = (label_coordinate(values)[0], np.asarray([str(x) for x in values], dtype=str))
        names = getattr(game, "label_names", {}).get(dim)
        if names is not None and len(names) == len(values):  # e.g. Monopoly's location_name
            out[f"{dim}_name"] = (np.asarray(names, dtype=str),)
    return out


def read_coordinates(url: str, names: list[str]) -> dict[str, np.ndarray | None]:
    """The stored values of the 1-D arrays ``names`` (``None`` where one is
    missing or unreadable), read through zarr."""
    out: dict[str, np.ndarray | None] = {}
    with quiet():
        for name in names:  # each array by itself: a store whose root metadata is lost is read too
            try:
                out[name] = np.asarray(zarr.open_array(store=url, path=name, mode="r")[...])
            except Exception:  # noqa: BLE001 - missing or unreadable: the caller says so
                out[name] = None
    return out


def check_labels(url: str, attrs: Mapping[str, Any],
                 stored: Mapping[str, np.ndarray | None] | None = None) -> dict[str, str]:
    """The coordinates of the store at ``url`` whose values disagree with what
    its recorded spec implies (:func:`expected_coordinates`), each with why in
    words: a store whose labels are not its spec's answers for other cells
    than it names.  ``stored``: the coordinates' values where the caller has
    read them (one missing from it is not checked), else they are read."""
    if "spec_canonical" not in attrs:
        return {}
    try:
        expected = expected_coordinates(attrs)
    except (ValueError, TypeError, AttributeError):
        return {}  # an unreadable spec_canonical is reported where the spec is read
    if stored is None:
        stored = read_coordinates(url, list(expected))
    found = {}
    for name, forms in expected.items():
        if name not in stored:
            continue
        values = stored[name]
        if values is None:
            found[name] = "its values are missing or unreadable"
        elif not any(_same(values, form) for form in forms):
            found[name] = (f"holds {_listed(values)}, the spec recorded in the store says "
                           f"{_listed(forms[0])}")
    return found


def _same(stored: np.ndarray, expected: np.ndarray) -> bool:
    if stored.shape != expected.shape:
        return False
    if stored.dtype.kind in "OUT" and expected.dtype.kind in "OUT":  # text both: compared whole, as str() of each
        return bool(np.array_equal(_text(stored), _text(expected)))
    if stored.dtype.kind in "OUS" or expected.dtype.kind in "OUS":
        return [str(x) for x in stored.tolist()] == [str(x) for x in expected.tolist()]
    return bool(np.array_equal(stored, expected))


def _text(values: np.ndarray) -> np.ndarray:
    """``values`` as ``<U`` text, each value as ``str()`` gives it (an object
    array's items, a ``StringDType`` array's strings)."""
    if values.dtype.kind == "U":
        return values
    if values.dtype.kind == "T":
        width = int(np.strings.str_len(values).max()) if values.size else 1
        return values.astype(f"<U{max(width, 1)}")
    return values.astype(str)


def _listed(values: np.ndarray, limit: int = 8) -> str:
    items = [json.dumps(x) if isinstance(x, str) else str(x) for x in np.asarray(values).tolist()]
    shown = ", ".join(items[:limit]) + (f", ... ({len(items)} values)" if len(items) > limit else "")
    return f"[{shown}]"
