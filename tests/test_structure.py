"""The package's structure: no import cycles, and one owner for the store.

The import graph is read from the source (``ast`` over ``pipeline/`` and
``core/``): every import a module makes, at its top or inside a function,
is an edge, and so is an import under ``if TYPE_CHECKING:``: it never runs,
but type checkers and structure viewers follow it, so a cycle through one is
a cycle to every tool that reads the code.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pipeline", "core")


@functools.cache
def _modules() -> dict[str, tuple[Path, list[str]]]:
    """Dotted module name (relative to the package root) -> (file, its package's parts)."""
    found = {}
    for top in PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            package = parts[:-1]
            if parts[-1] == "__init__":
                parts = package
            found[".".join(parts)] = (path, package)
    return found


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _imports(tree: ast.AST):
    """Every Import/ImportFrom node, at any depth (inside functions and ``if TYPE_CHECKING:`` too)."""
    return (node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)))


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """module -> the package modules it imports (relative imports resolved)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, package) in modules.items():
        for node in _imports(_tree(path)):
            if not isinstance(node, ast.ImportFrom) or not node.level:
                continue  # absolute imports: other distributions (the package imports itself relatively)
            base = package[:len(package) - node.level + 1]
            target = base + (node.module.split(".") if node.module else [])
            submodules = {".".join(target + [a.name]) for a in node.names} & set(modules)
            if node.module is not None or not submodules:
                submodules.add(".".join(target))
            graph[name] |= {m for m in submodules if m in modules and m != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_the_imports_it_must():
    graph = import_graph()
    assert "pipeline.store.owner" in graph["pipeline.store"]  # the package's re-exports
    assert "pipeline.store.reads" in graph["pipeline.store.integrity"]
    assert "pipeline.store" in graph["pipeline.run.execute"]
    assert "core.games" in graph["pipeline.spec.parse"]
    assert "pipeline.spec" in graph["pipeline.plan.tasks"]  # under TYPE_CHECKING: tools follow it
    assert "pipeline.spec.parse" in graph["pipeline.spec"]  # a lazy face's TYPE_CHECKING block: its names' modules
    assert "pipeline.analysis" in graph["pipeline.views.display"] and "pipeline.run.record" in graph["pipeline.run"]


def test_a_cycle_is_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_package_has_no_import_cycle():
    cycles = _cycles(import_graph())
    assert not cycles, "import cycles (each a group of modules importing each other): " + "; ".join(
        " <-> ".join(c) for c in cycles)


#: Libraries only the store package uses: they open and write the store's files.
STORE_LIBRARIES = {"zarr", "fsspec", "s3fs"}


def test_only_the_store_package_opens_zarr_or_fsspec():
    offenders = []
    for name, (path, _) in _modules().items():
        if name.startswith("pipeline.store"):
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Import):
                roots = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                roots = {node.module.split(".")[0]}
            elif isinstance(node, ast.Attribute) and node.attr == "open_zarr":
                roots = {"open_zarr"}
            else:
                continue
            for root in roots & (STORE_LIBRARIES | {"open_zarr"}):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} uses {root}")
    assert not offenders, "; ".join(offenders)


#: The folders of pipeline/ and what each may import (besides itself and core/). A folder's
#: modules see only what is below it: the user's intent (spec) -> what to run (plan) -> the store
#: -> analysis -> views, with run/ and cluster/ beside them, and cli/ (and api) on top.
FOLDERS = {
    "pipeline.errors": set(),
    "pipeline.words": set(),
    "pipeline.faces": set(),  # how a folder hands on its names (every folder's __init__ may use it)
    "pipeline.urls": set(),  # where a store is (local or object storage): light, below every folder
    "pipeline.spec": {"pipeline.errors", "pipeline.words", "pipeline.urls"},
    "pipeline.plan": {"pipeline.errors", "pipeline.words", "pipeline.urls", "pipeline.spec"},
    "pipeline.store": {"pipeline.errors", "pipeline.words", "pipeline.urls", "pipeline.spec", "pipeline.plan"},
    "pipeline.analysis": {"pipeline.errors", "pipeline.words", "pipeline.urls", "pipeline.spec", "pipeline.plan", "pipeline.store"},
    "pipeline.cluster": {"pipeline.errors", "pipeline.words", "pipeline.urls"},
    "pipeline.run": {"pipeline.errors", "pipeline.words", "pipeline.urls", "pipeline.spec", "pipeline.plan", "pipeline.store",
                     "pipeline.cluster"},
    "pipeline.views": {"pipeline.errors", "pipeline.words", "pipeline.urls", "pipeline.spec", "pipeline.analysis"},
    "pipeline.api": {"pipeline.errors", "pipeline.words", "pipeline.urls", "pipeline.spec", "pipeline.plan", "pipeline.store",
                     "pipeline.analysis", "pipeline.run", "pipeline.cluster", "pipeline.views"},
    "pipeline.cli": {"pipeline.errors", "pipeline.words", "pipeline.urls", "pipeline.spec", "pipeline.plan", "pipeline.store",
                     "pipeline.analysis", "pipeline.run", "pipeline.cluster", "pipeline.views", "pipeline.api"},
}


def _folder(module: str) -> str:
    """The folder (or top-level module) of pipeline/ a module belongs to; ``core`` for core/."""
    if module.startswith("core"):
        return "core"
    if module == "pipeline":
        return "pipeline"
    return ".".join(module.split(".")[:2])


def test_every_folder_imports_only_what_is_below_it():
    offenders = []
    for name, targets in import_graph().items():
        source = _folder(name)
        if source == "pipeline":
            continue  # the package's face: boardsweep.pipeline.open_sweep and the like, loaded on first use
        for target in targets:
            folder = _folder(target)
            if folder in (source, "core", "pipeline", "pipeline.faces"):
                continue
            if source == "core" or folder not in FOLDERS.get(source, set()):
                offenders.append(f"{name} -> {target}")
    assert not offenders, "imports against the folders' order (FOLDERS): " + "; ".join(sorted(offenders))


def test_every_pipeline_module_is_in_a_known_folder():
    assert {_folder(m) for m in _modules()} - {"core", "pipeline"} <= set(FOLDERS)


#: The house's size limits (issue 41): a module a reader can hold, a function that fits a screen.
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60


def test_no_module_or_function_is_too_long():
    long = []
    for path, _ in _modules().values():
        text = path.read_text()
        if text.count("\n") > MAX_MODULE_LINES:
            long.append(f"{path.relative_to(ROOT)}: {text.count(chr(10))} lines")
        for node in ast.walk(_tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {lines} lines")
    assert not long, "; ".join(long)


@functools.cache
def _error_classes() -> frozenset[str]:
    """Names of the exception classes: Python's own and those the errors modules define."""
    import builtins

    own = {name for name, value in vars(builtins).items()
           if isinstance(value, type) and issubclass(value, BaseException)}
    for name, (path, _) in _modules().items():
        if name.endswith("errors"):
            own |= {n.name for n in ast.walk(_tree(path)) if isinstance(n, ast.ClassDef)}
    return frozenset(own)


