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


def test_text_labels_are_compared_whole_as_text():
    """A store's text coordinates (``<U``, zarr's ``StringDType``, object
    arrays of str) are compared with the spec's as text, value by value."""
    import numpy as np

    from boardsweep.pipeline.store.identity import _same

    labels = [f"reserve:{10 * i}" for i in range(1000)]
    forms = [np.asarray(labels), np.asarray(labels, dtype=object), np.asarray(labels, dtype=np.dtypes.StringDType())]
    for stored in forms:
        for expected in forms:
            assert _same(stored, expected)
            assert not _same(stored, np.asarray([*labels[:-1], "reserve:x"], dtype=expected.dtype))
            assert not _same(stored, expected[:-1])
    assert _same(np.asarray([1, 2], dtype=object), np.asarray(["1", "2"]))  # as str() gives each value
    assert not _same(np.asarray(["a", ""]), np.asarray(["a", " "]))


def test_the_recorded_canonical_spec_is_parsed_once_per_text(monkeypatch):
    from boardsweep.pipeline.store import identity

    parsed = []
    loads = json.loads
    monkeypatch.setattr(identity.json, "loads", lambda text: parsed.append(1) or loads(text))
    identity.canonical_of.cache_clear()
    text = json.dumps({"grid": {"a": [1, 2]}, "name": "once"})
    assert identity.canonical_of(text) is identity.canonical_of(text) and len(parsed) == 1
    assert identity.canonical_of(text.replace("once", "twice"))["name"] == "twice" and len(parsed) == 2
    identity.canonical_of.cache_clear()
