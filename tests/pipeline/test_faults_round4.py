"""The fourth fault round, part two: no wait without a deadline, no "unexpected" a user can cause.

Each case feeds the CLI (or the Python API) a fault that comes from the user
or the environment and asserts one line naming the cause, with its exit code:
never "unexpected" (kept for bugs), never a traceback, and within the stated
deadline.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from clirun import run_cli
from conftest import TOY_SPEC, spec_toml

HERE = Path(__file__).resolve().parent


def one_line(capsys) -> str:
    """The command's only stderr line: an error, never "unexpected" nor a traceback."""
    err = [line for line in capsys.readouterr().err.strip().splitlines() if line.strip()]
    assert len(err) == 1, err
    assert err[0].startswith("boardsweep: error: "), err
    assert "unexpected" not in err[0] and "Traceback" not in err[0], err[0]
    return err[0]


@pytest.fixture(scope="module")
def toy_store(tmp_path_factory):
    """A complete toy store, made once; tests damage copies of it."""
    folder = tmp_path_factory.mktemp("toy")
    spec = folder / "toy.toml"
    spec.write_text(TOY_SPEC)
    store = folder / "toy.zarr"
    assert run_cli("-q", "run", str(spec), "--store", str(store), "--workers", "1") == 0
    return spec, store


# -- sizes checked before anything is allocated or started -------------------


@pytest.mark.parametrize("count", [10**9, 10**10])
def test_checkpoint_count_above_the_run_is_refused_at_once(tmp_path, capsys, count):
    spec = tmp_path / "big.toml"
    spec.write_text(TOY_SPEC.replace("count = 5", f"count = {count}").replace("turns = 60", "turns = 50"))
    t0 = time.monotonic()
    assert run_cli("run", str(spec), "--store", str(tmp_path / "s.zarr")) == 2
    assert time.monotonic() - t0 < 5  # was 92 s and 15.7 GB
    line = one_line(capsys)
    assert f"checkpoints.count: {count} is more than run.turns = 50" in line
    assert not (tmp_path / "s.zarr").exists()


def test_checkpoint_count_above_the_most_is_refused(tmp_path, capsys):
    spec = tmp_path / "big.toml"
    spec.write_text(TOY_SPEC.replace("count = 5", "count = 200000").replace("turns = 60", "turns = 1000000"))
    assert run_cli("run", str(spec), "--store", str(tmp_path / "s.zarr")) == 2
    assert "checkpoints.count: 200000 is not allowed; expected at most 100000" in one_line(capsys)


def test_workers_beyond_the_machine_are_refused_at_once(tmp_path, capsys):
    from boardsweep.pipeline.cluster import max_workers

    spec = tmp_path / "toy.toml"
    spec.write_text(TOY_SPEC)
    t0 = time.monotonic()
    assert run_cli("run", str(spec), "--store", str(tmp_path / "s.zarr"), "--workers", "2000") == 2
    assert time.monotonic() - t0 < 5  # was 255-290 s, then "lost the storage"
    line = one_line(capsys)
    assert f"--workers 2000: this machine has" in line and f"at most {max_workers()} workers" in line
    assert not (tmp_path / "s.zarr").exists()


@pytest.mark.parametrize("address, why", [
    ("foo:bar", "expected [HOST]:PORT with a port from 0 to 65535"),
    (":99999", "expected [HOST]:PORT with a port from 0 to 65535"),
    ("192.0.2.77:8787", "cannot listen on host '192.0.2.77' here"),  # TEST-NET-1: never this machine's
])
def test_bad_dashboard_address_is_input(tmp_path, capsys, address, why):
    spec = tmp_path / "toy.toml"
    spec.write_text(TOY_SPEC)
    assert run_cli("run", str(spec), "--store", str(tmp_path / "s.zarr"), "--dashboard-address", address) == 2
    assert why in one_line(capsys)
    assert not (tmp_path / "s.zarr").exists()


@pytest.mark.parametrize("key, value, why", [
    ("distributed.comm.timeouts.connect", "abc", "expected a duration such as 30s"),
    ("distributed.scheduler.allowed-failures", "xx", "expected a number"),
    ("boardsweep.processes", "maybe", "expected True or False"),
])
def test_bad_dask_setting_is_named(tmp_path, capsys, key, value, why):
    import dask

    spec = tmp_path / "toy.toml"
    spec.write_text(TOY_SPEC)
    with dask.config.set({key: value}):
        assert run_cli("run", str(spec), "--store", str(tmp_path / "s.zarr"), "--workers", "1") == 2
    line = one_line(capsys)
    assert f"Dask setting {key} = {value!r}" in line and why in line
    assert not (tmp_path / "s.zarr").exists()


