"""Reproducibility checks: the digest of a store, and re-running a spec to
compare with a store or a recorded digest.

Integers (counts, events, rolls, done masks) must match bit for bit.  Floats
(exact answers, anything a solver computes) must match within a tolerance,
because BLAS, LAPACK and sparse solvers round differently on different CPUs:
``a`` and ``b`` agree when ``|a - b| <= FLOAT_ATOL + FLOAT_RTOL * max(|a|, |b|)``
(``FLOAT_RTOL = 1e-9``, ``FLOAT_ATOL = 1e-12``), or both are NaN.

A digest is a small JSON document::

    {
      "format": "boardsweep-digest/2",
      "sweep": "nightly",
      "spec_sha256": "...",              # SHA-256 of the spec text (informative)
      "spec_canonical_sha256": "...",    # SHA-256 of the canonical spec JSON (compared)
      "tolerance": {"rtol": 1e-9, "atol": 1e-12},
      "variables": {
        "counts": {"dtype": "<i8", "shape": [2, 2, 4, 5, 41], "sha256": "..."},
        "exact_frequency": {"dtype": "<f8", "shape": [2, 2, 41], "values": "..."},
        ...
      },
      "recorded_with": {"numpy_version": "...", ...},  # informative
      "partial": {"replicates_missing": 28, "replicates": 48, ...}  # only in a partial digest
    }

A digest is of a finished sweep: :func:`digest` refuses a store with cells
not done (:class:`StoreIncomplete`, one line saying how many), unless asked
for a partial digest, which records what was missing under ``partial``;
:func:`verify` refuses a partial digest as a reference.

Every integer or boolean data variable is hashed as stored (raw zarr values,
no decoding or masking): the SHA-256 of the array's bytes in C order, each
cell without a value as -1 where no cell holds the value -1, as format 5
stored it (so digests recorded before still verify), else the values with
the mark of no value and ``value -1`` after them
(:func:`boardsweep.pipeline.store.integers.canonical`).  Every float variable is recorded whole: ``values`` is the
base64 text of its zlib-compressed little-endian float64 bytes in C order, so
that a digest recorded on one CPU verifies on another.  ``dtype`` is numpy's
``dtype.str`` (byte order included).  Coordinates are not recorded: they
follow from the spec, which the canonical hash covers.

Specs are compared by canonical content (comments, layout and the store path do
not matter), as :func:`boardsweep.pipeline.store.check_spec` does.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import store
from .execute import run_sweep
from .growth import aligned
from ..store import normalize_url
from ..errors import StoreIncomplete
from ..store import MANIFEST_DIR, Damage, assert_intact, check_integrity
from .. import errors
from ..spec import Spec
from ..store import recorded_spec

__all__ = [
    "StoreIncomplete",
    "missing_cells",
    "DIGEST_FORMAT",
    "FLOAT_ATOL",
    "FLOAT_RTOL",
    "VerifyResult",
    "data_variables",
    "digest",
    "write_digest",
    "store_above",
    "check_digest_out",
    "load_digest",
    "compare_with_store",
    "compare_with_digest",
    "values_match",
    "verify",
]

DIGEST_FORMAT = "boardsweep-digest/2"
FLOAT_RTOL = 1e-9
FLOAT_ATOL = 1e-12
_INFO_KEYS = ("boardsweep_version", "numpy_version", "numba_version", "dask_version",
              "xarray_version", "zarr_version", "git_revision", "created")


@dataclass
class VerifyResult:
    """The outcome of a comparison: ``ok`` and, when not, what differs."""

    ok: bool
    against: str
    variables: int = 0
    differences: list[str] = field(default_factory=list)
    rerun_store: str | None = None

    @property
    def message(self) -> str:
        if self.ok:
            return (f"identical: {self.variables} variables match {self.against} "
                    f"(integers bit for bit, floats within rtol {FLOAT_RTOL:g})")
        first = self.differences[0]
        more = len(self.differences) - 1
        return first + (f" (and {more} more difference{'s' * (more > 1)})" if more else "")


def canonical_sha256(canonical_json: str) -> str:
    return hashlib.sha256(canonical_json.encode()).hexdigest()


def data_variables(url: str) -> list[str]:
    """The store's data variables in schema order: simulated, exact, masks;
    an older store's exact variables under their current names
    (``expected_rolls`` -> ``exact_expected_rolls``, :func:`_raw` reads them)."""
    attrs = store.read_attrs(url)
    renames = store.metadata.exact_renames(attrs)
    names = [*store.metadata.simulated_variables(attrs), *attrs.get("exact_variables", []), "done", "exact_done"]
    present = store.array_names(url)
    return [renames.get(n, n) for n in names if n in present]


def _stored_name(url: str, name: str) -> str:
    """The name array ``name`` (its current name) has in the store at ``url``."""
    stored = {new: old for old, new in store.metadata.exact_renames(store.read_attrs(url)).items()}
    return stored.get(name, name)


def _raw(url: str, name: str) -> np.ndarray:
    """Array ``name`` (its current name) as stored, cells without a value
    :data:`store.FILL` (:func:`store.read_raw`)."""
    return store.read_raw(url, _stored_name(url, name))


def _current_names(recorded: dict[str, Any], names: Any) -> dict[str, Any]:
    """A digest's variables under the names ``names`` use: one recorded before
    exact variables were all named ``exact_*`` (``expected_rolls``) is matched
    to its current name."""
    return {(store.metadata.EXACT_PREFIX + n if n not in names and store.metadata.EXACT_PREFIX + n in names
             else n): v for n, v in recorded.items()}


def _is_float(values: np.ndarray) -> bool:
    return values.dtype.kind in "fc"


def values_match(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cellwise agreement: integers exactly, floats within the stated tolerance.

    Floats agree when ``|a - b| <= FLOAT_ATOL + FLOAT_RTOL * max(|a|, |b|)``
    or both are NaN (``inf`` only matches itself).
    """
    if not (_is_float(a) or _is_float(b)):
        return a == b
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    both_nan = np.isnan(a) & np.isnan(b)
    with np.errstate(invalid="ignore"):
        close = np.abs(a - b) <= FLOAT_ATOL + FLOAT_RTOL * np.maximum(np.abs(a), np.abs(b))
    return both_nan | close | (a == b)


