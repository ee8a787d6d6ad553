"""A spec's ``[storage_options]`` reach fsspec for the store, in the run's
worker processes too (SeaweedFS on 127.0.0.1, its endpoint given only
there); credentials in them are refused in one line, exit 2, nothing made."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from clirun import run_cli
from specs import HERE, spec_toml  # tests/support is on sys.path

SPEC = dict(params={"size": 8}, grid={"dice_sides": [2, 3], "rule": ["plain"]},
            run={"replicates": 2, "games": 2, "turns": 60}, checkpoints={"count": 5},
            tasks={"replicates_per_task": 1})


def _with_options(options: dict) -> str:
    """The toy spec with a ``[storage_options]`` table (values: strings or one level of inline tables)."""
    def value(v) -> str:
        return "{" + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + "}" if isinstance(v, dict) else f'"{v}"'

    return spec_toml("toy", **SPEC) + "\n[storage_options]\n" + "".join(f"{k} = {value(v)}\n"
                                                                        for k, v in options.items())


@pytest.mark.parametrize("options, key", [
    ({"key": "AKIAEXAMPLE", "endpoint_url": "http://127.0.0.1:1"}, "storage_options.key"),
    ({"client_kwargs": {"aws_secret_access_key": "x"}}, "storage_options.client_kwargs.aws_secret_access_key"),
    ({"session_token": "x"}, "storage_options.session_token"),
])
def test_credentials_in_storage_options_are_refused_in_one_line(options, key, tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(_with_options(options))
    store = tmp_path / "never.zarr"
    assert run_cli("run", str(spec), "--store", str(store)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{spec}: {key}: credentials are never written in a spec" in err[0], err
    assert "AWS_ACCESS_KEY_ID" in err[0] and not store.exists()


@pytest.mark.slow
def test_storage_options_reach_the_workers(s3server, bucket_url, tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(_with_options({"endpoint_url": s3server.endpoint}))
    env = {k: v for k, v in os.environ.items() if k != "AWS_ENDPOINT_URL"}  # the endpoint is the spec's only
    command = [sys.executable, "-c", "import toy_registry; from boardsweep.pipeline.cli.commands import main; main()",
               "-q", "run", str(spec), "--store", bucket_url, "--workers", "1"]
    done = subprocess.run(command, cwd=HERE, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert run_cli("status", bucket_url) == 0  # complete and intact (this process has the endpoint)
