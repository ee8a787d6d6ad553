"""Installed, not cloned: the wheel, pip-installed into a fresh virtual environment,
runs the README's first sweep from an empty folder outside the repository.

Quick: the wheel is built as tests/test_package.py builds it, installed without
its dependencies, and the fresh environment reads those (numpy, Dask, ...) from
this one's site-packages through a folder of links that leaves out boardsweep's
own editable install (and the example plugin's), so what runs is the wheel alone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

#: Entries of this environment's site-packages the fresh one must not see: the repository's own install.
OWN = ("boardsweep", "__editable__", "chutes_ladders", "_chutes_ladders", "__pycache__")


def _source_copy(dest: Path) -> Path:
    """The package's files (what ``git ls-files`` lists, tracked and untracked) without tests or docs."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file() and not name.startswith(("tests/", "docs/", "benchmarks/", "examples/")):
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def _dependencies(dest: Path) -> Path:
    """A folder of links to this environment's installed distributions, boardsweep's own left out."""
    site = Path(sysconfig.get_paths()["purelib"])
    dest.mkdir()
    for entry in site.iterdir():
        if not entry.name.lower().startswith(OWN) and not entry.name.endswith(".pth"):
            (dest / entry.name).symlink_to(entry)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The ``bin`` folder of a fresh venv holding the wheel of this checkout."""
    if shutil.which("git") is None:
        pytest.skip("needs git")
    tmp = tmp_path_factory.mktemp("install")
    src = _source_copy(tmp / "src")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "wheels"), str(src)],
                   check=True, capture_output=True)  # as tests/test_package.py builds it
    wheel = next((tmp / "wheels").glob("boardsweep-*.whl"))
    env = tmp / "venv"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "dependencies.pth").write_text(f"{_dependencies(tmp / 'deps')}\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                    "--no-index", str(wheel)], check=True, capture_output=True)
    return env / "bin"


def _command(bin_dir: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run([str(bin_dir / "boardsweep"), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def test_quickstart_runs_from_an_empty_folder_after_pip_install(installed, tmp_path):
    where = subprocess.run([str(installed / "python"), "-c", "import boardsweep; print(boardsweep.__file__)"],
                           cwd=tmp_path, check=True, capture_output=True, text=True).stdout.strip()
    assert Path(where).is_relative_to(installed.parent) and not Path(where).is_relative_to(ROOT)  # the wheel's
    listed = _command(installed, tmp_path, "examples")
    assert listed.returncode == 0 and "quickstart" in listed.stdout, listed.stderr
    first = _command(installed, tmp_path, "run", "quickstart", "--workers", "2")  # the README's first run
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "results" / "quickstart.zarr" / "zarr.json").is_file()
    status = _command(installed, tmp_path, "status", "results/quickstart.zarr", "-q")
    assert status.returncode == 0, status.stdout + status.stderr  # every cell done
    copied = _command(installed, tmp_path, "examples", "copy", "quickstart")
    assert copied.returncode == 0 and (tmp_path / "quickstart.toml").is_file(), copied.stderr
    again = _command(installed, tmp_path, "run", "quickstart.toml", "-q")  # the copy is the same sweep: resumed
    assert again.returncode == 0, again.stderr
    assert "made by another spec" not in again.stderr