def _encode_floats(values: np.ndarray) -> str:
    raw = np.ascontiguousarray(values, dtype="<f8").tobytes(order="C")
    return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def _decode_floats(text: str, shape: list[int]) -> np.ndarray:
    raw = zlib.decompress(base64.b64decode(text))
    return np.frombuffer(raw, dtype="<f8").reshape(shape)


def _variable_entry(values: np.ndarray) -> dict[str, Any]:
    entry: dict[str, Any] = {"dtype": values.dtype.str, "shape": list(values.shape)}
    if _is_float(values):
        entry["values"] = _encode_floats(values)
    else:
        entry["sha256"] = hashlib.sha256(store.integers.canonical(values)).hexdigest()  # as recorded before
    return entry


def missing_cells(url: str, damage: Damage | None = None) -> dict[str, int]:
    """What the store at ``url`` lacks to be finished: ``replicates_missing``
    of ``replicates`` (cells a point's plan holds: every replicate, or with a
    precision target those it used), ``exact_missing`` of ``exact``
    (grid points without their exact answer, or the word that none exists)
    and ``points_running`` (precision rule not decided yet).  ``damage``:
    what :func:`check_integrity` found, whose done masks are used."""
    done = damage.done if damage is not None and damage.done is not None else store.read_done(url)
    exact_done = (damage.exact_done if damage is not None and damage.exact_done is not None
                  else store.read_exact_done(url))
    done, exact_done = np.asarray(done, dtype=bool), np.asarray(exact_done, dtype=bool)
    running = 0
    planned = np.ones(done.shape, dtype=bool)
    if "precision_state" in store.array_names(url):
        state, used = _raw(url, "precision_state"), _raw(url, "replicates_used")
        running = int((state == 0).sum())
        planned[...] = False
        for index in np.ndindex(*state.shape):
            planned[index][:int(used[index])] = True
    return {"replicates_missing": int((planned & ~done).sum()), "replicates": int(planned.sum()),
            "exact_missing": int((~exact_done).sum()), "exact": int(exact_done.size),
            "points_running": running}


