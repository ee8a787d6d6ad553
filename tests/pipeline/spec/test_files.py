"""The files a spec's values may name, found with one listing of the working
folder (:mod:`boardsweep.pipeline.spec.tables`): never fewer than a ``stat``
of each value finds."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import boardsweep.core.hk_monopoly as hk_package
from boardsweep.pipeline.spec.tables import maybe_files
from boardsweep.pipeline.spec.parse import parse_spec
from specs import spec_toml


def test_plain_names_missing_from_the_folder_are_left_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "board.toml").write_text("x")
    (tmp_path / "Mixed.TOML").write_text("x")
    long_name = "n" * 300  # too long for one entry: a stat says so, as before
    values = ["always", "reserve:10", "board.toml", "mixed.toml", "sub/board.toml", "~/b.toml", long_name, "", ".."]
    kept = maybe_files(values)
    assert "board.toml" in kept and "mixed.toml" in kept  # the folder's names, compared without case too
    assert {"sub/board.toml", "~/b.toml", long_name, "", ".."} <= set(kept)  # looked at one by one
    assert "always" not in kept and "reserve:10" not in kept


def test_a_board_file_named_in_the_working_folder_is_in_the_spec_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(Path(hk_package.__file__).with_name("board.toml"), tmp_path / "my_board.toml")
    text = spec_toml("hk_monopoly", name="boards", params={"rounds": 5},
                     grid={"board": ["default", "my_board.toml"], "buy_policy": [f"reserve:{i}" for i in range(500)]},
                     run={"replicates": 1, "games": 1}, checkpoints={"count": 1})
    spec = parse_spec(text)
    digest = hashlib.sha256((tmp_path / "my_board.toml").read_bytes()).hexdigest()
    assert spec.files == {"my_board.toml": f"sha256:{digest}"}
