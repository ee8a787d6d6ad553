"""The CLI explains itself: `games`, -v/-q, Dask's scheduler-address config,
shell completion, tables at 80 columns and in pipes, and a dashboard that
opens during a run.  Real subprocesses, real clusters, real HTTP."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.request

from localdask import BOARDSWEEP, finish, kill, local_dask, start_client, toy_delay

PIPED = {"COLUMNS": "80", "TERM": "dumb"}


def boardsweep(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([BOARDSWEEP, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **PIPED, **(env or {})})


def test_games_lists_the_installed_games():
    out = boardsweep("games")
    assert out.returncode == 0, out.stderr
    for name in ("monopoly", "shut_the_box", "hk_monopoly"):
        assert re.search(rf"^{name}  \(from boardsweep; exact answer: yes\)$", out.stdout, re.M), out.stdout
    listed = json.loads(boardsweep("games", "--format", "json").stdout)
    assert {"monopoly", "shut_the_box", "hk_monopoly"} <= {g["name"] for g in listed}


def test_games_name_lists_parameters_outputs_and_exact():
    out = boardsweep("games", "monopoly").stdout
    assert "exact answer: yes" in out
    assert "deck_policy (str, default 'independent'): one of 'independent'," in out
    assert "'shuffled_cycle'" in out
    assert "dice_sides (int, default 6): an integer >= 2" in out
    assert "turns (int, default" in out and "counts (int64; checkpoint, location)" in out
    assert all(len(line) <= 80 for line in out.splitlines())
    described = json.loads(boardsweep("games", "shut_the_box", "--format", "json").stdout)
    policy = next(p for p in described["parameters"] if p["name"] == "policy")
    assert policy["type"] == "str" and policy["default"] == "optimal" and "'greedy'" in policy["allowed"]
    assert described["exact"] is True and "exact_expected_rolls" in described["exact_variables"]


def test_games_unknown_name_is_one_line_exit_2():
    out = boardsweep("games", "nope")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "unknown game 'nope'; known games:" in out.stderr


def test_shell_completion_of_game_names():
    env = {"_BOARDSWEEP_COMPLETE": "bash_complete", "COMP_WORDS": "boardsweep games shut", "COMP_CWORD": "2"}
    out = boardsweep(env=env)
    assert out.returncode == 0 and "plain,shut_the_box" in out.stdout.split()
    assert "_boardsweep_completion" in boardsweep(env={"_BOARDSWEEP_COMPLETE": "bash_source"}).stdout


def test_verbose_and_quiet_exclude_each_other():
    out = boardsweep("-v", "-q", "games")
    assert out.returncode == 2 and "-v and -q exclude each other" in out.stderr


def test_run_dashboard_answers_and_tables_fit_80_columns_piped(tmp_path, toy_spec_text, write_spec):
    """The dashboard link printed by `run` serves Dask's status page (bokeh
    installed) while the run goes on; the piped output has no cut headers or
    numbers, and a legend."""
    spec = write_spec(toy_spec_text)
    slow, flag = toy_delay(tmp_path, 0.5)  # the run lasts until the page has been read
    proc = start_client(tmp_path, "run", str(spec), "--store", str(tmp_path / "toy.zarr"),
                        "--workers", "1", env={**PIPED, **slow})
    try:
        line = ""
        end = time.monotonic() + 120
        while "dashboard:" not in line and time.monotonic() < end:
            line = proc.stdout.readline()
            assert line or proc.poll() is None, proc.stderr.read()
        url = re.search(r"dashboard: (http://127\.0\.0\.1:\d+/\S*)", line).group(1)
        with urllib.request.urlopen(url, timeout=30) as page:
            assert page.status == 200
            body = page.read().decode()
        assert "needs bokeh" not in body.lower() and "bokeh" in body.lower()
        assert proc.poll() is None  # the page was served while the run went on
        flag.unlink()
        code, out, err = finish(proc)
    finally:
        kill(proc)
    assert code == 0, out + err
    store = str(tmp_path / "toy.zarr")
    too_wide = [x for x in out.splitlines() if store not in x and (len(x) > 80 or "…" in x)]
    assert not too_wide, too_wide  # a line that names the store is never cut (it may be copied)
    words = " ".join(out.split())
    assert "counts_frequency: " in words and "verdict: " in words and "z = (estimate - exact) / s.e." in words
    rows = [x.split() for x in out.splitlines() if x.startswith(("2 ", "3 "))]
    assert [r[:2] for r in rows] == [["2", "plain"], ["2", "sticky"], ["3", "plain"], ["3", "sticky"]]

    query = boardsweep("query", str(tmp_path / "toy.zarr"), "--top", "2")
    assert query.returncode == 0, query.stderr
    out = query.stdout
    assert "…" not in out and all(len(x) <= 80 for x in out.splitlines())
    assert re.search(r" \d\.\de-0\d ", out), out  # standard errors: 2 significant digits
    assert "se: standard error" in " ".join(out.split()) and " ± " in out


def test_quiet_run_prints_only_the_result(tmp_path, toy_spec_text, write_spec):
    spec = write_spec(toy_spec_text)
    code, out, err = finish(start_client(tmp_path, "-q", "run", str(spec), "--store",
                                         str(tmp_path / "q.zarr"), "--workers", "1", env=PIPED))
    assert code == 0, err
    lines = out.strip().splitlines()
    assert any(line.startswith("verdict: ") for line in lines), out  # the answers and the verdict are results
    assert "sweep toy" not in out and "wall " not in out and "dashboard" not in out  # no banner, no timings
    assert re.fullmatch(r"this run: 12 tasks \(8 simulation, 4 exact\)(, \d+ during start-up)?", lines[-2])
    assert lines[-1] == f"store complete: 16 of 16 replicates and 4 of 4 exact answers done: {tmp_path / 'q.zarr'}"


def test_dask_scheduler_address_is_honoured_without_scheduler_option(tmp_path, toy_spec_text, write_spec):
    spec = write_spec(toy_spec_text)
    with local_dask(tmp_path / "logs", workers=1) as cluster:
        code, out, err = finish(start_client(
            tmp_path, "run", str(spec), "--store", str(tmp_path / "d.zarr"),
            env={**PIPED, "DASK_SCHEDULER_ADDRESS": cluster.address}))
        with cluster.client() as client:
            prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert code == 0, out + err
    assert f"on Dask scheduler {cluster.address}" in " ".join(out.split())
    assert "sim" in prefixes and "exact" in prefixes