def _missing_text(missing: Any) -> str:
    """:func:`missing_cells` in words (empty where nothing is missing)."""
    got = missing if isinstance(missing, dict) else {}
    parts = []
    if got.get("replicates_missing"):
        parts.append(f"{got['replicates_missing']} of {got.get('replicates', '?')} replicates not done")
    if got.get("exact_missing"):
        parts.append(f"{got['exact_missing']} of {got.get('exact', '?')} exact answers not computed")
    if got.get("points_running"):
        parts.append(f"{got['points_running']} grid points still short of their precision target")
    return ", ".join(parts)


def digest(url: str, partial: bool = False) -> dict[str, Any]:
    """The digest of the store at ``url`` (see the module docstring).

    Raises :class:`StoreIncomplete` (one line, how many cells are missing)
    where the sweep is not finished, unless ``partial``: the digest then
    records what is missing under ``partial``."""
    attrs = store.read_attrs(url)
    if "spec_canonical" not in attrs:
        raise store.StoreMismatch(f"{url} is not a boardsweep sweep store")
    damage = check_integrity(url, attrs)
    assert_intact(url, damage, attrs)  # a digest is of intact data only
    missing = missing_cells(url, damage)
    unfinished = _missing_text(missing)
    if unfinished and not partial:
        raise StoreIncomplete(
            f"store {url} is incomplete: {unfinished}; a digest records a finished sweep: finish it with "
            f"`boardsweep run SPEC --store {url}`, or record a digest marked partial with --partial")
    variables = {name: _variable_entry(_raw(url, name)) for name in data_variables(url)}
    return {
        "format": DIGEST_FORMAT,
        "sweep": attrs.get("sweep"),
        "spec_sha256": attrs.get("spec_sha256"),
        "spec_canonical_sha256": canonical_sha256(attrs["spec_canonical"]),
        "tolerance": {"rtol": FLOAT_RTOL, "atol": FLOAT_ATOL},
        "variables": variables,
        "recorded_with": {k: attrs[k] for k in _INFO_KEYS if k in attrs},
        **({"partial": missing} if unfinished else {}),
    }


def store_above(path: str | Path) -> Path | None:
    """The boardsweep store folder ``path`` is in or is (a folder whose
    ``zarr.json`` says it is a sweep store, or that holds boardsweep's
    manifests), looking at every folder above it, as written and with its
    symlinks resolved; None when there is none.  No command writes there."""
    import os

    found = None
    for start in dict.fromkeys((Path(os.path.abspath(path)), Path(os.path.realpath(path)))):
        found = found or next((d for d in (start, *start.parents) if _is_store(d)), None)
    return found


def _is_store(folder: Path) -> bool:
    """A folder holding boardsweep's checksum records, or whose root metadata records a sweep."""
    from ... import xarray_backend

    return (folder / MANIFEST_DIR).is_dir() or xarray_backend.records_a_sweep(
        xarray_backend.root_metadata(folder))


def check_digest_out(out: str | Path) -> None:
    """Refuse (:class:`InputError`, one line, nothing written) a digest file
    inside a sweep store, or over an existing file that is not a digest."""
    inside = store_above(out)
    if inside is not None:
        raise errors.InputError(f"--out {out}: inside the sweep store {inside}; a digest is written outside "
                                "the store (nothing was written)")
    path = Path(out)
    if path.exists() or path.is_symlink():
        try:
            ours = str(json.loads(path.read_text()).get("format", "")).startswith("boardsweep-digest/")
        except (OSError, ValueError, AttributeError):
            ours = False
        if not ours:
            raise errors.InputError(f"--out {out}: a file that is not a boardsweep digest is there; choose "
                                    "another path or move it away (nothing was written)")


def write_digest(url: str, out: str | Path | None = None, partial: bool = False) -> str:
    """The digest of ``url`` as JSON text; also written to ``out`` when given
    (``partial``: of an unfinished store too, :func:`digest`): refused, before
    any work, inside a store or over a file that is not a digest (:func:`check_digest_out`)."""
    if out is not None:
        check_digest_out(out)
    text = json.dumps(digest(url, partial), indent=2, sort_keys=True) + "\n"
    if out is not None:
        Path(out).write_text(text)
    return text


