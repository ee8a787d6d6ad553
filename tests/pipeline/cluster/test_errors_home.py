"""Every exception class of spec/ and cluster/ lives in pipeline/errors.py, importable where it was."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import boardsweep.pipeline.errors as errors

ROOT = Path(errors.__file__).resolve().parent
OLD_HOMES = {
    "spec.parse": ["SpecError"],
    "cluster.client": ["BadWorkers", "BadDashboardAddress", "BadDaskConfig", "ClusterNotStarted", "NoWorkers",
                       "NoWorkersLeft", "NotAScheduler"],
    "cluster.batch": ["BatchUnavailable", "JobsNotStarted"],
}


def test_no_exception_class_is_defined_in_spec_or_cluster():
    for folder in ("spec", "cluster"):
        for path in sorted((ROOT / folder).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef):
                    bases = {ast.unparse(b) for b in node.bases}
                    assert not any(b.endswith(("Error", "Exception", "Fault", "Lost")) for b in bases), \
                        f"{path.name}: class {node.name} belongs in pipeline/errors.py"


def test_the_errors_are_still_importable_where_they_were():
    for module, names in OLD_HOMES.items():
        old = importlib.import_module(f"boardsweep.pipeline.{module}")
        for name in names:
            assert getattr(old, name) is getattr(errors, name)
