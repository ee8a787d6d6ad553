"""``report`` into a folder whose disk fills (a real small tmpfs): one line
naming the folder and that the disk is full, exit 1 (not "unexpected"); the
partial report removed, an earlier report kept whole, so the next report there
(with space freed) is written."""

from __future__ import annotations

import subprocess

import pytest

from clirun import run_cli
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec


@pytest.fixture(scope="module")
def store(tmp_path_factory, cluster2):
    from specs import TOY_SPEC

    url = tmp_path_factory.mktemp("report_full") / "toy.zarr"
    assert run_sweep(parse_spec(TOY_SPEC, "toy.toml"), str(url), scheduler=cluster2).complete
    return url


def _disk_full_line(capsys, folder) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("boardsweep: error: "), err
    assert f"report folder {folder}: the disk is full" in err[0] and "unexpected" not in err[0], err
    return err[0]


def _grow(folder, size: str) -> None:
    proc = subprocess.run(["mount", "-o", f"remount,size={size}", str(folder)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_a_full_disk_is_named_and_leaves_only_the_users_files(store, tmpfs, capsys):
    disk = tmpfs("small", "64k")
    mine = disk / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my own work")
    new = disk / "new"
    assert run_cli("report", str(store), "--out", str(mine)) == 1
    _disk_full_line(capsys, mine)
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
    assert run_cli("report", str(store), "--out", str(new)) == 1
    _disk_full_line(capsys, new)
    assert not new.exists()  # the folder it made, removed
    _grow(disk, "64m")
    assert run_cli("report", str(store), "--out", str(mine)) == 0  # nothing left that it refuses
    assert (mine / "index.html").is_file() and (mine / "notes.txt").read_text() == "my own work"


def test_an_earlier_report_is_kept_whole_when_the_next_does_not_fit(store, tmpfs, capsys):
    disk = tmpfs("one", "64m")
    out = disk / "rep"
    assert run_cli("report", str(store), "--out", str(out)) == 0
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    used = sum(len(b) for b in before.values())
    _grow(disk, str(used + 64 * 1024))  # room for the report, not for a second one beside it
    assert run_cli("report", str(store), "--out", str(out)) == 1
    _disk_full_line(capsys, out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    _grow(disk, "64m")
    assert run_cli("report", str(store), "--out", str(out)) == 0
