"""The report's folder: built in a staging folder, then published over the earlier report,
removing only the files a report recorded in its manifest (:data:`MANIFEST`)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path


from ...errors import ReportFolderError


#: The report's record of the files it wrote into its folder (read by the next report there).
MANIFEST = ".boardsweep-report.json"


#: Where a report is built before it replaces the folder's earlier report (left by a killed run: removed).
_STAGING = ".boardsweep-report-partial"


#: Files every report writes: a folder holding one that no report recorded is refused before any work.
_ALWAYS = ("index.html", "summary.json", "report.json")


def default_out_dir(store: str) -> Path:
    """The report folder beside a local store: ``results/x.zarr`` ->
    ``results/x.report``; a store behind a URL: ``x.report`` in the working folder."""
    name = Path(store.rstrip("/")).name.removesuffix(".zarr") + ".report"
    if "://" in store and not store.startswith("file://"):
        return Path(name)
    return Path(store.removeprefix("file://").rstrip("/")).with_name(name)


def _recorded(out: Path) -> set[str]:
    """The files an earlier report recorded writing in ``out``: its manifest's
    list; for a report made before manifests, the files its ``report.json``
    names (page, figures with their SVG copies, tables)."""
    for name, read in ((MANIFEST, lambda m: m.get("files")), ("report.json", _legacy_files)):
        try:
            meta = json.loads((out / name).read_text())
        except (OSError, ValueError):
            continue
        files = read(meta) if isinstance(meta, dict) else None
        if isinstance(files, list):
            return {f for f in files if isinstance(f, str) and f == Path(f).name}
    return set()


def _legacy_files(meta: dict) -> list[str] | None:
    if not {"figures", "tables", "timing_s"} <= set(meta):
        return None
    figures = [f for name in meta["figures"] for f in (name, str(Path(name).with_suffix(".svg")))]
    return [*_ALWAYS, *figures, *(t["csv"] for t in meta["tables"].values())]


def _foreign(out: Path, names, recorded: set[str]) -> list[str]:
    return sorted(n for n in names if n not in recorded and os.path.lexists(out / n))


def _start(out: Path) -> tuple[Path, set[str]]:
    """Check ``out`` and make a fresh staging folder in it; return that and the
    files the earlier report there recorded.  Refused (nothing written): a page
    or table of the report's names that no boardsweep report recorded."""
    recorded = _recorded(out) if out.is_dir() else set()
    theirs = _foreign(out, _ALWAYS, recorded)
    if theirs:
        raise ReportFolderError(f"report folder {out} holds {', '.join(theirs)} that boardsweep did not write; "
                                "choose a new or empty folder with --out (nothing was written)")
    staging = out / _STAGING
    try:
        out.mkdir(parents=True, exist_ok=True)
        if staging.is_dir():  # a killed report's leftovers
            shutil.rmtree(staging)
        staging.mkdir()
    except OSError as exc:
        raise ReportFolderError(f"report folder {out}: cannot write the report there ({exc.strerror or exc})") from None
    return staging, recorded


def _write_manifest(out: Path, files, store: str | None, complete: bool) -> None:
    tmp = out / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps({"boardsweep_report": 1, "store": store, "complete": complete,
                               "files": sorted(files)}, indent=1))
    os.replace(tmp, out / MANIFEST)


def _publish(out: Path, staging: Path, recorded: set[str], store: str | None) -> list[str]:
    """Replace the earlier report's files in ``out`` by the new ones in
    ``staging``: only files a report recorded are removed, a file of the new
    report's names that none recorded refuses it (the staging folder removed).
    The manifest lists every file that may exist before any is removed or
    moved, so a report killed here leaves nothing the next run will not remove."""
    new = sorted(p.name for p in staging.iterdir())
    theirs = _foreign(out, new, recorded)
    if theirs:
        shutil.rmtree(staging)
        raise ReportFolderError(f"report folder {out} holds {', '.join(theirs[:3])} that boardsweep did not "
                                "write; choose a new or empty folder with --out (nothing was written)")
    _write_manifest(out, recorded | set(new), store, complete=False)
    for name in sorted(recorded - set(new)):
        path = out / name
        if path.is_file() or path.is_symlink():
            path.unlink()
    for name in new:
        os.replace(staging / name, out / name)
    _write_manifest(out, new, store, complete=True)
    staging.rmdir()
    return new