def test_bad_dask_setting_names_its_environment_variable(tmp_path):
    spec = tmp_path / "toy.toml"
    spec.write_text(TOY_SPEC)
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "abc"}
    proc = _cli_process(["run", str(spec), "--store", str(tmp_path / "s.zarr"), "--workers", "1"], env=env)
    assert proc.returncode == 2, proc.stderr
    assert "(from the environment variable DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT)" in proc.stderr
    assert "unexpected" not in proc.stderr and "Traceback" not in proc.stderr


# -- a diagnosis that names the real cause -------------------------------------

_TOY_MAIN = ("import sys; from boardsweep.core import games; games.register('toy', 'toy_game'); "
             "from boardsweep.pipeline.cli import command_line; sys.argv[0] = 'boardsweep'; command_line()")


def _cli_process(args: list[str], stdout=subprocess.PIPE, env=None, cwd=None, timeout=120):
    """The CLI in a process of its own (the toy game registered), for what cannot run in-process."""
    return subprocess.run([sys.executable, "-c", _TOY_MAIN, *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, env=env, cwd=cwd, timeout=timeout)


@pytest.mark.parametrize("command", [["games"], ["status", "STORE"], ["query", "STORE", "--summary", "--format", "json"]])
def test_full_output_stream_is_not_the_store(toy_store, command):
    _, store = toy_store
    args = [str(store) if a == "STORE" else a for a in command]
    with open("/dev/full", "w") as full:
        proc = _cli_process(args, stdout=full)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1, proc.stderr
    assert len(lines) == 1 and "cannot write to stdout" in lines[0] and "not the store" in lines[0], lines
    assert "unexpected" not in proc.stderr


def test_deleted_working_folder(tmp_path, monkeypatch, capsys):
    spec = tmp_path / "toy.toml"
    spec.write_text(TOY_SPEC)
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert run_cli("run", str(spec), "--store", "relative.zarr", "--workers", "1") == 2
    assert "the working folder was deleted" in one_line(capsys)


@pytest.mark.parametrize("key, value, why", [
    ("grid_axes", ["rule", "dice_sides"], "are not in the order of the arrays' dimensions"),
    ("grid_axes", "xx", "is not a list of distinct axis names"),
    ("grid_axes", ["nope"], "are not the spec's grid axes"),
    ("spec_canonical", "{bad", "is not a spec's canonical JSON"),
    ("spec_canonical", 7, "is not a spec's canonical JSON"),
])
@pytest.mark.parametrize("command", ["status", "query", "digest", "run", "report"])
def test_damaged_root_attributes_are_named(toy_store, tmp_path, capsys, key, value, why, command):
    spec, store = toy_store
    damaged = tmp_path / "d.zarr"
    shutil.copytree(store, damaged)
    meta = json.loads((damaged / "zarr.json").read_text())
    meta["attributes"][key] = value
    (damaged / "zarr.json").write_text(json.dumps(meta))
    args = {"status": ["status", str(damaged)], "query": ["query", str(damaged)], "digest": ["digest", str(damaged)],
            "run": ["run", str(spec), "--store", str(damaged), "--workers", "1"],
            "report": ["report", str(damaged), "--out", str(tmp_path / "report")]}[command]
    assert run_cli("-q", *args) == 1
    line = one_line(capsys)
    assert f"store {damaged} has damaged root metadata" in line and why in line


# -- the Python API refuses what the CLI refuses ----------------------------------


def test_api_refuses_extend_with_overwrite(toy_store, tmp_path, capsys):
    import boardsweep
    from boardsweep.pipeline.errors import InputError

    spec, store = toy_store
    copy = tmp_path / "c.zarr"
    shutil.copytree(store, copy)
    before = sorted(p.name for p in copy.iterdir())
    with pytest.raises(InputError) as caught:
        boardsweep.run(str(spec), copy, extend=True, overwrite=True, progress=False)
    assert run_cli("run", str(spec), "--store", str(copy), "--extend", "--overwrite") == 2
    assert str(caught.value) in one_line(capsys)  # the CLI's line
    assert sorted(p.name for p in copy.iterdir()) == before


@pytest.mark.parametrize("kwargs, why", [
    ({"store": 123}, "store=123: expected a folder path or an fsspec URL"),
    ({"workers": 0}, "workers=0: expected a positive integer"),
    ({"workers": -3}, "workers=-3: expected a positive integer"),
    ({"client": "tcp://x"}, "client='tcp://x': expected a distributed.Client (a scheduler address goes in cluster=)"),
])
def test_api_refuses_bad_arguments(tmp_path, monkeypatch, kwargs, why):
    import boardsweep
    from boardsweep.pipeline.errors import InputError

    monkeypatch.chdir(tmp_path)
    kwargs = {"store": str(tmp_path / "s.zarr"), **kwargs}
    with pytest.raises(InputError, match=None) as caught:
        boardsweep.run(TOY_SPEC, progress=False, **kwargs)
    assert why in str(caught.value)
    assert list(tmp_path.iterdir()) == []  # no folder "123", no store
