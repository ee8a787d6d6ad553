"""The CLI end to end: a killed client resumes bitwise, concurrent runs are
refused, query and status print what the store holds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import zarr

from boardsweep.pipeline.cli.commands import main
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.store import LOCK_NAME
from boardsweep.pipeline.spec.parse import parse_spec

from clirun import run_cli  # tests/support is on sys.path (conftest)

RUNNER = """\
import sys
sys.path.insert(0, {here!r})
from boardsweep.core import games
games.register("toy", "toy_game")
from boardsweep.pipeline.cli.commands import main
if __name__ == "__main__":
    main(sys.argv[1:])
"""


def start_cli(tmp_path: Path, *args: str, delay: float) -> subprocess.Popen:
    script = tmp_path / "runner.py"
    script.write_text(RUNNER.format(here=str(Path(__file__).resolve().parents[2] / "support")))
    env = {**os.environ, "TOY_DELAY_S": str(delay)}
    return subprocess.Popen(
        [sys.executable, str(script), *args], env=env, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )


def wait_for(predicate, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise TimeoutError("condition not reached")
        time.sleep(0.1)


def done_count(url: Path) -> int:
    try:
        return int(zarr.open_array(str(url), path="done", mode="r")[...].sum())
    except Exception:
        return 0


def test_killed_client_refuses_concurrent_run_then_resumes_bitwise(
    tmp_path, cluster2, toy_spec_text, write_spec, capsys
):
    spec_path = write_spec(toy_spec_text)
    url = tmp_path / "killed.zarr"
    proc = start_cli(tmp_path, "run", str(spec_path), "--store", str(url), "--workers", "1", delay=0.4)
    try:
        wait_for(lambda: done_count(url) >= 2 or proc.poll() is not None)
        assert proc.poll() is None, proc.stdout.read()
        holder = json.loads((url / LOCK_NAME).read_text())
        assert holder["pid"] == proc.pid
        # a second run on the same store is refused, naming the holder
        with pytest.raises(SystemExit) as info:
            main(["run", str(spec_path), "--store", str(url), "--scheduler", cluster2])
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert f"pid {proc.pid}" in err and "in use" in err and str(url) in err
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    partial = done_count(url)
    assert 2 <= partial < 16
    report = run_sweep(parse_spec(toy_spec_text), str(url), scheduler=cluster2)
    assert report.complete and report.tasks_run <= 8 - partial // 2
    reference = tmp_path / "reference.zarr"
    run_sweep(parse_spec(toy_spec_text), str(reference), scheduler=cluster2)
    for name in ("counts", "events", "rolls", "done"):
        a = zarr.open_array(str(url), path=name)[...]
        b = zarr.open_array(str(reference), path=name)[...]
        assert np.array_equal(a, b), name


@pytest.fixture
def finished(tmp_path, cluster2, toy_spec_text, write_spec, capsys):
    url = tmp_path / "cli.zarr"
    main(["run", str(write_spec(toy_spec_text)), "--store", str(url), "--scheduler", cluster2])
    out = capsys.readouterr().out
    assert "dashboard:" in out and "store complete" in out and "#1" in out and "verdict: AGREE at family-wise 1% (Holm)" in out
    return url


def test_query_formats(finished, capsys):
    assert run_cli("query", str(finished), "--sel", "dice_sides=3", "--sel", "rule=plain", "--format", "json") == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 8 and {r["dice_sides"] for r in rows} == {3}
    assert {r["rule"] for r in rows} == {"plain"}
    assert abs(sum(r["estimate"] for r in rows) - 1) < 1e-12
    assert all(r["exact"] == 0.125 and r["replicates"] == 4 for r in rows)
    estimates = [r["estimate"] for r in rows]
    assert estimates == sorted(estimates, reverse=True)
    assert run_cli("query", str(finished), "--format", "csv", "--top", "2") == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "dice_sides,rule,location,estimate,se,low,high,df,exact,z,p,exact_state,replicates"
    assert len(lines) == 1 + 4 * 2
    assert run_cli("query", str(finished)) == 0
    assert "counts: the 5 most frequent locations per grid point" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args,message",
    [
        (["--sel", "rule=wobbly"], "'wobbly' is not on axis 'rule'"),
        (["--sel", "colour=red"], "no grid axis 'colour'"),
        (["--sel", "rule"], "expected AXIS=VALUE"),
        (["--variable", "money"], "--variable 'money'"),
    ],
)
def test_query_errors(finished, capsys, args, message):
    assert run_cli("query", str(finished), *args) == 2
    err = capsys.readouterr().err
    assert err.startswith("boardsweep: error: ") and message in err


def test_status(finished, tmp_path, cluster2, toy_spec_text, capsys):
    assert run_cli("status", str(finished), "--format", "json") == 0
    status = json.loads(capsys.readouterr().out)
    assert status["done"] == status["total"] == 16 and len(status["points"]) == 4
    partial = tmp_path / "partial.zarr"
    run_sweep(parse_spec(toy_spec_text), str(partial), scheduler=cluster2, max_tasks=1)
    assert run_cli("status", str(partial), "--format", "json") == 1  # not every cell done
    status = json.loads(capsys.readouterr().out)
    assert status["done"] == 2 and [p["done"] for p in status["points"]] == [2, 0, 0, 0]
    assert run_cli("status", str(partial)) == 1
    assert "2/16 replicates done" in capsys.readouterr().out
    assert run_cli("status", str(tmp_path / "nothing.zarr")) == 2
    assert "no sweep store" in capsys.readouterr().err
