"""``run``'s cluster options without a batch system: what ``--cluster`` needs
(dask-jobqueue, the submit command, cores and memory) and which options
exclude each other, each refused in one line with exit code 2 before anything
is written; the dashboard address rule; the performance report's place."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from boardsweep.pipeline.cluster import batch
from boardsweep.pipeline import errors
from boardsweep.pipeline.cluster.dashboard import dashboard_address, performance_report_path
from clirun import run_cli  # tests/support is on sys.path (conftest)

SLURM_SETTINGS = {"DASK_JOBQUEUE__SLURM__CORES": "1", "DASK_JOBQUEUE__SLURM__MEMORY": "2GiB"}


def _refused(capsys, tmp_path, *args: str) -> str:
    """Run ``boardsweep run ARGS``; assert one line, exit 2 and nothing written; the line."""
    assert run_cli("run", *args) == 2
    err = capsys.readouterr().err
    assert err.startswith("boardsweep: error: ") and err.strip().count("\n") == 0, err
    assert not (tmp_path / "results").exists() and not (tmp_path / "x.zarr").exists()
    return err


@pytest.fixture
def spec_path(tmp_path, toy_spec_text, write_spec, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return str(write_spec(toy_spec_text))


def test_cluster_without_dask_jobqueue_says_what_to_install(spec_path, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask_jobqueue", None)  # import dask_jobqueue raises ImportError
    err = _refused(capsys, tmp_path, spec_path, "--cluster", "slurm", "--store", str(tmp_path / "x.zarr"))
    assert "--cluster slurm needs dask-jobqueue: pip install 'boardsweep[hpc]'" in err


def test_cluster_without_the_submit_command(spec_path, tmp_path, capsys, monkeypatch):
    pytest.importorskip("dask_jobqueue")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    err = _refused(capsys, tmp_path, spec_path, "--cluster", "pbs", "--store", str(tmp_path / "x.zarr"))
    assert "the qsub command is not on PATH" in err


def test_cluster_without_cores_and_memory_names_the_settings(spec_path, tmp_path, capsys, monkeypatch):
    pytest.importorskip("dask_jobqueue")
    (tmp_path / "bin").mkdir()
    fake = tmp_path / "bin" / "sbatch"  # only looked up on PATH: the run is refused before any submission
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    err = _refused(capsys, tmp_path, spec_path, "--cluster", "slurm", "--store", str(tmp_path / "x.zarr"))
    assert "needs jobqueue.slurm.cores and jobqueue.slurm.memory" in err
    assert "DASK_JOBQUEUE__SLURM__CORES=1" in err


@pytest.mark.parametrize("args, said", [
    (["--jobs", "2"], "--jobs sizes the worker jobs of --cluster"),
    (["--cluster", "slurm", "--scheduler", "tcp://127.0.0.1:1"], "drop --scheduler"),
    (["--cluster", "slurm", "--workers", "2"], "drop --workers"),
    (["--scheduler", "tcp://127.0.0.1:1", "--dashboard-address", ":8787"], "has its own dashboard"),
    (["--cluster", "nosuch"], "'nosuch' is not one of 'slurm'"),
])
def test_options_that_exclude_each_other(spec_path, tmp_path, capsys, args, said):
    err = _refused(capsys, tmp_path, spec_path, "--store", str(tmp_path / "x.zarr"), *args)
    assert said in err, err


@pytest.mark.parametrize("text", ["0", "3:2", "0:4", "a", "1:2:3", ""])
def test_jobs_must_be_n_or_min_max(text):
    with pytest.raises(errors.BatchUnavailable, match="expected N or MIN:MAX"):
        batch.parse_jobs(text)


def test_jobs_fixed_and_adaptive():
    assert batch.parse_jobs("4") == batch.Jobs(4, 4) and not batch.parse_jobs("4").adaptive
    assert batch.parse_jobs("1:8") == batch.Jobs(1, 8) and batch.parse_jobs("1:8").adaptive
    assert str(batch.parse_jobs("2:5")) == "2:5"


def test_dashboard_address_of_the_embedded_cluster(monkeypatch):
    import dask.config

    assert dashboard_address(None) == "127.0.0.1:0"  # nothing configured: a free loopback port
    assert dashboard_address(":8790") == "127.0.0.1:8790"  # a bare port stays on loopback
    assert dashboard_address("8790") == "127.0.0.1:8790"
    assert dashboard_address("0.0.0.0:8790") == "0.0.0.0:8790"  # every interface, when asked
    with dask.config.set({"distributed.scheduler.dashboard.address": ":8791"}):
        assert dashboard_address(None) == "127.0.0.1:8791"  # Dask's configuration
        assert dashboard_address(":8792") == "127.0.0.1:8792"  # the option wins


def test_performance_report_lies_beside_the_store(tmp_path):
    from boardsweep.pipeline.store import local_root

    for url in (str(tmp_path / "res" / "pe84.zarr"), str(tmp_path / "res" / "pe84.zarr") + "/",
                f"file://{tmp_path}/res/pe84.zarr", f"local://{tmp_path}/res/pe84.zarr"):
        assert performance_report_path(url, local_root(url)) == str(tmp_path / "res" / "pe84.performance.html")
    url = "s3://bucket/runs/pe84.zarr"  # object storage: in the working folder
    assert performance_report_path(url, local_root(url)) == str(Path("pe84.performance.html").resolve())
