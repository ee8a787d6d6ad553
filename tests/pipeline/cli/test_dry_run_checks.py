"""``run --dry-run`` refuses what the run refuses, in the run's line and exit
code: a store location the run cannot write (under a regular file, on a
read-only file system), a store URL no run can use (refused before anything
is printed, by the run too); it times its replicate under the run's task
deadline, and a kernel that raises is named with its game and grid point."""

from __future__ import annotations

import threading
import time

import dask.config
import pytest

from boardsweep.core import games
from clirun import run_cli

games.register("failing", "failing_game")
games.register("hanging", "hanging_game")


def error_line(capsys) -> tuple[str, str]:
    """(stdout, the command's only stderr line: an error, never "unexpected" nor a traceback)."""
    captured = capsys.readouterr()
    err = [line for line in captured.err.strip().splitlines() if line.strip()]
    assert len(err) == 1, err
    assert err[0].startswith("boardsweep: error: "), err
    assert "unexpected" not in err[0] and "Traceback" not in err[0], err[0]
    return captured.out, err[0]


def test_a_store_under_a_regular_file_is_refused_as_the_run_refuses_it(tmp_path, toy_spec_text, write_spec, capsys):
    spec, blocker = write_spec(toy_spec_text), tmp_path / "file.txt"
    blocker.write_text("a user's file\n")
    store = str(blocker / "x.zarr")
    assert run_cli("run", str(spec), "--store", store, "--workers", "1") == 2
    _, refused = error_line(capsys)
    assert run_cli("run", str(spec), "--store", store, "--dry-run") == 2  # was 0: "store: new"
    out, line = error_line(capsys)
    assert line == refused and "Not a directory" in line, line
    assert "store:" not in out
    assert blocker.read_text() == "a user's file\n"


def test_a_store_on_a_read_only_file_system_is_refused(tmpfs, toy_spec_text, write_spec, capsys):
    spec, folder = write_spec(toy_spec_text), tmpfs("ro", "1m", read_only=True)
    store = str(folder / "sub" / "x.zarr")
    assert run_cli("run", str(spec), "--store", store, "--workers", "1") == 2
    _, refused = error_line(capsys)
    assert run_cli("run", str(spec), "--store", store, "--dry-run") == 2
    _, line = error_line(capsys)
    assert line == refused and "Read-only file system" in line, line


@pytest.mark.parametrize("url, says", [("fiel://x.zarr", "unknown protocol 'fiel'"),
                                       ("memory://x.zarr", "memory:// keeps the store in one process")])
@pytest.mark.parametrize("dry", [False, True])
def test_a_store_url_no_run_can_use_is_refused_before_the_banner(url, says, dry, toy_spec_text, write_spec, capsys):
    spec = write_spec(toy_spec_text)
    assert run_cli("run", str(spec), "--store", url, "--workers", "1", *(["--dry-run"] if dry else [])) == 2
    out, line = error_line(capsys)
    assert says in line and out == "", (out, line)  # nothing announced, no plan


def test_a_kernel_that_raises_in_the_dry_run_is_named_with_its_point(toy_spec_text, write_spec, tmp_path, capsys):
    spec = write_spec(toy_spec_text.replace('game = "toy"', 'game = "failing"'))
    assert run_cli("run", str(spec), "--store", str(tmp_path / "s.zarr"), "--dry-run") == 1
    _, line = error_line(capsys)
    assert "game 'failing' at dice_sides=3, rule='sticky'" in line, line
    assert "KernelFailure: the sticky ring cannot use 3-sided dice" in line, line
    assert not (tmp_path / "s.zarr").exists()


def test_a_kernel_that_never_returns_ends_the_dry_run_at_the_task_deadline(toy_spec_text, write_spec, tmp_path,
                                                                          capsys, monkeypatch):
    flag = tmp_path / "hang"
    flag.write_text("")
    monkeypatch.setenv("HANGING_WHILE", str(flag))
    spec = write_spec(toy_spec_text.replace('game = "toy"', 'game = "hanging"'))
    t0 = time.monotonic()
    try:
        with dask.config.set({"boardsweep.task-timeout": "2s"}):
            code = run_cli("run", str(spec), "--store", str(tmp_path / "s.zarr"), "--dry-run")
        took = time.monotonic() - t0
    finally:
        flag.unlink()  # the abandoned thread's kernel returns
    assert code == 1
    assert took < 15, took  # was: no end (the replicate timed with no deadline)
    _, line = error_line(capsys)
    assert "task deadline of 2 s" in line and "dice_sides=3, rule='sticky'" in line, line
    assert "game 'hanging'" in line and "boardsweep.task-timeout" in line, line
    deadline = time.monotonic() + 10
    while any(t.name == "boardsweep-dry-run-timing" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.05)