def _is_exception(node: ast.ClassDef) -> bool:
    """A class whose base is an exception class: Python's, the errors modules', or named like one."""
    names = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in node.bases}
    return any(n in _error_classes() or n.endswith(("Error", "Exception")) for n in names)


def test_every_exception_class_lives_in_an_errors_module():
    stray = [f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
             for name, (path, _) in _modules().items() if not name.endswith("errors")
             for node in ast.walk(_tree(path)) if isinstance(node, ast.ClassDef) and _is_exception(node)]
    assert not stray, "exception classes outside pipeline/errors.py and core/errors.py: " + "; ".join(stray)


def test_the_limits_are_checked():
    """The checks above see what they must: an exception class by its base, a folder by its name."""
    tree = ast.parse("class A(InputError): pass\nclass B(ValueError): pass\nclass C(object): pass\n"
                     "class D(StoreMismatch): pass\nclass E(click.ClickException): pass\n")
    assert [_is_exception(n) for n in tree.body] == [True, True, False, True, True]
    assert _folder("pipeline.store.owner") == "pipeline.store" and _folder("pipeline.api") == "pipeline.api"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_names(path: Path, package: list[str]) -> set[str]:
    """The names a module binds to package modules (``from . import grid``, ``from ..store import open as o``)."""
    names = set()
    for node in _imports(_tree(path)):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - node.level + 1] + (node.module.split(".") if node.module else [])
            names |= {a.asname or a.name for a in node.names if ".".join(base + [a.name]) in _modules()}
    return names


