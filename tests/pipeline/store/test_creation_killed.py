"""A store's creation cannot be left half done (:mod:`boardsweep.pipeline.store.creation`).

A real ``boardsweep run`` process is SIGKILLed at many instants while it
creates its store; the instants are spread over the creation window that an
undisturbed run of the same command was measured to take on this machine
(from its creation record's appearance to its removal), never constants.
After each kill the store is either absent or empty, whole, or marked as a
creation a run began (``status`` says so in one line, never "not a
boardsweep store"); the same command then finishes, and the store equals the
undisturbed run's bit for bit in its integers.  A ``--overwrite`` killed
after its record is written, before the old store is gone, is finished by a
run without ``--overwrite``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clirun import run_cli
from localdask import assert_bitwise_equal
from specs import HERE as SUPPORT, spec_toml
from boardsweep.pipeline.store import LOCK_NAME, inspect
from boardsweep.pipeline.store.identity import CREATING, LEGACY_CREATING

pytestmark = pytest.mark.slow

RUNNER = """\
import sys
sys.path.insert(0, {here!r})
from boardsweep.core import games
games.register("toy", "toy_game")
from boardsweep.pipeline.cli.commands import main
main(sys.argv[1:])
"""

#: A toy sweep with a few more grid points than the shared one: a creation window of some length.
SPEC = spec_toml(
    "toy", params={"size": 8}, grid={"dice_sides": [2, 3, 4, 5], "rule": ["plain", "sticky"]},
    run={"replicates": 4, "games": 2, "turns": 40}, checkpoints={"count": 4},
    tasks={"replicates_per_task": 2},
)

#: The arrays compared with the undisturbed run's: integers bit for bit (assert_bitwise_equal).
INTEGERS = ["counts", "events", "rolls", "done", "exact_done", "exact_frequency"]

#: Where in the measured creation window the kills land: from just before the
#: record appears (the lock taken) to just after it is removed.
FRACTIONS = (-0.5, 0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.55, 0.7, 1.0, 1.3)


def _start(tmp_path: Path, spec: Path, store: Path, scheduler: str, *flags: str) -> subprocess.Popen:
    """A real ``boardsweep run`` process (the toy game registered)."""
    script = tmp_path / "runner.py"
    script.write_text(RUNNER.format(here=str(SUPPORT)))
    return subprocess.Popen([sys.executable, str(script), "run", str(spec), "--store", str(store),
                             "--scheduler", scheduler, "-q", *flags],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _poll_until(proc: subprocess.Popen, predicate, what: str) -> float:
    """Poll (every 0.2 ms) until ``predicate()``; its monotonic time.  The
    process ending first fails the test, naming ``what`` it never did."""
    while not predicate():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended ({proc.returncode}) before {what}: {proc.stderr.read()[-2000:]}")
        time.sleep(0.0002)
    return time.monotonic()


def _measure(tmp_path: Path, spec: Path, store: Path, scheduler: str) -> tuple[float, float]:
    """An undisturbed run (the reference store): how long its creation record
    was there, and how long from its lock to the record's appearance (s)."""
    proc = _start(tmp_path, spec, store, scheduler)
    locked = _poll_until(proc, lambda: store.is_dir() and any(store.iterdir()), "taking its lock")
    began = _poll_until(proc, lambda: (store / CREATING).exists(), "writing its creation record")
    ended = _poll_until(proc, lambda: not (store / CREATING).exists(), "removing its creation record")
    assert proc.wait(timeout=300) == 0, proc.stderr.read()
    return ended - began, began - locked


def _kill_at(tmp_path: Path, spec: Path, store: Path, scheduler: str, fraction: float, window: float,
             lead: float, flags: tuple[str, ...] = ()) -> str:
    """SIGKILL a run ``fraction`` of ``window`` after its creation record
    appears (a negative fraction: that much of ``lead`` after its lock, before
    the record); what it left (:func:`inspect`), or ``finished`` where it ended first."""
    proc = _start(tmp_path, spec, store, scheduler, *flags)
    try:
        if fraction < 0:
            start = _poll_until(proc, lambda: (store / LOCK_NAME).exists() or (store / CREATING).exists(),
                                "taking its lock")
            delay = (1 + fraction) * lead
        else:
            start = _poll_until(proc, lambda: (store / CREATING).exists(), "writing its creation record")
            delay = fraction * window
        while time.monotonic() < start + delay:
            time.sleep(0.0002)
        proc.send_signal(signal.SIGKILL)
    except AssertionError:
        if proc.returncode == 0:
            return "finished"
        raise
    finally:
        proc.wait(timeout=300)
        proc.stderr.close()
    return "finished" if proc.returncode == 0 else inspect(str(store))


def test_a_run_killed_at_any_instant_of_creation_is_finished_by_the_same_command(tmp_path, cluster2, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    reference = tmp_path / "reference.zarr"
    window, lead = _measure(tmp_path, spec, reference, cluster2)
    left = []
    for n, fraction in enumerate(FRACTIONS):
        store = tmp_path / f"killed{n}.zarr"
        found = _kill_at(tmp_path, spec, store, cluster2, fraction, window, lead)
        left.append(found)
        assert found in ("absent", "empty", "creating", "boardsweep", "finished"), (fraction, found)
        if found == "creating":
            assert run_cli("status", str(store)) == 1
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and "a run creating it was interrupted" in err[0], err
            assert "resume" not in err[0] and f"boardsweep run SPEC --store {store}" in err[0]
        assert run_cli("run", str(spec), "--store", str(store), "--scheduler", cluster2, "-q") == 0, (fraction, found)
        assert not (store / CREATING).exists() and not (store / LEGACY_CREATING).exists()
        assert run_cli("status", str(store)) == 0
        assert_bitwise_equal(store, reference, INTEGERS)
    capsys.readouterr()
    assert left.count("creating") >= len(FRACTIONS) // 3, (window, lead, left)  # the kills hit the window


def test_an_overwrite_killed_before_the_old_store_is_gone_is_finished_without_it(tmp_path, cluster2, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    other = tmp_path / "other.toml"
    other.write_text(SPEC.replace("seed = 7", "seed = 8"))
    store, reference = tmp_path / "s.zarr", tmp_path / "reference.zarr"
    assert run_cli("run", str(spec), "--store", str(store), "--scheduler", cluster2, "-q") == 0
    assert run_cli("run", str(other), "--store", str(reference), "--scheduler", cluster2, "-q") == 0
    code = (  # the record written, then killed as the old store's removal begins
        "import os, signal, sys\n"
        f"sys.path.insert(0, {str(SUPPORT)!r})\n"
        "from boardsweep.core import games\n"
        "games.register('toy', 'toy_game')\n"
        "from boardsweep.pipeline.store import creation\n"
        "creation.remove_store = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)\n"
        "from boardsweep.pipeline.cli.commands import main\n"
        "main(sys.argv[1:])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, "run", str(other), "--store", str(store), "--scheduler",
                           cluster2, "--overwrite", "-q"], capture_output=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert inspect(str(store)) == "creating"
    for command in ("status", "query", "digest"):
        assert run_cli(command, str(store)) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"a run creating it was interrupted (pid {os.getpid()}" not in err[0], err
        assert "a run creating it was interrupted" in err[0] and "damaged" not in err[0], err
    assert run_cli("run", str(other), "--store", str(store), "--scheduler", cluster2, "-q") == 0
    assert run_cli("status", str(store)) == 0
    assert_bitwise_equal(store, reference, INTEGERS)