def load_digest(path: str | Path) -> dict[str, Any]:
    """Read a digest file (ValueError when it is not one)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable digest ({exc})") from None
    if isinstance(data, dict) and data.get("format") == "boardsweep-digest/1":
        raise ValueError(
            f"{path}: a digest of format 'boardsweep-digest/1' holds float hashes that cannot be "
            f"compared within a tolerance; record it again with `boardsweep digest` "
            f"(format {DIGEST_FORMAT!r})"
        )
    if not isinstance(data, dict) or data.get("format") != DIGEST_FORMAT:
        raise ValueError(f"{path}: not a boardsweep digest (expected format {DIGEST_FORMAT!r})")
    return data


def _coordinate_labels(url: str, name: str, index: tuple[int, ...]) -> str:
    return store.coordinate_labels(url, _stored_name(url, name), index)


def _aligned(spec: Spec, url: str) -> Spec:
    """``spec`` with its grid axes in the store's order (a grown store has its
    new values at the end of each axis; cells are identified by value)."""
    return aligned(spec, recorded_spec(store.read_attrs(url)))


def compare_with_store(expected: str, actual: str) -> VerifyResult:
    """Compare the data variables of two stores: integers bit for bit, floats
    within the tolerance of :func:`values_match`.

    Each difference names the variable and, for values, the first differing
    cell by its coordinates with both values and the number of cells differing.
    """
    result = VerifyResult(ok=True, against=expected)
    assert_intact(expected)  # compared only where its data is intact
    old = store.read_attrs(expected).get("spec_canonical")
    new = store.read_attrs(actual).get("spec_canonical")
    if old != new:
        result.differences.append(f"the store {expected} was made by a different spec than the re-run")
    names_a, names_b = data_variables(expected), data_variables(actual)
    for name in names_a + [n for n in names_b if n not in names_a]:
        if name not in names_b or name not in names_a:
            where = actual if name not in names_b else expected
            result.differences.append(f"variable {name!r} is missing from {where}")
            continue
        a, b = _raw(expected, name), _raw(actual, name)
        if a.dtype != b.dtype or a.shape != b.shape:
            result.differences.append(
                f"variable {name!r}: dtype/shape {a.dtype.str}{list(a.shape)} in {expected}, "
                f"{b.dtype.str}{list(b.shape)} in the re-run"
            )
            continue
        result.variables += 1
        unequal = ~values_match(a, b)
        if unequal.any():
            cell = tuple(int(i) for i in np.argwhere(unequal)[0]) if a.ndim else ()
            result.differences.append(
                f"variable {name!r} differs at {_coordinate_labels(expected, name, cell) or 'its only cell'}: "
                f"{a[cell].item()!r} in {expected}, {b[cell].item()!r} in the re-run "
                f"({int(unequal.sum())} of {unequal.size} cells differ)"
            )
    result.ok = not result.differences
    return result


def compare_with_digest(recorded: dict[str, Any], actual: str, against: str = "the digest") -> VerifyResult:
    """Compare the store ``actual`` with a recorded digest, variable by variable:
    integer hashes must be equal, float values within :func:`values_match`."""
    result = VerifyResult(ok=True, against=against)
    now = digest(actual)
    if recorded.get("spec_canonical_sha256") != now["spec_canonical_sha256"]:
        result.differences.append(f"{against} was recorded for a different spec than the re-run")
    got = now["variables"]
    want = _current_names(recorded.get("variables", {}), got)
    for name in list(want) + [n for n in got if n not in want]:
        if name not in got or name not in want:
            where = "the re-run" if name not in got else against
            result.differences.append(f"variable {name!r} is missing from {where}")
            continue
        w, g = want[name], got[name]
        if (w["dtype"], list(w["shape"])) != (g["dtype"], g["shape"]):
            result.differences.append(
                f"variable {name!r}: dtype/shape {w['dtype']}{w['shape']} in {against}, "
                f"{g['dtype']}{g['shape']} in the re-run"
            )
            continue
        result.variables += 1
        difference = _entry_difference(name, w, g, actual, against)
        if difference:
            result.differences.append(difference)
    result.ok = not result.differences
    return result


def _entry_difference(name: str, want: dict, got: dict, url: str, against: str) -> str | None:
    """How a variable's digest entry ``got`` (of store ``url``) differs from ``want``, if it does."""
    if "sha256" in want:
        if want["sha256"] == got.get("sha256"):
            return None
        return (f"variable {name!r} differs: SHA-256 {want['sha256'][:16]}... in {against}, "
                f"{str(got.get('sha256'))[:16]}... in the re-run")
    expected = _decode_floats(want["values"], want["shape"])
    actual = _decode_floats(got["values"], got["shape"])
    unequal = ~values_match(expected, actual)
    if not unequal.any():
        return None
    cell = tuple(int(i) for i in np.argwhere(unequal)[0]) if expected.ndim else ()
    return (
        f"variable {name!r} differs beyond rtol {FLOAT_RTOL:g} at "
        f"{_coordinate_labels(url, name, cell) or 'its only cell'}: {expected[cell].item()!r} in "
        f"{against}, {actual[cell].item()!r} in the re-run ({int(unequal.sum())} of {unequal.size} "
        "cells differ)"
    )


