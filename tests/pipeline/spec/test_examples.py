"""The shipped example sweeps found by name (:mod:`boardsweep.pipeline.spec.examples`):
a spec, and the recorded digest of one that has it, from any folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from boardsweep.pipeline.errors import InputError
from boardsweep.pipeline.spec import examples

ROOT = Path(__file__).resolve().parents[3]


def test_a_shipped_digest_is_found_by_the_examples_name_from_an_empty_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    found = Path(examples.resolve_digest("nightly"))
    assert found.name == "nightly.digest.json"
    assert found.read_bytes() == (ROOT / "sweeps" / "nightly.digest.json").read_bytes()
    assert examples.digest_file("quickstart") is None  # no digest shipped for it
    assert Path(examples.resolve_spec("nightly")).read_bytes() == (ROOT / "sweeps" / "nightly.toml").read_bytes()


def test_a_file_of_that_name_here_wins_and_a_name_without_a_digest_is_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nightly").mkdir()  # the user's own store of that name
    assert examples.resolve_digest("nightly") == "nightly"
    assert examples.resolve_digest("results/x.zarr") == "results/x.zarr"  # a path: left to the command's check
    with pytest.raises(InputError, match=r"^--against quickstart: no such store or digest file, and no shipped "
                                         r"digest of that name \(examples with one: nightly\)$"):
        examples.resolve_digest("quickstart")
