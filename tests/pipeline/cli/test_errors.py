"""Bad input gets one clear line, exit code 2, and changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from clirun import run_cli

ROOT = Path(__file__).resolve().parents[3]


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("boardsweep: error: "), err
    assert "Traceback" not in err[0]
    return err[0]


def test_negative_seed(capsys):
    assert run_cli("simulate", "monopoly", "--seed", "-1", "--turns", "10") == 2
    assert "'--seed': -1 is not in the range x>=0" in _one_line(capsys)


def test_digest_into_a_missing_folder(tmp_path, capsys):
    store = tmp_path / "s.zarr"
    assert run_cli("run", str(ROOT / "sweeps" / "nightly.toml"), "--store", str(store), "--max-tasks", "0",
                   "--workers", "1") == 0
    capsys.readouterr()
    out = tmp_path / "missing" / "digest.json"
    assert run_cli("digest", str(store), "--partial", "--out", str(out)) == 2  # no task ran: partial
    assert "cannot write the digest there (No such file or directory)" in _one_line(capsys)
    assert not out.parent.exists()


@pytest.mark.parametrize("command", ["run", "digest", "status"])
def test_store_path_with_fsspec_chaining(tmp_path, command, capsys):
    store = str(tmp_path / "a::b.zarr")
    args = {"run": ("run", str(ROOT / "sweeps" / "quickstart.toml"), "--store", store),
            "digest": ("digest", store), "status": ("status", store)}[command]
    assert run_cli(*args) == 2
    line = _one_line(capsys)
    assert "a::b.zarr" in line
    assert list(tmp_path.iterdir()) == []


def test_store_on_a_read_only_file_system(tmpfs, capsys):
    read_only_folder = tmpfs("ro", "64m", read_only=True)  # root ignores file modes: a read-only mount
    assert run_cli("run", str(ROOT / "sweeps" / "quickstart.toml"), "--store",
                   str(read_only_folder / "q.zarr"), "--workers", "1") == 2
    line = _one_line(capsys)
    assert "cannot write there (Read-only file system)" in line


def test_minus_v_is_seen_where_an_unexpected_error_is_reported():
    """``-v`` re-raises an unexpected error (its traceback) instead of the one line: the check
    asked ``views.display.verbosity``, which never existed, and so never saw ``-v`` (issue 55)."""
    from boardsweep.pipeline.cli import commands
    from boardsweep.pipeline.views import set_verbosity, verbosity

    before = verbosity()
    try:
        set_verbosity(0)
        assert not commands._verbose()
        set_verbosity(1)
        assert commands._verbose()
    finally:
        set_verbosity(before)
