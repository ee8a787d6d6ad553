"""Provenance: a store records boardsweep's own source revision, fixed when
the package was built, never the revision of a repository around the venv."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _build_and_install(tmp_path: Path, env: dict[str, str]) -> Path:
    wheels, target = tmp_path / "wheels", tmp_path / "site"
    build_env = {**os.environ, **env}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
                   check=True, env=build_env, capture_output=True)
    wheel = next(wheels.glob("boardsweep-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                    str(wheel)], check=True, capture_output=True)
    return target


def _revision_seen_from(other_repo: Path, site: Path) -> tuple[str, str]:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import pipeline.store as s; "
            "print(s.__file__); print(s.source_revision())")
    out = subprocess.run([sys.executable, "-c", code, str(site)], cwd=other_repo, check=True,
                         capture_output=True, text=True).stdout.split("\n")
    return out[0], out[1]


@pytest.fixture
def other_repo(tmp_path) -> Path:
    """A user's own git repository, where the venv and the work live."""
    repo = tmp_path / "analysis"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / "notes.txt").write_text("mine\n")
    _git("add", ".", cwd=repo)
    _git("-c", "user.name=u", "-c", "user.email=u@example.org", "commit", "-q", "-m", "x", cwd=repo)
    return repo


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs boardsweep's git checkout")
def test_installed_package_records_its_build_revision(tmp_path, other_repo):
    expected = _git("describe", "--always", "--dirty", "--abbrev=40", cwd=ROOT)
    site = _build_and_install(tmp_path / "plain", {"BOARDSWEEP_REVISION": ""})
    where, revision = _revision_seen_from(other_repo, site)
    assert Path(where).is_relative_to(site)
    assert revision == expected
    assert revision != _git("rev-parse", "HEAD", cwd=other_repo)


def test_build_argument_overrides_the_revision(tmp_path, other_repo):
    site = _build_and_install(tmp_path / "docker", {"BOARDSWEEP_REVISION": "v9-from-the-build"})
    assert _revision_seen_from(other_repo, site)[1] == "v9-from-the-build"


def test_editable_checkout_reads_its_own_revision():
    from pipeline.store import source_revision

    if not (ROOT / ".git").exists():
        assert source_revision() == "unknown"
    else:
        assert source_revision() == _git("describe", "--always", "--dirty", "--abbrev=40", cwd=ROOT)
