"""The installed package: one import name, ``boardsweep``, whatever folders
the user has; and the source revision fixed when the package was built, never
the revision of a repository around the venv."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HAS_GIT = shutil.which("git") is not None


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", "-c", "user.name=u", "-c", "user.email=u@example.org", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


def _source_copy(dest: Path) -> Path:
    """The repository's files (tracked and untracked, not ignored), without its .git."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def _wheel(src: Path, out: Path, revision: str = "") -> Path:
    env = {**os.environ, "BOARDSWEEP_REVISION": revision}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(src)],
                   check=True, env=env, capture_output=True)
    return next(out.glob("boardsweep-*.whl"))


def _install(wheel: Path, target: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                    str(wheel)], check=True, capture_output=True)
    return target


def _python(code: str, site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """Run ``code`` with the installed copy first on the path, from ``cwd``."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, *(["-c", code] if code else []), *args], cwd=cwd, env=env,
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """A wheel built from a git checkout of its own, installed into a folder."""
    if not HAS_GIT:
        pytest.skip("needs git")
    tmp = tmp_path_factory.mktemp("package")
    src = _source_copy(tmp / "src")
    _git("init", "-q", cwd=src)
    _git("add", "-A", cwd=src)
    _git("commit", "-q", "-m", "build me", cwd=src)
    wheel = _wheel(src, tmp / "wheels")
    return {"wheel": wheel, "site": _install(wheel, tmp / "site"), "revision": _git("rev-parse", "HEAD", cwd=src)}


@pytest.fixture
def user_repo(tmp_path) -> Path:
    """A user's own git repository with folders named core/ and pipeline/."""
    repo = tmp_path / "analysis"
    for name in ("core", "pipeline"):
        (repo / name).mkdir(parents=True)
        (repo / name / "__init__.py").write_text("raise ImportError('the user\\'s own package')\n")
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("commit", "-q", "-m", "mine", cwd=repo)
    return repo


def test_wheel_installs_one_import_name(built):
    with zipfile.ZipFile(built["wheel"]) as wheel:
        tops = {name.split("/")[0] for name in wheel.namelist()}
        names = set(wheel.namelist())
    assert {t for t in tops if not t.endswith(".dist-info")} == {"boardsweep"}
    assert {"boardsweep/__init__.py", "boardsweep/__main__.py", "boardsweep/core/games.py",
            "boardsweep/pipeline/cli/commands.py", "boardsweep/core/hk_monopoly/board.toml", "boardsweep/py.typed"} <= names
    assert not any(n.startswith(("boardsweep/tests/", "boardsweep/setup.py", "boardsweep/benchmarks/"))
                   for n in names)


def test_users_own_core_and_pipeline_do_not_shadow_it(built, user_repo):
    code = ("import boardsweep, boardsweep.core.games as g; from boardsweep.pipeline import store; "
            "print(boardsweep.__file__); print(boardsweep.open_sweep is store.open_sweep); "
            "print(sorted(g.game_names()))")
    out = _python(code, built["site"], user_repo)
    assert out.returncode == 0, out.stderr
    where, same, games = out.stdout.splitlines()
    assert Path(where).is_relative_to(built["site"]) and same == "True"
    assert all(name in games for name in ("monopoly", "shut_the_box", "hk_monopoly"))
    cli = _python("", built["site"], user_repo, "-m", "boardsweep", "exact", "monopoly",
                  "--set", "dice_sides=4", "--format", "json")
    assert cli.returncode == 0 and '"101524"' in cli.stdout, cli.stderr


def test_installed_package_records_its_build_revision(built, user_repo):
    code = "from boardsweep.pipeline.store import source_revision; print(source_revision())"
    out = _python(code, built["site"], user_repo)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == built["revision"] != _git("rev-parse", "HEAD", cwd=user_repo)


def test_build_argument_sets_the_revision_without_git(tmp_path, user_repo):
    src = _source_copy(tmp_path / "src")  # no .git, as in the docker build context
    code = "from boardsweep.pipeline.store import source_revision; print(source_revision())"
    for revision, expected in (("", "unknown"), ("v9-from-the-build", "v9-from-the-build")):
        site = _install(_wheel(src, tmp_path / f"wheels{revision}", revision), tmp_path / f"site{revision}")
        assert _python(code, site, user_repo).stdout.strip() == expected


def test_editable_checkout_reads_its_own_revision():
    from boardsweep.pipeline.store import source_revision

    if not ((ROOT / ".git").exists() and HAS_GIT):
        assert source_revision() == "unknown"
    else:
        assert source_revision() == _git("describe", "--always", "--dirty", "--abbrev=40", cwd=ROOT)


def test_kept_results_key_changes_with_every_edit_of_a_dirty_checkout(tmp_path, monkeypatch):
    """``-dirty`` alone names every uncommitted state alike: the kept verdict's
    key adds the sources' digest there, so an edit is never read back as the
    code that computed it; a clean revision is its own key."""
    from boardsweep.pipeline.store import schema

    for folder in ("core", "pipeline/run"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "a.py").write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("not code")
    monkeypatch.setattr(schema, "source_revision", lambda: "abc123-dirty")
    first = schema.code_revision(tmp_path)
    assert first.startswith("abc123-dirty+") and schema.code_revision(tmp_path) == first
    (tmp_path / "notes.txt").write_text("still not code")
    assert schema.code_revision(tmp_path) == first
    (tmp_path / "pipeline/run/a.py").write_text("x = 2\n")
    second = schema.code_revision(tmp_path)
    assert second != first
    (tmp_path / "pipeline/run/a.py").rename(tmp_path / "pipeline/run/b.py")
    assert schema.code_revision(tmp_path) not in (first, second)
    monkeypatch.setattr(schema, "source_revision", lambda: "unknown")
    assert schema.code_revision(tmp_path).startswith("unknown+")
    monkeypatch.setattr(schema, "source_revision", lambda: "abc123")
    assert schema.code_revision(tmp_path) == "abc123"


def test_editable_install_holds_only_what_the_wheel_ships():
    """The strict editable install exposes the package's modules, not the repository's other folders."""
    import importlib.util

    for name in ("boardsweep.tests", "boardsweep.setup", "boardsweep.benchmarks", "boardsweep.docker"):
        assert importlib.util.find_spec(name) is None, name
    assert importlib.util.find_spec("boardsweep.pipeline.store.schema") is not None