def _private_imports() -> list[str]:
    """Every ``from .module import _name`` and every ``module._name``: a private name used by another module."""
    found = []
    for path, package in _modules().values():
        for node in _imports(_tree(path)):
            if isinstance(node, ast.ImportFrom) and node.level:
                found += [f"{path.relative_to(ROOT)}:{node.lineno} {a.name}" for a in node.names if _private(a.name)]
        modules = _module_names(path, package)
        found += [f"{path.relative_to(ROOT)}:{node.lineno} {node.value.id}.{node.attr}" for node in ast.walk(_tree(path))
                  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id in modules and _private(node.attr)]
    return found


def test_no_module_imports_a_private_name_from_another():
    """A name with a leading underscore is its module's own: another module that needs it uses a public name."""
    private = _private_imports()
    assert not private, "private names imported across modules: " + "; ".join(private)


def _faces() -> dict[str, Path]:
    """Every folder with a face: a package of pipeline/ (``pipeline.store``) or of core/ (``core.monopoly``)."""
    return {name: path for name, (path, _) in _modules().items()
            if path.name == "__init__.py" and name.count(".") == 1}


def _face_of(module: str) -> str | None:
    """The folder (``pipeline.plan``) whose face a module stands behind, or None for a top-level module."""
    face = ".".join(module.split(".")[:2])
    return face if face in _faces() else None


def _exports(face: str) -> frozenset[str]:
    """A face's ``__all__``, read from the package as Python sees it."""
    import importlib

    return frozenset(getattr(importlib.import_module(f"boardsweep.{face}"), "__all__", ()))


def _reach_ins(trees: dict[str, tuple[ast.AST, list[str], str]]) -> list[str]:
    """Imports from outside a folder that name one of its modules, or a name its ``__all__`` lacks.

    ``trees``: module -> (its tree, its package's parts, where to say it is)."""
    found = []
    for name, (tree, package, where) in trees.items():
        for node in _imports(tree):
            if not isinstance(node, ast.ImportFrom) or not node.level:
                continue
            base = package[:len(package) - node.level + 1]
            target = ".".join(base + (node.module.split(".") if node.module else []))
            face = _face_of(target)
            if face is None or _face_of(name) == face:
                continue
            if target != face:
                found.append(f"{where}:{node.lineno} {target}")
            else:
                found += [f"{where}:{node.lineno} {face}.{a.name} (not in its __all__)"
                          for a in node.names if a.name not in _exports(face)]
    return found


def _package_reach_ins() -> list[str]:
    return _reach_ins({name: (_tree(path), package, str(path.relative_to(ROOT)))
                       for name, (path, package) in _modules().items()})


def test_every_folder_is_used_through_its_face():
    """Code outside a folder of pipeline/ (or of core/) imports what the folder's ``__all__`` names, from
    the folder (``from ..plan import decide``), never from its modules (``from ..plan.sizing import decide``)."""
    reach_ins = _package_reach_ins()
    assert not reach_ins, "imports past a folder's face: " + "; ".join(reach_ins)


