"""The habits of a well-kept package: lint clean, a LICENSE matching the
metadata, a changelog, type information shipped, and CI running the README's
test command."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_ruff_passes_on_the_whole_repository():
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", str(ROOT)],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr


def test_license_file_matches_the_metadata():
    assert PYPROJECT["project"]["license"] == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Permission is hereby granted, free of charge" in text


def test_changelog_names_the_released_version():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in text
    assert f"## [{PYPROJECT['project']['version']}]" in text


def test_type_information_is_shipped():
    assert (ROOT / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["boardsweep"]


def test_ci_runs_the_readme_test_command_verbatim():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"\*\*Run the tests\*\*.*?```bash\n(.+?)\n```", readme, re.S).group(1)
    assert block in (ROOT / ".ci" / "run").read_text().splitlines()
    assert "examples/chutes_ladders" in block  # the example game and its tests run in CI


def test_builtin_games_are_registered_by_entry_point():
    entries = PYPROJECT["project"]["entry-points"]["boardsweep.games"]
    assert entries == {name: f"boardsweep.core.{name}.game"
                       for name in ("monopoly", "shut_the_box", "hk_monopoly")}


def test_readme_is_short_and_holds_no_dated_measurement():
    """Measurements live in benchmarks/README.md, explanations on the documentation site."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b|\bUTC\b|\bload (average )?\d", readme)


def test_ci_builds_the_documentation_with_warnings_as_errors():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "sphinx-build -W" in ci and '".[docs]"' in ci
    assert "docs" in PYPROJECT["project"]["optional-dependencies"]


def test_the_statistics_page_writes_its_formulas_as_mathematics():
    """MyST dollar math, which MathJax renders: no formula left as inline code (``sqrt(N)``, ``s^2``)."""
    text = (ROOT / "docs" / "explanation" / "statistics.md").read_text()
    as_code = [c for c in re.findall(r"(?<!`)`([^`\n]+(?:\n[^`\n]+)?)`(?!`)", text) if re.search(r"sqrt\(|\^|\bsum x\b|\bsigma\b|\bphi\b", c)]
    assert not as_code, as_code
    assert len(re.findall(r"\$[^$\n]+\$", text)) >= 50 and r"\sqrt{N}" in text


def test_the_api_reference_lists_no_internals():
    api = (ROOT / "docs" / "reference" / "api.rst").read_text()
    for internal in ("RunRequest", "TaskLayout", "finish_compile", "cluster_target", "execute.execute"):
        assert internal not in api, internal
