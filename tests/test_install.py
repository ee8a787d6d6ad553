"""Installed, not cloned: the wheel, pip-installed into a fresh virtual environment,
runs the README's first sweep and the nightly check by name from an empty folder
outside the repository; and the README's install and run blocks, read from the
README, run verbatim in a fresh clone.

Quick: the wheel is built as tests/test_package.py builds it, installed without
its dependencies, and the fresh environment reads those (numpy, Dask, ...) from
this one's site-packages through a folder of links that leaves out boardsweep's
own editable install (and the example plugin's), so what runs is the wheel alone.
"""

from __future__ import annotations

import os
import re
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


def test_the_nightly_check_runs_by_name_from_an_empty_folder(installed, tmp_path):
    checked = _command(installed, tmp_path, "verify", "nightly", "--against", "nightly", "--workers", "2")
    assert checked.returncode == 0, checked.stdout + checked.stderr  # the shipped sweep against its shipped digest
    assert "verify: OK" in checked.stdout and "nightly.digest.json" in checked.stdout
    copied = _command(installed, tmp_path, "examples", "copy", "nightly")
    assert copied.returncode == 0, copied.stderr
    for name in ("nightly.toml", "nightly.digest.json"):  # the digest comes with the spec
        assert (tmp_path / name).read_bytes() == (ROOT / "sweeps" / name).read_bytes(), name


def readme_block(readme: str, heading: str, index: int = 0) -> str:
    """The ``index``-th bash block of the README's section ``## heading``, as written there."""
    section = readme.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section, re.S)[index]


def _shell(script: str, cwd: Path) -> subprocess.CompletedProcess:
    """``script`` run by bash in ``cwd`` as a user's fresh shell has it: no virtual environment, this one's
    ``bin`` off the PATH (so ``python3`` is the system's), pip's settings of the machine kept."""
    own = str(Path(sys.prefix) / "bin")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != own)
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=1200)


def test_the_readme_install_and_run_blocks_work_verbatim_in_a_fresh_clone(tmp_path):
    """What a new user does first: clone, paste the install block, paste the run block; then the wheel block.
    The clone holds what is committed (the README read is the clone's own)."""
    if shutil.which("git") is None or shutil.which("python3") is None:
        pytest.skip("needs git and python3")
    subprocess.run(["git", "clone", "-q", str(ROOT), str(tmp_path / "clone")], check=True, capture_output=True)
    clone = tmp_path / "clone"
    readme = (clone / "README.md").read_text()
    install, run, wheel = readme_block(readme, "Install"), readme_block(readme, "Run"), readme_block(readme, "Install", 1)
    assert "pip install -q ." in install and "-e" not in install.split()  # the first block: the package itself
    first = _shell(f"{install}\n{run}", clone)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert (clone / "results" / "quickstart.zarr" / "zarr.json").is_file()
    where = _shell(".venv/bin/python -c 'import boardsweep; print(boardsweep.__file__)'", clone)
    assert Path(where.stdout.strip()).is_relative_to(clone / ".venv"), where.stdout + where.stderr  # installed, not the folder
    second = _shell(f"{wheel}\nboardsweep examples", clone)  # the wheel it names is the one `pip wheel` made
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    named = re.search(r"dist/(boardsweep-\S+\.whl)", wheel).group(1)
    assert [p.name for p in (clone / "dist").glob("*.whl")] == [named]
    assert "quickstart" in second.stdout
