"""The command line's habits: ``-h`` everywhere, ``-q``/``-v`` after the
subcommand too, ``run --dry-run`` (a plan, nothing created) and ``run --set
KEY=VALUE`` (a spec key overridden, checked like the file, recorded in the
store)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from clirun import run_cli


@pytest.mark.parametrize("args", [["-h"], ["run", "-h"], ["query", "-h"], ["games", "-h"]])
def test_h_prints_the_help(args, capsys):
    assert run_cli(*args) == 0
    out = capsys.readouterr().out
    assert out.startswith("Usage: boardsweep") and "-h, --help" in out
    if args[0] == "run":
        assert "--dry-run" in out and "--set KEY=VALUE" in out and "-q, --quiet" in out


def test_quiet_after_the_subcommand(tmp_path, cluster2, toy_spec_text, write_spec, capsys):
    spec, store = write_spec(toy_spec_text), tmp_path / "q.zarr"
    assert run_cli("run", str(spec), "--store", str(store), "--scheduler", cluster2, "-q") == 0
    quiet = capsys.readouterr().out
    assert run_cli("status", str(store), "-q") == 0  # complete
    capsys.readouterr()
    assert run_cli("run", str(spec), "--store", str(store), "--scheduler", cluster2) == 0  # a resume, not quiet
    loud = capsys.readouterr().out
    assert "sweep toy" in loud and "sweep toy" not in quiet  # the banner, only without -q
    assert "store complete" in quiet and len(quiet.splitlines()) < len(loud.splitlines())
    assert run_cli("run", str(spec), "--store", str(store), "--scheduler", cluster2, "-q", "-v") == 2
    assert "-v and -q exclude each other" in capsys.readouterr().err
    assert run_cli("-q", "status", str(store), "-v") == 2  # before and after add up


def test_dry_run_creates_nothing(tmp_path, toy_spec_text, write_spec, capsys):
    spec, store = write_spec(toy_spec_text), tmp_path / "out" / "dry.zarr"
    before = sorted(tmp_path.rglob("*"))
    assert run_cli("run", str(spec), "--store", str(store), "--dry-run", "--workers", "1") == 0
    out = capsys.readouterr().out
    assert sorted(tmp_path.rglob("*")) == before  # no store, no folder, no lock
    assert "nothing is created" in out and f"{store}: new" in out
    assert "4 points (dice_sides 2 x rule 2)" in out
    assert "8 simulation tasks of up to 2 replicates + 4 exact tasks (4 exact solves)" in out  # 4 points x 4 / 2
    assert "store size:  up to" in out and "on 1 worker (" in out
    assert run_cli("run", str(spec), "--store", str(store), "--dry-run", "--set", "run.replicates=2") == 0
    assert "4 simulation tasks" in capsys.readouterr().out
    assert sorted(tmp_path.rglob("*")) == before


def test_set_overrides_spec_keys_and_is_recorded(tmp_path, cluster2, toy_spec_text, write_spec, capsys):
    spec, store = write_spec(toy_spec_text), tmp_path / "set.zarr"
    sets = ["--set", "run.replicates=2", "--set", "grid.dice_sides=4"]
    assert run_cli("run", str(spec), "--store", str(store), "--scheduler", cluster2, "-q", *sets) == 0
    capsys.readouterr()
    ds = xr.open_zarr(store)
    assert ds.sizes["replicate"] == 2 and ds["dice_sides"].values.tolist() == [4]
    assert bool(ds["done"].all())
    assert "--set run.replicates=2" in ds.attrs["spec_file"] and "--set grid.dice_sides=4" in ds.attrs["spec_text"]
    canonical = json.loads(ds.attrs["spec_canonical"])
    assert canonical["run"]["replicates"] == 2 and canonical["grid"]["dice_sides"] == [4]
    # the same overrides again: a resume with nothing to do
    assert run_cli("run", str(spec), "--store", str(store), "--scheduler", cluster2, "-q", *sets) == 0
    capsys.readouterr()
    # a changed grid is checked like a changed file: it needs --extend
    grown = ["--set", "run.replicates=2", "--set", "grid.dice_sides=4,6"]
    assert run_cli("run", str(spec), "--store", str(store), "--dry-run", *sets) == 0
    assert "exists, made by this spec: the run resumes it" in capsys.readouterr().out
    assert run_cli("run", str(spec), "--store", str(store), "--dry-run", *grown) == 0
    assert "exists, made by another spec: the run refuses it" in capsys.readouterr().out
    assert run_cli("run", str(spec), "--store", str(store), "--scheduler", cluster2, "-q", *grown) == 2
    assert "--extend" in capsys.readouterr().err
    assert run_cli("run", str(spec), "--store", str(store), "--scheduler", cluster2, "-q", *grown, "--extend") == 0
    ds = xr.open_zarr(store)
    assert ds["dice_sides"].values.tolist() == [4, 6] and bool(ds["done"].all())
    assert np.array_equal(ds["rule"].values, np.array(["plain", "sticky"]))


@pytest.mark.parametrize("item,message", [
    ("run.replicates=0", "run.replicates: 0 is not allowed"),
    ("run.replicate=2", "run.replicate: unknown key"),
    ("replicates", "expected KEY=VALUE"),
    ("seed.x=1", "seed: is not a table"),
    ("grid.rule=plain,wobbly", "grid.rule"),
])
def test_bad_set_is_one_line_naming_the_key(tmp_path, toy_spec_text, write_spec, capsys, item, message):
    spec = write_spec(toy_spec_text)
    assert run_cli("run", str(spec), "--store", str(tmp_path / "bad.zarr"), "--set", item) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("boardsweep: error: ") and message in err[0], err
    assert str(spec) in err[0]
    assert not (tmp_path / "bad.zarr").exists()


@pytest.mark.parametrize("name", ["run", "query", "status", "report", "digest"])
def test_h_survives_a_command_parsed_alone_first(name, capsys):
    """click keeps a command's help option from its first context: a command
    parsed on its own first (as documentation tools and tests do) still takes
    ``-h`` when it is then invoked through ``boardsweep``."""
    from boardsweep.pipeline.cli.commands import cli

    cli.commands[name].make_context(f"boardsweep {name}", ["--help"], resilient_parsing=True)
    assert run_cli(name, "-h") == 0
    assert "-h, --help" in capsys.readouterr().out


# -- issue 43: -V, -q's answers, --format json at full precision, Ctrl-C's resume line --------------------


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_flags(flag, capsys):
    from importlib.metadata import version

    assert run_cli(flag) == 0
    assert capsys.readouterr().out == f"boardsweep {version('boardsweep')}\n"


def test_quiet_keeps_the_answers_and_the_verdict(tmp_path, cluster2, monopoly_spec_text, write_spec, capsys):
    spec, store = write_spec(monopoly_spec_text), tmp_path / "q.zarr"
    assert run_cli("run", str(spec), "--store", str(store), "--scheduler", cluster2, "-q") == 0
    quiet = capsys.readouterr().out
    assert "verdict: AGREE" in quiet and "frequency" in quiet  # the results (were dropped under -q)
    assert "sweep small" not in quiet and "wall " not in quiet  # no banner, no timings
    assert run_cli("query", str(store), "--summary", "-q") == 0
    assert "verdict: AGREE" in capsys.readouterr().out


def _json(out: str) -> dict:
    """stdout that is one JSON document and nothing else."""
    return json.loads(out)


@pytest.mark.slow
def test_format_json_is_the_only_output_and_keeps_every_digit(tmp_path, cluster2, monopoly_spec_text,
                                                               write_spec, capsys):
    from boardsweep.pipeline.analysis import headlines
    from boardsweep.pipeline.store import load_sweep

    spec, store = write_spec(monopoly_spec_text), tmp_path / "j.zarr"
    assert run_cli("run", str(spec), "--store", str(store), "--scheduler", cluster2, "--format", "json") == 0
    ran = _json(capsys.readouterr().out)
    assert ran["sweep"] == "small" and ran["run"]["complete"] is True and ran["verdict"]["text"].startswith("AGREE")
    assert "compile_s" not in ran["run"] and 0 <= ran["run"]["compile_wait_s"] <= ran["run"]["wall_s"]  # as waited for
    truth = headlines.summary(load_sweep(str(store)))
    for rows in (ran["rows"], None):
        if rows is None:
            assert run_cli("query", str(store), "--summary", "--format", "json") == 0
            rows = _json(capsys.readouterr().out)["rows"]
        assert len(rows) == len(truth)
        for row, want in zip(rows, truth.to_dict("records")):  # the same CPU: every bit (was: 9 and 6 digits)
            for column in ("estimate", "se", "exact", "z"):
                assert row[column] == (want[column] if np.isfinite(want[column]) else None), (column, row)
    out = tmp_path / "rep"
    assert run_cli("report", str(store), "--out", str(out), "--format", "json") == 0
    made = _json(capsys.readouterr().out)
    assert made["report"] == str(out / "index.html") and (out / "index.html").is_file() and made["summary"]
    assert json.loads(Path(made["summary_file"]).read_text()) == made["summary"]  # the file it names, whole
    assert run_cli("verify", str(spec), "--against", str(store), "--scheduler", cluster2, "--format", "json") == 0
    checked = _json(capsys.readouterr().out)
    assert checked["ok"] is True and checked["differences"] == [] and checked["variables"] > 0
    digest = tmp_path / "d.json"
    assert run_cli("digest", str(store), "--out", str(digest)) == 0
    other = write_spec(monopoly_spec_text.replace("seed = ", "seed = 1"), name="other.toml")
    capsys.readouterr()
    assert run_cli("verify", str(other), "--against", str(digest), "--format", "json") == 1  # another sweep
    captured = capsys.readouterr()
    failed = _json(captured.out)
    assert failed["ok"] is False and "different spec" in failed["differences"][0]
    assert captured.err.startswith("boardsweep: error: verify failed")
    assert run_cli("run", str(spec), "--store", str(store), "--dry-run", "--format", "json") == 0  # was refused
    assert _json(capsys.readouterr().out)["store"]["state"].startswith("exists, made by this spec")


def test_json_words_keep_full_precision_and_write_nan_as_null():
    from boardsweep.pipeline.words import json_text

    x = 0.1 + 0.2  # 0.30000000000000004: 17 significant digits
    text = json_text({"x": np.float64(x), "n": np.int64(3), "bad": float("nan"), "a": np.array([1.5, np.inf])})
    assert json.loads(text) == {"x": x, "n": 3, "bad": None, "a": [1.5, None]}


@pytest.mark.slow
def test_ctrl_c_says_what_is_kept_and_the_command_that_resumes(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    from pathlib import Path

    quickstart = Path(__file__).resolve().parents[3] / "sweeps" / "quickstart.toml"
    args = ["run", str(quickstart), "--store", str(tmp_path / "c.zarr"), "--workers", "2", "--set", "run.games=4000"]
    proc = subprocess.Popen([sys.executable, "-m", "boardsweep", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        t0 = time.monotonic()
        while not (tmp_path / "c.zarr" / "zarr.json").exists() and time.monotonic() - t0 < 120:
            time.sleep(0.1)  # the run has made its store: its tasks run now (minutes of them)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = [line for line in err.splitlines() if line.strip()]
    assert proc.returncode == 130 and len(lines) == 1, err
    assert lines[0].startswith("boardsweep: interrupted; the finished tasks, in ") and " are kept; " in lines[0]
    import shlex

    assert f"`{shlex.join(['boardsweep', *args])}` resumes" in lines[0]  # the very command, to copy
    assert run_cli("status", str(tmp_path / "c.zarr"), "-q") == 1  # kept, incomplete, not damaged: resumable