def test_the_face_check_sees_a_reach_in():
    """A planted import past the store's face, and one of a name its ``__all__`` lacks, are both found;
    the same name through the face, and an import inside the folder, are not."""
    planted = {"pipeline.views.planted": (ast.parse(
        "from ..store.owner import Store\nfrom ..store import not_a_public_name\nfrom ..store import Store\n"
        "from .. import words\n"), ["pipeline", "views"], "planted.py"),
        "pipeline.store.planted": (ast.parse("from .owner import Store\n"), ["pipeline", "store"], "inside.py")}
    assert _reach_ins(planted) == ["planted.py:1 pipeline.store.owner",
                                   "planted.py:2 pipeline.store.not_a_public_name (not in its __all__)"]
    assert {"pipeline.store", "pipeline.plan", "pipeline.views", "core.monopoly"} <= set(_faces())
    assert all(_exports(face) or face.startswith("core.") for face in _faces()), "a folder of pipeline/ without __all__"


def test_the_face_checks_see_a_private_import():
    tree = ast.parse("from .grid import _axes, axes\nfrom ..store.reads import read_done\n")
    names = [a.name for n in _imports(tree) for a in n.names]
    assert [n for n in names if n.startswith("_") and not n.startswith("__")] == ["_axes"]


def _called(name: str) -> dict[str, int]:
    """module -> how many times it calls ``name`` (``name(...)`` or ``x.name(...)``)."""
    found: dict[str, int] = {}
    for module, (path, _) in _modules().items():
        n = sum(1 for node in ast.walk(_tree(path)) if isinstance(node, ast.Call)
                and (getattr(node.func, "id", None) == name or getattr(node.func, "attr", None) == name))
        if n:
            found[module] = n
    return found


def test_the_spec_is_frozen_and_carries_no_task_layout():
    """Issue 55: nothing writes into a Spec after parsing; the run's task
    layout is a value of its own (plan/task_layout.py), passed beside it."""
    import dataclasses

    from boardsweep.pipeline.spec.parse import Spec

    assert Spec.__dataclass_params__.frozen
    fields = {f.name for f in dataclasses.fields(Spec)}
    assert not fields & {"grid_chunks", "task_grid", "layout"}, fields
    assert not hasattr(Spec, "with_block") and not hasattr(Spec, "task_grid")
    writes = []
    for module, (path, _) in _modules().items():
        if module.startswith("pipeline.spec"):
            continue  # parsing itself caches what it resolved
        for node in ast.walk(_tree(path)):
            target = node.targets[0] if isinstance(node, ast.Assign) else None
            if (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute)
                    and target.value.attr == "__dict__" and getattr(target.value.value, "id", "").endswith("spec")):
                writes.append(f"{module}:{node.lineno}")
    assert not writes, writes


def test_the_task_layout_is_decided_in_one_function():
    """``plan.sizing.decide`` is the one decision; the run, the dry run and
    the run's start-up (its first line and head start, run/startup.py) ask it, and a TaskLayout is
    made only where it is decided, asked of the spec (``given``), bounded
    for planning (sizing) or read back from a store's chunks (creation)."""
    asking = {m for m in _called("decide") if {"pipeline.plan", "pipeline.plan.sizing"} & import_graph()[m]
              and not m.startswith("pipeline.plan")}  # through the plan's face; not precision's rule
    assert asking == {"pipeline.run.execute", "pipeline.cli.dry_run", "pipeline.run.startup"}, asking
    assert set(_called("TaskLayout")) <= {"pipeline.plan.task_layout", "pipeline.plan.sizing",
                                          "pipeline.store.creation"}, _called("TaskLayout")


def test_the_command_and_the_api_take_one_run_path():
    """Issue 55: ``boardsweep run`` calls the API's own run (``api.run_request``),
    the one caller of ``run.execute_request``; the warm-up is begun in one
    place of the package's run path (``run.begin``: by it, and by ``run_sweep``
    for a direct caller), and the command's module imports neither."""
    assert set(_called("execute_request")) == {"pipeline.api"}, _called("execute_request")
    assert set(_called("run_request")) == {"pipeline.api", "pipeline.cli.run"}, _called("run_request")
    assert set(_called("begin")) == {"pipeline.api", "pipeline.run.execute"}, _called("begin")
    assert set(_called("WarmUp")) == {"pipeline.run.startup"}, _called("WarmUp")


