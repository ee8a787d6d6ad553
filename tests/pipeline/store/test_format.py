"""A store written in a format this code does not know (a newer boardsweep, an
unknown integrity, random or seed scheme, or one of them removed) is refused
in one line by every command, before anything is read or written."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import zarr

from clirun import run_cli
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec


@pytest.fixture(scope="module")
def made(tmp_path_factory, cluster2):
    from specs import TOY_SPEC  # tests/support is on sys.path

    folder = tmp_path_factory.mktemp("format")
    spec_path = folder / "toy.toml"
    spec_path.write_text(TOY_SPEC)
    url = folder / "store.zarr"
    assert run_sweep(parse_spec(TOY_SPEC, str(spec_path)), str(url), scheduler=cluster2).complete
    return spec_path, url


EDITS = {
    "integrity scheme": {"integrity": "chunk-crc64/2"},
    "newer release": {"boardsweep_version": "9.3.0"},
    "format": {"boardsweep_format": 99},
    "rng and seed schemes": {"rng_scheme": "philox-4x64 by key", "seed_scheme": "blake3 of the values"},
    "integrity removed": {"integrity": None},
}


def _edit(url: Path, changes: dict) -> None:
    group = zarr.open_group(str(url), mode="r+")
    attrs = dict(group.attrs)
    for key, value in changes.items():
        if value is None:
            attrs.pop(key)
        else:
            attrs[key] = value
    group.attrs.clear()
    group.attrs.update(attrs)
    zarr.consolidate_metadata(str(url))


def _files(folder: Path) -> dict[str, str]:
    return {str(f.relative_to(folder)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(folder.rglob("*")) if f.is_file()}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_unknown_format_is_refused_by_every_command(edit, made, tmp_path, cluster2, capsys):
    spec_path, source = made
    url = tmp_path / "store.zarr"
    shutil.copytree(source, url)
    _edit(url, EDITS[edit])
    (url / "counts" / "c" / "0" / "0" / "0" / "0" / "0").unlink()  # checks must not be switched off
    before = _files(url)
    commands = [("status", str(url)), ("query", str(url)), ("digest", str(url)),
                ("report", str(url), "--out", str(tmp_path / "report")),
                ("run", str(spec_path), "--store", str(url), "--scheduler", cluster2),
                ("run", str(spec_path), "--store", str(url), "--scheduler", cluster2, "--extend"),
                ("verify", str(spec_path), "--against", str(url), "--scheduler", cluster2)]
    for command in commands:
        code = run_cli(*command)
        out, err = capsys.readouterr()
        lines = err.strip().splitlines()
        assert code == 2, (command, out, err)
        assert len(lines) == 1 and "format this boardsweep" in lines[0], (command, lines)
    assert _files(url) == before
    assert not (tmp_path / "report").exists()


def test_overwrite_replaces_a_store_of_an_unknown_format(made, tmp_path, cluster2, capsys):
    spec_path, source = made
    url = tmp_path / "store.zarr"
    shutil.copytree(source, url)
    _edit(url, EDITS["format"])
    assert run_cli("run", str(spec_path), "--store", str(url), "--scheduler", cluster2, "--overwrite") == 0
    assert run_cli("status", str(url)) == 0
