"""Anything a result depends on is part of the sweep's identity: a file that a
parameter names (Chutes and Ladders' board file) is recorded in the store by
the SHA-256 of its bytes, and a store is not resumed or extended after that
file changed (one line, exit 2, nothing touched).  Real runs of the plugin."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import zarr

from clirun import run_cli

pytest.importorskip("chutes_ladders")


def _files(folder: Path) -> dict[str, str]:
    return {str(f.relative_to(folder)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(folder.rglob("*")) if f.is_file()}


@pytest.fixture
def sweep(tmp_path, make_spec, write_spec, cluster2):
    import chutes_ladders

    board = tmp_path / "board.toml"
    shutil.copy(Path(chutes_ladders.__file__).parent / "milton_bradley.toml", board)
    text = make_spec("chutes_ladders", params={"board": str(board)}, grid={"sides": [6]},
                     run={"replicates": 2, "games": 50}, checkpoints={"count": 2})
    spec = write_spec(text)
    url = tmp_path / "store.zarr"
    assert run_cli("-q", "run", str(spec), "--store", str(url), "--scheduler", cluster2) == 0
    return board, spec, url


def test_the_board_file_is_recorded_by_its_bytes(sweep):
    board, _, url = sweep
    canonical = json.loads(zarr.open_group(str(url), mode="r").attrs["spec_canonical"])
    assert canonical["files"] == {str(board): "sha256:" + hashlib.sha256(board.read_bytes()).hexdigest()}


@pytest.mark.parametrize("extend", [False, True])
def test_a_changed_board_file_is_refused_on_resume(extend, sweep, cluster2, capsys):
    board, spec, url = sweep
    capsys.readouterr()
    board.write_text(board.read_text().replace("28 = 84", "28 = 50"))
    before = _files(url)
    if extend:
        spec.write_text(spec.read_text().replace("replicates = 2", "replicates = 4"))
    args = ["run", str(spec), "--store", str(url), "--scheduler", cluster2] + ["--extend"] * extend
    assert run_cli(*args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"files.{board}" in err[0], err
    assert _files(url) == before


def test_an_unchanged_board_file_resumes(sweep, cluster2, capsys):
    board, spec, url = sweep
    board.touch()  # a new modification time, the same bytes
    assert run_cli("-q", "run", str(spec), "--store", str(url), "--scheduler", cluster2) == 0
