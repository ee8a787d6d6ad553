"""The package's faces: every name ``boardsweep`` and ``boardsweep.pipeline``
promise resolves to the one function that owns it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import boardsweep
import boardsweep.pipeline as pipeline


def test_the_top_level_names_resolve_to_their_owners():
    from boardsweep.pipeline import api
    from boardsweep.pipeline.analysis.power import plan_run
    from boardsweep.pipeline.store.open import load_sweep, open_sweep

    assert boardsweep.open_sweep is open_sweep and boardsweep.load_sweep is load_sweep
    assert pipeline.open_sweep is open_sweep and pipeline.load_sweep is load_sweep
    assert boardsweep.plan_run is plan_run
    assert (boardsweep.Spec, boardsweep.run, boardsweep.Result) == (api.Spec, api.run, api.Result)
    assert set(boardsweep.__all__) <= set(dir(boardsweep))


ROOT = Path(__file__).resolve().parents[1]


def _lazy_faces() -> dict[str, Path]:
    """The folders whose face hands its names on when first asked (PEP 562 ``__getattr__``)."""
    found = {}
    for init in sorted(ROOT.glob("pipeline/*/__init__.py")) + sorted(ROOT.glob("core/*/__init__.py")):
        if any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__"
               or isinstance(n, ast.Assign) and any(isinstance(t, ast.Tuple) and "__getattr__" in
                                                    [getattr(e, "id", None) for e in t.elts] for t in n.targets)
               for n in ast.parse(init.read_text()).body):
            found["boardsweep." + ".".join(init.parent.relative_to(ROOT).parts)] = init
    return found


def _declared(init: Path) -> dict[str, tuple[str, str]]:
    """What a lazy face's ``if TYPE_CHECKING:`` block imports: public name -> (module, its name there)."""
    block = next(n for n in ast.parse(init.read_text()).body
                 if isinstance(n, ast.If) and getattr(n.test, "id", None) == "TYPE_CHECKING")
    return {a.asname or a.name: (node.module, a.name) for node in block.body for a in node.names}


def test_every_lazy_face_hands_on_what_it_declares():
    """A lazy face's ``__all__`` is what its ``TYPE_CHECKING`` block imports (what type checkers and
    readers see), and each name resolves to the very object of the module that block names."""
    import importlib

    faces = _lazy_faces()
    assert {"boardsweep.pipeline.cluster"} <= set(faces)
    for package, init in faces.items():
        face = importlib.import_module(package)
        declared = _declared(init)
        assert sorted(declared) == sorted(face.__all__), package
        for public, (module, name) in declared.items():
            assert getattr(face, public) is getattr(importlib.import_module(f"{package}.{module}"), name), public
        with pytest.raises(AttributeError):
            face.not_a_public_name  # noqa: B018


def test_importing_a_lazy_face_imports_none_of_its_modules():
    """Importing a folder costs nothing (the CLI's deferred imports stay deferred); asking for a
    name imports its module."""
    faces = sorted(_lazy_faces())
    script = ("import sys\n" + "".join(f"import {f}\n" for f in faces)
              + "print(sorted(m for m in sys.modules if m.startswith(tuple(p + '.' for p in sys.argv[1:]))))")
    out = subprocess.run([sys.executable, "-c", script, *faces], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    out = subprocess.run([sys.executable, "-c", "import sys; from boardsweep.pipeline.cluster import Target; "
                          "print('boardsweep.pipeline.cluster.settings' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
