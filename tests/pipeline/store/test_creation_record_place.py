"""Where the creation record lives: ``.boardsweep/creating``, inside
boardsweep's own folder (a zarr group), so that a store a real run was
killed while creating opens in zarr and xarray without a warning; readers
name the interrupted creation and the next run finishes it.  A record the
previous release left (``.boardsweep.creating``, beside the root
``zarr.json``) is read and cleared the same way."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import warnings

import xarray as xr
import zarr

from clirun import run_cli
from specs import HERE as SUPPORT
from boardsweep.pipeline.store import inspect
from boardsweep.pipeline.store.creation import creation_record
from boardsweep.pipeline.store.identity import CREATING, LEGACY_CREATING

#: A real run killed just as its creation would end: the store whole, its record still there.
KILLED_AT_END = (
    "import os, signal, sys\n"
    f"sys.path.insert(0, {str(SUPPORT)!r})\n"
    "from boardsweep.core import games\n"
    "games.register('toy', 'toy_game')\n"
    "from boardsweep.pipeline.store import creation\n"
    "creation._end = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)\n"
    "from boardsweep.pipeline.cli.commands import main\n"
    "main(sys.argv[1:])\n"
)


def _files(store) -> list[str]:
    return sorted(str(p.relative_to(store)) for p in store.rglob("*") if "/c/" not in f"/{p.relative_to(store)}/")


def test_a_creation_killed_at_its_end_opens_quietly_and_is_finished(tmp_path, write_spec, toy_spec_text,
                                                                   cluster2, capsys):
    spec, store = str(write_spec(toy_spec_text)), tmp_path / "s.zarr"
    proc = subprocess.run([sys.executable, "-c", KILLED_AT_END, "run", spec, "--store", str(store),
                           "--scheduler", cluster2, "-q"], capture_output=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert (store / CREATING).exists() and (store / "zarr.json").exists()
    assert not any(name.startswith(".boardsweep.") for name in _files(store))  # nothing of ours beside zarr.json
    assert inspect(str(store)) == "creating"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for kwargs in ({"use_consolidated": False}, {}):
            assert "done" in dict(zarr.open_group(str(store), mode="r", **kwargs).members())
        assert "done" in xr.open_zarr(str(store), consolidated=False)
    assert run_cli("status", str(store)) == 1
    assert "a run creating it was interrupted" in capsys.readouterr().err
    assert run_cli("run", spec, "--store", str(store), "--scheduler", cluster2, "-q") == 0
    assert not (store / CREATING).exists() and run_cli("status", str(store)) == 0


def test_a_record_the_previous_release_left_is_read_and_cleared(tmp_path, write_spec, toy_spec_text, cluster2,
                                                               capsys):
    spec, store = str(write_spec(toy_spec_text)), tmp_path / "s.zarr"
    store.mkdir()
    gone = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)
    record = {"pid": gone, "host": socket.gethostname(), "arrays": ["done"], "since": "then"}
    (store / LEGACY_CREATING).write_text(json.dumps(record))
    (store / "notes.txt").write_text("mine")  # a user's file: never removed
    assert inspect(str(store)) == "creating" and creation_record(str(store)) == record
    assert run_cli("status", str(store)) == 1
    assert f"a run creating it was interrupted (pid {gone} on host" in capsys.readouterr().err
    assert run_cli("run", spec, "--store", str(store), "--scheduler", cluster2, "-q") == 0
    assert not (store / LEGACY_CREATING).exists() and not (store / CREATING).exists()
    assert (store / "notes.txt").read_text() == "mine" and run_cli("status", str(store)) == 0


def test_a_root_a_run_clears_between_a_readers_looks_is_looked_at_again(tmp_path, write_spec, toy_spec_text,
                                                                         cluster2, monkeypatch, capsys):
    """A run clearing a creation a kill interrupted (its lock taken over: the
    arrays, the root, then the record removed) between a reader's listing of
    the store and its read of the root: the reader found the root listed and
    gone, called the store ``unreadable`` and said "not a boardsweep sweep
    store" (the S3 soak's ``query``, once in 780 s); now it looks again and
    finds the folder as it is now, only the run's lock: one line, a run making the store."""
    import os
    import shutil

    from boardsweep.pipeline.store import LOCK_NAME, identity
    from boardsweep.pipeline.store.creation import clear_interrupted
    from boardsweep.pipeline.errors import StoreBeingRewritten

    spec, killed = str(write_spec(toy_spec_text)), tmp_path / "killed.zarr"
    proc = subprocess.run([sys.executable, "-c", KILLED_AT_END, "run", spec, "--store", str(killed),
                           "--scheduler", cluster2, "-q"], capture_output=True)
    assert proc.returncode == -signal.SIGKILL and (killed / CREATING).exists(), proc.stderr
    real = identity.has_creation_record
    reads = {"inspect": lambda url: inspect(url),
             "load_sweep": lambda url: __import__("boardsweep").load_sweep(url),
             "query": lambda url: (run_cli("query", url), capsys.readouterr().err)}
    for name, read in reads.items():
        store = tmp_path / f"{name}.zarr"
        shutil.copytree(killed, store)
        (store / LOCK_NAME).write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                                   "since": "2026-11-29T00:00:00+00:00"}))  # the clearing run's

        def cleared_then_asked(fs, root, store=store):  # the run clears it between the listing and this ask
            monkeypatch.setattr(identity, "has_creation_record", real)
            clear_interrupted(str(store))
            return real(fs, root)

        monkeypatch.setattr(identity, "has_creation_record", cleared_then_asked)
        capsys.readouterr()
        try:
            got = read(str(store))
        except StoreBeingRewritten as exc:
            got = str(exc)
        assert identity.has_creation_record is real, name  # the clearing happened inside the read
        if name == "inspect":
            assert got == "empty"
        else:
            line = got[1] if name == "query" else got
            assert "is making the store now, nothing to read yet" in line and len(line.strip().splitlines()) == 1, line
            assert name != "query" or got[0] in (1, 2), got


def test_a_lock_beside_empty_folders_is_a_store_a_run_makes(tmp_path, capsys):
    """What object storage (SeaweedFS) lists of a store a resumed run has just
    cleared (a creation a kill interrupted): the run's lock, and the removed
    arrays' folders, empty (their objects gone, their folders still listed).
    The S3 soak's ``status`` said "not a boardsweep sweep store" of it; now
    it is a folder holding only a run's lock: one line, a run making the
    store.  A folder with a file of someone's beside a lock stays someone's."""
    import os

    import boardsweep
    from boardsweep.pipeline.errors import StoreBeingRewritten
    from boardsweep.pipeline.store import LOCK_NAME

    store = tmp_path / "s.zarr"
    for folder in ("done/c/0/1", "counts", "exact_done/c"):
        (store / folder).mkdir(parents=True)
    (store / LOCK_NAME).parent.mkdir()
    (store / LOCK_NAME).write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                               "since": "2026-11-29T00:00:00+00:00"}))
    assert inspect(str(store)) == "empty"
    making = "is making the store now, nothing to read yet"
    for command in ("status", "query"):
        capsys.readouterr()
        assert run_cli(command, str(store)) in (1, 2)
        err = capsys.readouterr().err
        assert making in err and len(err.strip().splitlines()) == 1, err
    try:
        boardsweep.load_sweep(str(store))
    except StoreBeingRewritten as exc:
        assert making in str(exc)
    else:
        raise AssertionError("read a store that is not there")
    (store / "counts" / "notes.txt").write_text("mine")
    assert inspect(str(store)) == "folder"
