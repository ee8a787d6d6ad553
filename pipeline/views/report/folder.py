"""The report's folder: built in a staging folder, then published over the earlier report,
removing only the files a report recorded in its manifest (:data:`MANIFEST`) with the
SHA-256 their content still has: a manifest is a claim, the checksum its proof."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path


from ...errors import ReportFolderError, disk_full


#: The report's record of the files it wrote into its folder (read by the next report there).
MANIFEST = ".boardsweep-report.json"


#: Where a report is built before it replaces the folder's earlier report (left by a killed run: removed).
STAGING = ".boardsweep-report-partial"


#: Files every report writes: a folder holding one that no report recorded is refused before any work.
_ALWAYS = ("index.html", "summary.json", "report.json")


def default_out_dir(store: str, folder: Path | None) -> Path:
    """The report folder beside a local store: ``results/x.zarr`` ->
    ``results/x.report``; a store behind a URL: ``x.report`` in the working folder.

    ``folder``: the store's local folder, as the store answers it
    (``boardsweep.pipeline.store.local_root(store)``), ``None`` for object storage.
    """
    name = Path(store.rstrip("/")).name.removesuffix(".zarr") + ".report"
    return Path(name) if folder is None else folder.with_name(name)


def _sha256(path: Path) -> str | None:
    """The SHA-256 of the regular file at ``path`` (a symlink, folder or missing file: None)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    except OSError:
        return None


def _plain(name: object) -> bool:
    """A file name in the folder itself: no path, no ``..``, nothing absolute."""
    return isinstance(name, str) and name not in ("", ".", "..") and name == Path(name).name and "\\" not in name


def _recorded(out: Path) -> dict[str, str]:
    """The files in ``out`` a report can show it wrote: each listed in the
    manifest with a checksum its content still has ({name: sha256}).  A file
    listed that exists but is not shown ours (no checksum, another content, a
    symlink, a name outside the folder) refuses the folder (nothing written);
    so does a report whose manifest records no checksums (an earlier boardsweep's)."""
    try:
        meta = json.loads((out / MANIFEST).read_text())
    except (OSError, ValueError):
        meta = None
    if meta is None and _legacy(out):
        raise ReportFolderError(_unproven(out, "report.json", "is a report made before boardsweep kept checksums"))
    files = meta.get("files") if isinstance(meta, dict) else None
    if isinstance(files, list):  # an earlier boardsweep's manifest: names, no checksums
        if any(_plain(f) and os.path.lexists(out / f) for f in files):
            raise ReportFolderError(_unproven(out, MANIFEST, "records no checksums (an earlier boardsweep's)"))
        return {}
    ours: dict[str, str] = {}
    for name, sha in (files.items() if isinstance(files, dict) else ()):
        if not _plain(name):
            raise ReportFolderError(_unproven(out, MANIFEST, f"names {name!r}, outside the folder"))
        if not os.path.lexists(out / name):
            continue
        now = _sha256(out / name)
        if now is None or now not in ([sha] if isinstance(sha, str) else sha if isinstance(sha, list) else []):
            raise ReportFolderError(f"report folder {out} holds {name} that boardsweep did not write (its "
                                    f"content is not what {MANIFEST} records); move it away or choose a new or "
                                    "empty folder with --out (nothing was written)")
        ours[name] = now
    return ours


def _legacy(out: Path) -> bool:
    try:
        meta = json.loads((out / "report.json").read_text())
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and {"figures", "tables", "timing_s"} <= set(meta)


def _unproven(out: Path, name: str, why: str) -> str:
    return (f"report folder {out}: {name} {why}, so boardsweep cannot show which files there it wrote; "
            "remove the earlier report's files yourself or choose a new or empty folder with --out "
            "(nothing was written)")


def _foreign(out: Path, names, recorded) -> list[str]:
    return sorted(n for n in names if n not in recorded and os.path.lexists(out / n))


def start(out: Path, inside: Path | None = None) -> tuple[Path, dict[str, str]]:
    """Check ``out`` and make a fresh staging folder in it; return that and the
    files there an earlier report can show it wrote ({name: sha256}).  Refused
    (nothing written): ``out`` inside the sweep store ``inside`` (the caller's
    :func:`~boardsweep.pipeline.run.store_above`), a page or table of the report's
    names that no boardsweep report wrote, a manifest that cannot show its files are the report's."""
    if inside is not None:
        raise ReportFolderError(f"report folder {out}: inside the sweep store {inside}; a report is written "
                                "outside the store: choose another folder with --out (nothing was written)")
    recorded = _recorded(out) if out.is_dir() else {}
    theirs = _foreign(out, _ALWAYS, recorded)
    if theirs:
        raise ReportFolderError(f"report folder {out} holds {', '.join(theirs)} that boardsweep did not write; "
                                "choose a new or empty folder with --out (nothing was written)")
    staging = out / STAGING
    try:
        out.mkdir(parents=True, exist_ok=True)
        if staging.is_dir() and not staging.is_symlink():  # a killed report's leftovers
            shutil.rmtree(staging)
        staging.mkdir()
    except OSError as exc:
        if disk_full(exc):
            raise  # named by build_report: the disk is full
        raise ReportFolderError(f"report folder {out}: cannot write the report there ({exc.strerror or exc})") from None
    return staging, recorded


def _write_manifest(out: Path, files: dict, store: str | None, complete: bool) -> None:
    """The manifest: every file the report may have written, with the SHA-256
    of each content it may hold (a list of two while one is being replaced)."""
    tmp = out / (MANIFEST + ".tmp")
    try:
        tmp.write_text(json.dumps({"boardsweep_report": 2, "store": store, "complete": complete,
                                   "files": dict(sorted(files.items()))}, indent=1))
        os.replace(tmp, out / MANIFEST)
    except OSError:  # a full disk: no half-written manifest left beside the report
        tmp.unlink(missing_ok=True)
        raise


def publish(out: Path, staging: Path, recorded: dict[str, str], store: str | None) -> list[str]:
    """Replace the earlier report's files in ``out`` by the new ones in
    ``staging``: only files whose content is still what the earlier report
    recorded are removed or replaced; any other file of the new report's names
    refuses it (the staging folder removed).  The manifest lists every file
    that may exist, with its checksums, before any is removed or moved, so a
    report killed here leaves nothing the next run cannot show is its own."""
    new = {p.name: _sha256(p) for p in sorted(staging.iterdir())}
    changed = [n for n, sha in recorded.items() if os.path.lexists(out / n) and _sha256(out / n) != sha]
    theirs = _foreign(out, new, recorded) + changed
    if theirs:
        shutil.rmtree(staging)
        raise ReportFolderError(f"report folder {out} holds {', '.join(sorted(theirs)[:3])} that boardsweep did "
                                "not write; choose a new or empty folder with --out (nothing was written)")
    both = {n: [recorded[n], sha] if n in recorded and recorded[n] != sha else sha for n, sha in new.items()}
    _write_manifest(out, {**recorded, **both}, store, complete=False)
    for name in sorted(set(recorded) - set(new)):
        if os.path.lexists(out / name):
            (out / name).unlink()
    for name in new:
        os.replace(staging / name, out / name)
    _write_manifest(out, new, store, complete=True)
    staging.rmdir()
    return sorted(new)
