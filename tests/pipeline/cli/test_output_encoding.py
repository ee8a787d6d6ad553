"""An output stream that cannot encode a character boardsweep prints
(``PYTHONIOENCODING=ascii``, a C locale) gets its ASCII spelling: ``±`` as
``+/-``, tables still lined up, exit 0 (not "unexpected UnicodeEncodeError")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec

SUPPORT = Path(__file__).resolve().parents[2] / "support"


@pytest.fixture(scope="module")
def store(tmp_path_factory, cluster2):
    from specs import TOY_SPEC

    url = tmp_path_factory.mktemp("encoding") / "toy.zarr"
    assert run_sweep(parse_spec(TOY_SPEC, "toy.toml"), str(url), scheduler=cluster2).complete
    return url


def boardsweep(*args: str, encoding: str) -> subprocess.CompletedProcess:
    """The real command in its own process (the toy game registered), its
    output streams in ``encoding``."""
    code = "import toy_registry; from boardsweep.pipeline.cli.commands import command_line; command_line()"
    env = {**os.environ, "PYTHONIOENCODING": encoding, "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, cwd=SUPPORT, env=env,
                          timeout=120)


def test_an_ascii_stream_gets_ascii_spellings(store):
    out = boardsweep("query", str(store), encoding="ascii")
    assert out.returncode == 0, out.stderr.decode()
    assert out.stderr == b""
    text = out.stdout.decode("ascii")  # every byte ASCII
    assert "+/-" in text and "?" not in text
    lines = [line for line in text.splitlines() if line.startswith("|")]
    assert len({len(line) for line in lines}) == 1  # the table's columns line up


def test_a_utf8_stream_keeps_the_plus_minus_sign(store):
    out = boardsweep("query", str(store), encoding="utf-8")
    assert out.returncode == 0, out.stderr.decode()
    assert "±" in out.stdout.decode("utf-8") and "+/-" not in out.stdout.decode("utf-8")