#: Calls that compute a number from many (a statistic): numpy's reductions and orderings, and the same
#: as methods of arrays, DataArrays and DataFrames (``np.nanmax(x)``, ``x.mean("replicate")``,
#: ``df.groupby(...)``).  Views word and draw what analysis/ computed; they call none of these (issue 55).
STATISTIC_CALLS = frozenset({
    "sum", "mean", "std", "var", "median", "quantile", "percentile", "average", "max", "min", "argmax", "argmin",
    "argsort", "sort", "nansum", "nanmean", "nanstd", "nanvar", "nanmax", "nanmin", "nanargmax", "nanargmin",
    "nanmedian", "nanquantile", "nanpercentile", "cumsum", "cumprod", "count_nonzero", "bincount", "histogram",
    "corrcoef", "cov", "prod", "ptp", "fmax", "fmin", "amax", "amin", "unique", "groupby", "value_counts", "idxmax",
    "idxmin", "nlargest", "nsmallest", "rolling", "polyfit", "sort_values", "nunique", "agg", "aggregate"})

#: The report's modules still computing some of what they draw (issue 55's remainder: its tables'
#: top labels and worst z, its figures' ranges, the sample's choice of points): at most this many such
#: calls each, a number that may only fall.  The terminal views (views/*.py) are held to none.
REPORT_STATISTICS = {"tables.py": 2, "heatmaps.py": 5, "panels.py": 5, "blockwise.py": 4,
                     "diagnostics_figure.py": 4, "forest.py": 4, "pmf.py": 4, "sample.py": 4, "parts.py": 3,
                     "verdict.py": 3, "page.py": 2, "summary.py": 2, "variance_figure.py": 2,
                     "convergence_figure.py": 1, "grid.py": 1, "stream.py": 1}


def _statistic_calls(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, call) of every call of a :data:`STATISTIC_CALLS` name as an attribute (``np.sum(...)``,
    ``x.sum(...)``).  Not caught: Python's own ``sum``/``max``/``min`` of a list, arithmetic
    (``high - low``), a statistic a view spells out in plain Python, and a call through another name
    (``from numpy import nanmax``)."""
    return [(node.lineno, ast.unparse(node.func)) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STATISTIC_CALLS]


def test_the_statistic_check_sees_a_reduction():
    tree = ast.parse("a = np.nanmax(x)\nb = ds['x'].mean('replicate')\nc = max(x)\nd = df.groupby('p').min()\n"
                     "e = np.isfinite(x).any()\n")
    assert [call for _, call in _statistic_calls(tree)] == ["np.nanmax", "ds['x'].mean", "df.groupby('p').min",
                                                            "df.groupby"]


def test_views_compute_no_statistic():
    """Every number a view shows comes from analysis/ (issue 55): no module of views/ calls a
    reduction (:data:`STATISTIC_CALLS`); the report's modules no more than their remainder."""
    found, over = [], []
    for name, (path, _) in _modules().items():
        if not name.startswith("pipeline.views"):
            continue
        calls = _statistic_calls(_tree(path))
        if path.parent.name == "report":
            if len(calls) > REPORT_STATISTICS.get(path.name, 0):
                over.append(f"{path.relative_to(ROOT)}: {len(calls)} (at most {REPORT_STATISTICS.get(path.name, 0)})")
        else:
            found += [f"{path.relative_to(ROOT)}:{line} {call}" for line, call in calls]
    assert not found, "statistics computed in a view (compute them in analysis/): " + "; ".join(found)
    assert not over, "more statistics in the report's modules than before: " + "; ".join(over)
