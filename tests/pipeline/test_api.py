"""The Python API: ``boardsweep.Spec`` from a file, TOML text or a dict;
``boardsweep.run`` on an existing client, from a plain script without a main
guard, and in Jupyter (the example notebook, executed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import boardsweep
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.errors import SpecError
from boardsweep.pipeline.run.verify import compare_with_store

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parents[1] / "support"  # toy games and helpers


def test_spec_from_file_text_and_dict_are_the_same_sweep():
    path = ROOT / "sweeps" / "quickstart.toml"
    text = path.read_text()
    specs = [boardsweep.Spec.from_file(path), boardsweep.Spec.from_toml(text),
             boardsweep.Spec.from_dict(tomllib.loads(text))]
    assert all(isinstance(s, boardsweep.Spec) for s in specs)
    assert specs[0].canonical() == specs[1].canonical() == specs[2].canonical()
    assert specs[0].source == str(path)


def test_spec_from_a_bad_dict_names_the_key():
    with pytest.raises(SpecError, match=r"<spec dict>: grid.dice_sides: expected a string, number"):
        boardsweep.Spec.from_dict({"name": "x", "game": "monopoly", "seed": 1, "grid": {"dice_sides": [None]}})
    with pytest.raises(SpecError, match=r"<spec dict>: run: .*unknown key|run.bogus"):
        boardsweep.Spec.from_dict({"name": "x", "game": "monopoly", "seed": 1, "run": {"bogus": 1}})


def test_run_on_an_existing_client_returns_the_report_and_opens_the_store(tmp_path, toy_spec_text, cluster2):
    from distributed import Client

    with Client(cluster2) as client:
        result = boardsweep.run(tomllib.loads(toy_spec_text), tmp_path / "api.zarr", client=client, progress=False)
        assert client.status == "running"  # the caller's client is left open
    assert result.complete and result.store == str(tmp_path / "api.zarr")
    assert result.tasks_run == 8 and result.exact_run == 4  # the report's fields, read through the result
    ds = result.open()
    assert int(ds["done"].sum()) == ds["done"].size
    reference = tmp_path / "reference.zarr"
    run_sweep(boardsweep.Spec.from_toml(toy_spec_text), str(reference), scheduler=cluster2)
    compared = compare_with_store(str(reference), result.store)
    assert compared.ok, compared.differences


def test_run_takes_a_shipped_examples_name_as_the_command_line_does(tmp_path, monkeypatch, cluster2):
    from distributed import Client

    monkeypatch.chdir(tmp_path)
    shipped = boardsweep.Spec.from_file(ROOT / "sweeps" / "quickstart.toml")
    assert boardsweep.pipeline.api.as_spec("quickstart").canonical() == shipped.canonical()
    assert boardsweep.pipeline.api.as_spec("quickstart.toml").canonical() == shipped.canonical()
    with Client(cluster2) as client:
        result = boardsweep.run("quickstart", client=client, progress=False)  # a real run, as `boardsweep run quickstart`
    assert result.complete and Path(result.store) == tmp_path / "results" / "quickstart.zarr"
    assert result.tasks_run > 0 and int(result.open()["done"].sum()) == result.open()["done"].size
    with pytest.raises(SpecError):  # a bare name that is neither a file nor an example: as before
        boardsweep.run("no_such_sweep", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]


def test_run_refuses_two_places_at_once(toy_spec_text):
    with pytest.raises(ValueError, match="give one of client=, cluster= and workers="):
        boardsweep.run(toy_spec_text, client=object(), workers=2)
    with pytest.raises(ValueError, match="jobs= sizes the worker jobs"):
        boardsweep.run(toy_spec_text, jobs=2)



def _tree(url: Path) -> dict[str, bytes]:
    return {str(p.relative_to(url)): p.read_bytes() for p in sorted(url.rglob("*")) if p.is_file()}


@pytest.fixture
def seed7_store(tmp_path, toy_spec_text, cluster2):
    url = tmp_path / "seed7.zarr"
    assert run_sweep(boardsweep.Spec.from_toml(toy_spec_text), str(url), scheduler=cluster2).complete
    return url


@pytest.mark.parametrize("argument, value", [("overwrite", "False"), ("overwrite", 0), ("extend", "no"),
                                             ("progress", None)])
def test_a_flag_that_is_not_a_bool_is_refused_and_nothing_touched(argument, value, seed7_store, toy_spec_text,
                                                                  write_spec, cluster2):
    """``overwrite="False"`` was read as true and replaced another spec's store."""
    from distributed import Client

    from boardsweep.pipeline.errors import ArgumentTypeError, InputError

    other = write_spec(toy_spec_text.replace("seed = 7", "seed = 99"), "seed99.toml")
    before = _tree(seed7_store)
    with Client(cluster2) as client, pytest.raises(ArgumentTypeError) as raised:
        boardsweep.run(str(other), seed7_store, client=client, **{"progress": False, argument: value})
    assert isinstance(raised.value, (InputError, TypeError)) and "\n" not in str(raised.value)
    assert str(raised.value).startswith(f"{argument}={value!r}: expected True or False")
    assert _tree(seed7_store) == before


