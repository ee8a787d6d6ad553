"""The store's owner, :class:`boardsweep.pipeline.store.Store`: a command
opens a store once and keeps what it found until it changes the store itself.
Real stores on disk (the toy game's template; no cluster)."""

from __future__ import annotations

import json

import pytest

from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import Store, StoreMismatch, metadata


@pytest.fixture(scope="module")
def spec():
    from specs import TOY_SPEC  # tests/support is on sys.path

    return parse_spec(TOY_SPEC, "toy.toml")


def test_a_new_store_is_created_and_then_read_as_boardsweeps(tmp_path, spec):
    st = Store(str(tmp_path / "s.zarr"))
    assert st.kind == "absent"
    assert st.prepare(spec, overwrite=False) == []
    assert st.kind == "boardsweep"  # created: what was read before is forgotten
    assert json.loads(st.attrs["spec_canonical"]) == spec.canonical()
    assert st.layout == "tasks"
    assert not st.read_done().any() and not st.read_exact_done().any()


def test_what_was_read_is_kept_until_the_command_changes_the_store(tmp_path, spec):
    url = str(tmp_path / "s.zarr")
    Store(url).create(spec)
    st = Store(url)
    before = st.attrs.get("history", "")
    metadata.append_history(url, "another process wrote this")  # not through st
    assert st.attrs.get("history", "") == before  # kept: read once per command
    st.changed()
    assert st.attrs["history"].endswith("another process wrote this")
    st.append_history("this command wrote this")  # through st: read again
    assert st.attrs["history"].endswith("this command wrote this")


def test_a_folder_of_other_files_is_refused_and_left_alone(tmp_path, spec):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    with pytest.raises(StoreMismatch, match="folder of other files"):
        Store(str(folder)).prepare(spec, overwrite=True)
    assert (folder / "notes.txt").read_text() == "keep me"
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_a_store_just_created_is_not_read_back_to_be_checked(tmp_path, spec, monkeypatch):
    """The masks a new store's run plans from are those a check of it reads: nothing done."""
    from boardsweep.pipeline.store import integrity

    url = str(tmp_path / "s.zarr")
    st = Store(url)
    st.prepare(spec, overwrite=False)
    checks = []
    real = integrity.check
    monkeypatch.setattr(integrity, "check", lambda *a, **k: checks.append(a) or real(*a, **k))
    told, done, exact_done = st.clear_damaged(spec)
    assert checks == []
    again = Store(url).clear_damaged(spec)  # as the next command sees it: read and checked
    assert len(checks) == 1 and told == again[0] == []
    for planned, read in ((done, again[1]), (exact_done, again[2])):
        assert planned.dtype == read.dtype == bool and planned.shape == read.shape
        assert not planned.any() and not read.any()
    assert done.shape == (*spec.shape, spec.slots)


def test_the_grid_is_resolved_once_per_spec(spec):
    first, again = spec.points(), spec.points()
    assert first == again and first[0][1] is not again[0][1]  # fresh dicts, same values
    assert spec.replaced(block=1)._resolved is spec._resolved  # another task size: the same grid


# -- a command opens its store once -------------------------------------------

@pytest.fixture(scope="module")
def finished(tmp_path_factory, cluster2):
    """A complete toy store in each layout: ``tasks`` (as the run wrote it) and ``packed``."""
    import shutil

    from specs import TOY_SPEC  # tests/support is on sys.path

    from boardsweep.pipeline.run.execute import run_sweep
    from boardsweep.pipeline.store import packing

    folder = tmp_path_factory.mktemp("finished")
    spec_path = folder / "toy.toml"
    spec_path.write_text(TOY_SPEC)
    tasks = folder / "tasks.zarr"
    assert run_sweep(parse_spec(TOY_SPEC, str(spec_path)), str(tasks), scheduler=cluster2, pack=False).complete
    shutil.copytree(tasks, folder / "packed.zarr")
    packing.pack(str(folder / "packed.zarr"))
    return {"tasks": tasks, "packed": folder / "packed.zarr"}


#: What opening a store costs, by the functions that do it: what is there, its
#: attributes, its root group through zarr, the integrity check, the layout,
#: and the Dataset xarray opens.
OPENING = {"inspect": ("identity", "inspect"), "read_attrs": ("identity", "read_attrs"),
           "open_group": (None, "open_group"), "check": ("integrity", "check"),
           "layout": ("layout", "layout"), "open_raw": ("reads", "open_raw")}


@pytest.fixture
def opened(monkeypatch):
    """Counts of the calls to the real functions of :data:`OPENING`, wrapped
    wherever a loaded boardsweep (or zarr) module holds them."""
    import importlib
    import sys
    from collections import Counter

    import zarr

    import boardsweep.pipeline.cli.commands  # noqa: F401 - loaded before wrapping, as the commands use it
    import boardsweep.pipeline.views.display  # noqa: F401
    import boardsweep.pipeline.views.report  # noqa: F401

    counts: Counter = Counter()
    for label, (module, name) in OPENING.items():
        real = getattr(importlib.import_module(f"boardsweep.pipeline.store.{module}") if module else zarr, name)

        def counted(*args, _real=real, _label=label, **kwargs):
            counts[_label] += 1
            return _real(*args, **kwargs)

        for mod in [m for n, m in list(sys.modules.items()) if n.startswith(("boardsweep", "zarr"))]:
            for attr, value in list(vars(mod).items()):
                if value is real:
                    monkeypatch.setattr(mod, attr, counted)
    return counts


@pytest.mark.parametrize("layout", ["tasks", "packed"])
@pytest.mark.parametrize("command", ["status", "query", "query --sel", "report"])
def test_a_command_opens_its_store_once(command, layout, finished, opened, tmp_path, capsys):
    from clirun import run_cli

    url = str(finished[layout])
    args = {"status": ["status", url], "query": ["query", url],
            "query --sel": ["query", url, "--sel", "rule=sticky"],
            "report": ["report", url, "--out", str(tmp_path / "report")]}[command]
    opened.clear()
    assert run_cli(*args) == 0, capsys.readouterr()
    assert dict(opened) == {label: 1 for label in OPENING}
    out = capsys.readouterr().out
    if command == "report":
        assert (tmp_path / "report" / "index.html").is_file()
    else:  # the store was read: its grid values are printed (only those --sel picks)
        assert "sticky" in out and ("plain" not in out) == (command == "query --sel")
