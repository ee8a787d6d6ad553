"""The store's owner, :class:`boardsweep.pipeline.store.Store`: a command
opens a store once and keeps what it found until it changes the store itself.
Real stores on disk (the toy game's template; no cluster)."""

from __future__ import annotations

import json

import pytest

from boardsweep.pipeline.spec import parse_spec
from boardsweep.pipeline.store import Store, StoreMismatch, metadata


@pytest.fixture(scope="module")
def spec():
    from conftest import TOY_SPEC

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


def test_the_grid_is_resolved_once_per_spec(spec):
    first, again = spec.points(), spec.points()
    assert first == again and first[0][1] is not again[0][1]  # fresh dicts, same values
    assert spec.with_block(1)._resolved is spec._resolved  # another task size: the same grid
