"""A task that raises on the embedded cluster is reported by the run, never
by its workers' tracebacks: without ``-q``, one line per distinct error as it
happens; with ``-q``, only the final error line.  Real runs of the failing
test game (failing_game.py: two of its twelve tasks raise the same error) as
subprocesses, whose stderr is the workers' stderr too."""

from __future__ import annotations

import pytest

from localdask import finish, start_client

pytestmark = pytest.mark.slow  # a subprocess and a cluster each: about 6 s

ERROR = "KernelFailure: the sticky ring cannot use 3-sided dice (test failure)"


def _run(tmp_path, write_spec, toy_spec_text, *options, env=None):
    spec = write_spec(toy_spec_text.replace('game = "toy"', 'game = "failing"'))
    proc = start_client(tmp_path, *options, "run", str(spec), "--store", str(tmp_path / "s.zarr"), env=env)
    return finish(proc, timeout=120)


def test_each_distinct_task_error_is_one_line_and_no_traceback_reaches_stderr(tmp_path, write_spec, toy_spec_text):
    rc, out, err = _run(tmp_path, write_spec, toy_spec_text)
    assert rc == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("boardsweep: error: 2 of 12 tasks failed"), err
    told = " ".join(out.split())  # the console wraps long lines at its width
    assert told.count("a task failed at dice_sides=3, rule='sticky'") == 1, out
    assert told.count(ERROR) == 1, out


def test_quiet_worker_processes_print_only_the_error_line(tmp_path, write_spec, toy_spec_text):
    rc, out, err = _run(tmp_path, write_spec, toy_spec_text, "-q", env={"DASK_BOARDSWEEP__PROCESSES": "True"})
    assert rc == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("boardsweep: error: 2 of 12 tasks failed") and ERROR in lines[0], err
    assert "Traceback" not in err and "Compute Failed" not in err
    assert "a task failed" not in out
