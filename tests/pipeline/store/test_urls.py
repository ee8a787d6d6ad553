"""Store URLs: a protocol fsspec does not know, one whose package is missing
and ``memory://`` (which worker processes do not share) are refused in one
line before anything starts; ``local://`` and ``file://`` are folders."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from clirun import run_cli

REFUSED = {
    "fille:///tmp/boardsweep-misspelt.zarr": "unknown protocol 'fille'",
    "memory://sweep.zarr": "worker processes do not share",
}
if importlib.util.find_spec("s3fs") is None:
    REFUSED["s3://bucket/sweep.zarr"] = "needs a package that is not installed"


@pytest.mark.parametrize("url", list(REFUSED))
def test_an_unusable_store_url_is_refused_in_one_line(url, write_spec, toy_spec_text, capsys):
    spec = write_spec(toy_spec_text)
    assert run_cli("-q", "run", str(spec), "--store", url) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and REFUSED[url] in err[0] and url in err[0], err


MISSPELT = "fille:///tmp/boardsweep-misspelt.zarr"


@pytest.mark.parametrize("command", [("status",), ("query",), ("report", "--out", "REPORT")])
def test_a_misspelt_url_gets_the_same_line_from_the_reading_commands(command, tmp_path, capsys):
    args = [a.replace("REPORT", str(tmp_path / "report")) for a in command]
    assert run_cli(args[0], MISSPELT, *args[1:]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"boardsweep: error: store {MISSPELT}: unknown protocol 'fille'; give a folder or an fsspec "
                   "URL such as s3://bucket/path"], err
    assert not (tmp_path / "report").exists()


def test_a_local_url_is_a_folder(tmp_path, write_spec, toy_spec_text, cluster2, capsys):
    spec = write_spec(toy_spec_text)
    folder = tmp_path / "store.zarr"
    assert run_cli("-q", "run", str(spec), "--store", f"local://{folder}", "--scheduler", cluster2) == 0
    assert (folder / "zarr.json").is_file()
    bigger = write_spec(toy_spec_text.replace("replicates = 4", "replicates = 6"), "bigger.toml")
    assert run_cli("-q", "run", str(bigger), "--store", f"local://{folder}", "--scheduler", cluster2,
                   "--extend") == 0
    assert run_cli("status", str(folder)) == 0


@pytest.mark.slow  # four whole processes
@pytest.mark.skipif(importlib.util.find_spec("s3fs") is None, reason="s3fs not installed")
@pytest.mark.parametrize("command", [("run", "SPEC", "--store", "URL"), ("status", "URL"), ("query", "URL"),
                                     ("report", "URL", "--out", "REPORT")])
def test_an_s3_endpoint_that_does_not_answer_is_one_line(command, tmp_path):
    """Nothing listens at the endpoint (a closed port on 127.0.0.1): every command says so in one line,
    exit 1, before anything is made (was: 'unexpected EndpointConnectionError')."""
    import os
    import subprocess
    import sys

    from localdask import free_port

    url = "s3://bucket/sweep.zarr"
    spec = Path(__file__).resolve().parents[3] / "sweeps" / "quickstart.toml"  # a new process: a real game
    subs = {"SPEC": str(spec), "URL": url, "REPORT": str(tmp_path / "report")}
    env = {**os.environ, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}", "AWS_ACCESS_KEY_ID": "test",
           "AWS_SECRET_ACCESS_KEY": "test", "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull}
    out = subprocess.run([sys.executable, "-m", "boardsweep", "-q", *(subs.get(a, a) for a in command)],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    err = out.stderr.strip().splitlines()
    assert out.returncode == 1 and len(err) == 1, out.stderr
    assert err[0].startswith(f"boardsweep: error: cannot reach the storage of {url} (EndpointConnectionError"), err
    assert "nothing was changed" in err[0] and not (tmp_path / "report").exists()
