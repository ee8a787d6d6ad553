"""Output that is not a terminal (a log file: CI, cron) holds whole lines
(:func:`boardsweep.pipeline.views.terminal.console`); ``COLUMNS`` still sets a width."""

from __future__ import annotations

import os
import subprocess
import sys

from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.views import terminal


def test_the_console_of_piped_output_does_not_wrap_unless_columns_is_set(monkeypatch, capsys):
    monkeypatch.delenv("COLUMNS", raising=False)
    assert terminal.console().width == terminal.LOG_WIDTH  # capsys: stdout is no terminal
    monkeypatch.setenv("COLUMNS", "80")
    assert terminal.console().width == 80


def test_piped_output_keeps_whole_lines(tmp_path, monopoly_spec_text, cluster2):
    url = tmp_path / "small.zarr"
    assert run_sweep(parse_spec(monopoly_spec_text, str(tmp_path / "small.toml")), str(url), scheduler=cluster2).complete
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    piped = subprocess.run([sys.executable, "-m", "boardsweep", "query", str(url), "--summary"], env=env,
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert piped.returncode == 0, piped.stderr
    lines = piped.stdout.splitlines()
    power = [line for line in lines if line.startswith("power: ")]
    assert len(power) == 1 and "(Holm's" in power[0] and len(power[0]) > 80, piped.stdout  # one whole line
    verdict = next(line for line in lines if line.startswith("verdict in full: "))
    assert "points with an exact answer" in verdict, piped.stdout
    narrow = subprocess.run([sys.executable, "-m", "boardsweep", "query", str(url), "--summary"],
                            env={**env, "COLUMNS": "80"}, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    wrapped = next(line for line in narrow.stdout.splitlines() if line.startswith("power: "))
    assert len(wrapped.rstrip()) <= 80 and "(Holm's" not in wrapped  # the width asked for: wrapped there
