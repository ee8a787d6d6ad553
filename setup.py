"""Build hook: record the source revision inside the built package.

Everything else about the distribution is in ``pyproject.toml``.  A wheel
built from a git checkout carries ``_build_info.json`` with the checkout's
``git describe --always --dirty``; ``BOARDSWEEP_REVISION`` overrides it (the
docker build, which has no ``.git``, passes it as a build argument).  Only
the repository whose root holds this file is asked, never an enclosing one.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
BUILD_INFO = ("boardsweep", "_build_info.json")


def source_revision() -> str:
    """``BOARDSWEEP_REVISION``, else this checkout's revision, else ``unknown``."""
    if os.environ.get("BOARDSWEEP_REVISION"):
        return os.environ["BOARDSWEEP_REVISION"]
    if not (ROOT / ".git").exists():
        return "unknown"
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty", "--abbrev=40"],
            capture_output=True, text=True, timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


class build_py_with_revision(build_py):
    """``build_py`` that also writes the revision file into the build tree.

    The package ``boardsweep`` is the repository root (``package-dir``), so
    this file is left out of it explicitly.
    """

    def find_package_modules(self, package: str, package_dir: str) -> list[tuple[str, str, str]]:
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if Path(m[2]).resolve() != Path(__file__).resolve()]

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib).joinpath(*BUILD_INFO)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"git_revision": source_revision()}) + "\n")


setup(cmdclass={"build_py": build_py_with_revision})