def is_digest_file(path: str) -> bool:
    p = Path(path)
    return p.is_file()


def verify(spec: Spec, against: str, *, rerun_store: str | None = None, workers: int | None = None,
           scheduler: str | None = None, security=None, on_start=None, on_progress=None) -> VerifyResult:
    """Re-run ``spec`` into a fresh store and compare it with ``against``.

    ``against`` is a store (compared cell by cell) or a digest file (compared
    variable by variable).  The spec is checked against it before anything
    runs.  The re-run goes to ``rerun_store`` (kept; it must not exist yet) or
    to a temporary directory that is removed afterwards.
    """
    reference = _reference(spec, against)
    if isinstance(reference, VerifyResult):  # a reference of another spec: nothing to run
        return reference
    spec, compare = reference
    tmp = None
    if rerun_store is None:
        tmp = tempfile.mkdtemp(prefix="boardsweep-verify-")
        url = str(Path(tmp) / f"{spec.name}.zarr")
    else:
        url = normalize_url(rerun_store)
        if Path(url).exists():
            raise ValueError(f"--store {url} exists; verify re-runs into a new store")
    try:
        report = run_sweep(spec, url, workers=workers, scheduler=scheduler, security=security,
                           on_start=on_start, on_progress=on_progress)
        if not report.complete:
            raise RuntimeError(f"the re-run into {url} did not complete")
        result = compare(url)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    result.rerun_store = None if tmp is not None else url
    return result


def _reference(spec: Spec, against: str):
    """(``spec`` aligned with the reference ``against``, the function comparing
    a re-run's store with it), or the :class:`VerifyResult` of a reference
    that cannot be compared with ``spec``."""
    if is_digest_file(against):
        recorded = load_digest(against)
        if recorded.get("partial"):
            return VerifyResult(False, against, differences=[
                f"{against} is a partial digest, recorded of an unfinished store "
                f"({_missing_text(recorded['partial']) or 'cells missing'}); "
                "it cannot be a reference: record one of the finished sweep with `boardsweep digest`"])
        if recorded.get("spec_canonical_sha256") != canonical_sha256(spec.canonical_json()):
            return VerifyResult(False, against, differences=[
                f"{against} was recorded for a different spec than {spec.source} "
                "(canonical spec hashes differ); record a new digest with `boardsweep digest`"
            ])
        return spec, lambda url: compare_with_digest(recorded, url, against)
    against = normalize_url(against)
    if store.identity.inspect(against) == "rootless":
        raise errors.StoreDamaged(store.identity.rootless_line(against))
    if not store.store_exists(against):
        raise ValueError(f"--against {against}: neither a digest file nor a sweep store")
    try:
        spec = _aligned(spec, against)
        store.check_spec(against, spec)
    except store.StoreMismatch as exc:
        return VerifyResult(False, against, differences=[str(exc)])
    assert_intact(against)  # before the re-run: a damaged reference cannot be compared
    return spec, lambda url: compare_with_store(against, url)