def test_numpy_bools_are_bools_and_other_arguments_have_their_types(toy_spec_text):
    import numpy as np

    from boardsweep.pipeline.errors import ArgumentTypeError, InputError
    from boardsweep.pipeline.run.request import RunRequest

    request = RunRequest(boardsweep.Spec.from_toml(toy_spec_text), overwrite=np.True_, pack=np.False_)
    assert request.overwrite is True and request.pack is False
    with pytest.raises(ArgumentTypeError, match=r"^pack='yes': expected True or False"):
        RunRequest(boardsweep.Spec.from_toml(toy_spec_text), pack="yes")
    with pytest.raises(ArgumentTypeError, match=r"^max_tasks=2.5: expected a whole number"):
        RunRequest(boardsweep.Spec.from_toml(toy_spec_text), max_tasks=2.5)
    with pytest.raises(InputError, match=r"^workers='2': expected a positive integer"):
        boardsweep.run(toy_spec_text, workers="2")
    with pytest.raises(ArgumentTypeError, match=r"^performance_report=3: expected a file path"):
        boardsweep.run(toy_spec_text, performance_report=3)


def test_a_spec_path_holding_an_equals_sign_is_a_path(tmp_path, toy_spec_text):
    from boardsweep.pipeline.api import as_spec

    path = tmp_path / "seed=7.toml"
    path.write_text(toy_spec_text)
    for given in (str(path), path):
        spec = as_spec(given)
        assert spec.source == str(path) and spec.canonical() == boardsweep.Spec.from_toml(toy_spec_text).canonical()
    with pytest.raises(SpecError, match="seed=8.toml"):  # a missing file, named as one
        as_spec(str(tmp_path / "seed=8.toml"))


def test_open_sweep_refuses_what_is_not_a_path_or_a_mapping(seed7_store):
    from boardsweep.pipeline.errors import ArgumentTypeError

    ds = boardsweep.load_sweep(str(seed7_store))
    with pytest.raises(ArgumentTypeError, match=r"^store: expected a path or URL of a sweep store .*got Dataset$"):
        boardsweep.open_sweep(ds)
    for read in (boardsweep.open_sweep, boardsweep.load_sweep):
        with pytest.raises(ArgumentTypeError, match=r"^sel='dice_sides=2': expected a mapping"):
            read(str(seed7_store), sel="dice_sides=2")
    assert boardsweep.open_sweep(seed7_store, sel={"dice_sides": 2}).sizes["dice_sides"] == 1


def test_run_on_a_closed_client_says_so_in_one_line(tmp_path, toy_spec_text, cluster2):
    from distributed import Client

    from boardsweep.pipeline.errors import InputError

    client = Client(cluster2)
    client.close()
    with pytest.raises(InputError, match=r"^client=: the client is closed; pass an open distributed.Client"):
        boardsweep.run(toy_spec_text, tmp_path / "x.zarr", client=client, progress=False)
    assert not (tmp_path / "x.zarr").exists()


SCRIPT = """\
import sys
sys.path.insert(0, {here!r})
import boardsweep
from boardsweep.core import games
games.register("toy", "toy_game")
result = boardsweep.run({spec!r}, "plain.zarr", workers=2, progress=False)
print("RESULT", result.complete, int(result.open()["done"].sum()))
"""


def test_a_plain_script_without_a_main_guard_runs(tmp_path, toy_spec_text):
    """Worker processes are started by spawn, which re-imports the main
    script; ``run`` hides the script from them, so no guard is needed."""
    script = tmp_path / "plain.py"
    script.write_text(SCRIPT.format(here=str(HERE), spec=toy_spec_text))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(HERE)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "RESULT True 16" in proc.stdout, proc.stdout


def test_the_example_notebook_runs(tmp_path):
    """examples/sweep_from_python.ipynb, executed in a real kernel: the
    dashboard link and a progress bar, the table and the plot."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(ROOT / "examples" / "sweep_from_python.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "dashboard: <a href=\"http://127.0.0.1:" in html, html
    assert re.search(r"<progress value='(\d+)' max='\1'", html), html  # the bar ends full
    text = "".join(o.get("data", {}).get("text/plain", "") for o in outputs)
    assert "notebook-jail" in text and " complete," in text, text
    assert any("image/png" in o.get("data", {}) for o in outputs)
    assert (tmp_path / "results" / "notebook-jail.zarr").is_dir()
