"""Pages generated from the code at every build, so that they cannot go stale.

* `.. boardsweep-game-params:: GAME`: the game's parameters (`Game.params`).
* `.. boardsweep-game-variables:: GAME`: the arrays a store of GAME holds, from
  `Game.variables` (simulated, per replicate) and `Game.exact_variables`.
* `.. boardsweep-store-schema:: SPEC`: every variable and coordinate of the store
  `boardsweep run SPEC` would make, with its attributes, from the store's
  template (nothing is written).
* `.. boardsweep-spec-keys::`: every key the spec parser accepts; the page
  that uses it must mention each (a warning, so a failed build, otherwise).
* `tutorials/from-python.md`: written from `examples/sweep_from_python.ipynb`
  (markdown cells as they are, code cells as Python blocks).  The notebook
  itself is executed by `tests/pipeline/test_api.py`.
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "sweep_from_python.ipynb"
LOG = logging.getLogger(__name__)


def _cell(text: object) -> str:
    """A table cell: one line, with Markdown's table separator escaped."""
    return " ".join(str(text).split()).replace("|", "\\|") or "-"


def _table(title: str, header: list[str], rows: list[list[object]]) -> list[str]:
    """A Markdown (MyST) table under a bold title: the directives are used in Markdown pages."""
    lines = [f"**{title}**", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
    return lines + [""]


class _Generated(SphinxDirective):
    """A directive whose body is Markdown made from the code."""

    def lines(self) -> list[str]:  # pragma: no cover - overridden
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        container = nodes.container()
        self.state.nested_parse(StringList(self.lines(), source="<generated>"), self.content_offset, container)
        return container.children


class GameParams(_Generated):
    required_arguments = 1

    def lines(self) -> list[str]:
        from boardsweep.core.games import get_game

        game = get_game(self.arguments[0])
        rows = [[f"`{p.name}`", p.allowed(), f"`{p.default!r}`", p.help] for p in game.params]
        shape = ", ".join(f"`{k}` (default {v})" for k, v in game.run_shape.items())
        return [*_table(f"Parameters of `{game.name}`", ["parameter", "allowed", "default", "meaning"], rows),
                f"Run shape (the spec's `[run]` keys beside `replicates`): {shape}; "
                f"checkpoints count `{game.checkpoint_of}`.", ""]


class GameVariables(_Generated):
    required_arguments = 1

    def lines(self) -> list[str]:
        from boardsweep.core.games import get_game

        game = get_game(self.arguments[0])
        sim = [[f"`{name}`", "(" + ", ".join(("grid axes", "replicate", *v.dims)) + ")", f"`{v.dtype}`", v.description]
               for name, v in game.variables.items()]
        out = _table(f"Simulated arrays of `{game.name}` (`Game.variables`)",
                     ["variable", "dimensions", "dtype", "meaning"], sim)
        if game.exact_variables:
            exact = [[f"`{name}`", "(" + ", ".join(("grid axes", *v.dims)) + ")", f"`{v.dtype}`", v.description]
                     for name, v in game.exact_variables.items()]
            out += _table(f"Exact answers of `{game.name}` (`Game.exact_variables`)",
                          ["variable", "dimensions", "dtype", "meaning"], exact)
        labels = ", ".join(f"`{dim}` ({len(values)} labels)" for dim, values in game.coords.items())
        if labels:
            out += [f"The game's own dimensions: {labels}.", ""]
        return out


class StoreSchema(_Generated):
    required_arguments = 1

    def lines(self) -> list[str]:
        from boardsweep.pipeline.spec.parse import load_spec
        from boardsweep.pipeline.store import template

        spec = load_spec(ROOT / self.arguments[0])
        ds, _ = template(spec, spec.game)
        rows = []
        for kind, names in (("data", list(ds.data_vars)), ("coordinate", list(ds.coords))):
            for name in names:
                var = ds[name]
                attrs = var.attrs
                meaning = attrs.get("description") or attrs.get("long_name") or ""
                units = attrs.get("units") or attrs.get("currency", "")  # a currency is not a CF unit
                stored = "string" if var.dtype.kind == "O" else var.dtype  # text: zarr's variable-length string
                rows.append([f"`{name}`", kind, "(" + ", ".join(map(str, var.dims)) + ")", f"`{stored}`",
                             meaning + (f" [{units}]" if units else "")])
        return _table(f"The store of `{self.arguments[0]}` (game `{spec.game_name}`)",
                      ["name", "kind", "dimensions", "dtype", "description [units]"], rows)


class SpecKeys(_Generated):
    """Every key the parser accepts, as a list; warns for keys the page does not mention."""

    def lines(self) -> list[str]:
        from boardsweep.pipeline.spec import tables

        keys = sorted(tables.TOP_KEYS)
        keys += [f"precision.{k}" for k in sorted(tables.PRECISION_KEYS)]
        keys += [f"checkpoints.{k}" for k in sorted(tables.CHECKPOINT_KEYS)]
        keys += [f"tasks.{k}" for k in sorted(tables.TASK_KEYS)]
        page = Path(self.env.doc2path(self.env.docname)).read_text()
        for key in keys:
            if not any(f"`{name}`" in page for name in (key, key.split(".")[-1], f"[{key}]")):
                LOG.warning("spec key %r is accepted by pipeline/spec/parse.py but not described on this page", key,
                            location=(self.env.docname, self.lineno))
        return ["Keys the parser accepts: " + ", ".join(f"`{k}`" for k in keys) + ".", ""]


def write_notebook_page(app) -> None:
    """`tutorials/from-python.md` from the example notebook (only when it changed)."""
    nb = json.loads(NOTEBOOK.read_text())
    parts = ["<!-- generated from examples/sweep_from_python.ipynb by docs/_ext/boardsweep_docs.py -->", ""]
    for cell in nb["cells"]:
        source = "".join(cell["source"]).rstrip()
        if cell["cell_type"] == "markdown":
            parts += [source, ""]
        elif cell["cell_type"] == "code":
            parts += ["```python", source, "```", ""]
    parts += ["The notebook is `examples/sweep_from_python.ipynb`; open it with `jupyter lab` from the "
              "repository root.  The test suite runs it in a real kernel "
              "(`tests/pipeline/test_api.py`), so the code above works.", ""]
    target = Path(app.srcdir) / "tutorials" / "from-python.md"
    text = "\n".join(parts)
    if not target.exists() or target.read_text() != text:
        target.write_text(text)


def setup(app) -> dict:
    app.add_directive("boardsweep-game-params", GameParams)
    app.add_directive("boardsweep-game-variables", GameVariables)
    app.add_directive("boardsweep-store-schema", StoreSchema)
    app.add_directive("boardsweep-spec-keys", SpecKeys)
    app.connect("builder-inited", write_notebook_page)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
