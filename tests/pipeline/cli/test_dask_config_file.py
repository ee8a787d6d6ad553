"""A Dask config file that is not YAML (or not a mapping) is named in one line
with the line of YAML's mark and what to do, exit 2, no traceback: dask reads
it when first imported, inside whichever command imports it first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def boardsweep(config: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DASK_CONFIG": str(config)}
    return subprocess.run([sys.executable, "-m", "boardsweep", *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.parametrize("command", ["run", "status"])
def test_a_malformed_yaml_file_is_named_with_its_line(tmp_path, command):
    config = tmp_path / "dask"
    config.mkdir()
    bad = config / "x.yaml"
    bad.write_text("distributed:\n  worker:\n    memory: [unclosed\n  x: 1\n")
    store = tmp_path / "s.zarr"
    args = (["run", str(ROOT / "sweeps" / "quickstart.toml"), "--store", str(store)] if command == "run"
            else ["status", str(store)])
    out = boardsweep(config, *args)
    assert out.returncode == 2, out.stderr
    err = out.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("boardsweep: error: the Dask config file "), err
    assert str(bad) in err[0] and "line 4, column 4" in err[0] and "fix or remove it" in err[0]
    assert "unexpected" not in err[0] and "Traceback" not in out.stderr
    assert not store.exists()


def test_a_yaml_list_is_named_too(tmp_path):
    (tmp_path / "x.yaml").write_text("- 1\n- 2\n")
    out = boardsweep(tmp_path, "status", str(tmp_path / "s.zarr"))
    assert out.returncode == 2, out.stderr
    assert "x.yaml is malformed (config files must have a dict" in out.stderr and "unexpected" not in out.stderr
