"""What boardsweep may write and delete: only its own stores, only what it made;
an interrupted or failed creation is completed by rerunning the same command;
a sweep that cannot fit is refused before anything is written."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import zarr

from clirun import run_cli
from localdask import assert_bitwise_equal
from specs import HERE as SUPPORT
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec


def _tree(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` with its bytes."""
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.fixture
def users_folder(tmp_path) -> Path:
    """A folder of someone's own things, one of them an unrelated zarr array."""
    folder = tmp_path / "mine"
    (folder / "photos").mkdir(parents=True)
    (folder / "thesis.txt").write_text("chapter 1\n")
    (folder / "photos" / "cat.jpg").write_bytes(b"\xff\xd8 not really a cat")
    zarr.create_array(str(folder / "measurements"), shape=(3,), dtype="f8")[:] = [1.0, 2.0, 3.0]
    return folder


@pytest.mark.parametrize("inside", [False, True])
def test_a_folder_that_is_not_ours_is_refused_even_with_overwrite(users_folder, write_spec, toy_spec_text,
                                                                  capsys, inside):
    target = users_folder / "measurements" if inside else users_folder
    before = _tree(users_folder)
    spec = write_spec(toy_spec_text)
    for flags in ((), ("--overwrite",)):
        assert run_cli("run", str(spec), "--store", str(target), "--workers", "1", *flags) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "nothing was touched" in err[0], err
        assert ("zarr array" if inside else "folder of other files") in err[0]
    assert _tree(users_folder) == before


def test_a_foreign_zarr_group_and_a_regular_file_are_refused(tmp_path, write_spec, toy_spec_text, capsys):
    group = zarr.open_group(str(tmp_path / "theirs.zarr"), mode="w")
    group.attrs["owner"] = "someone else"
    regular = tmp_path / "results.txt"
    regular.write_text("keep me\n")
    spec = write_spec(toy_spec_text)
    for target, words in ((tmp_path / "theirs.zarr", "zarr group boardsweep did not make"),
                          (regular, "regular file")):
        before = _tree(tmp_path)
        assert run_cli("run", str(spec), "--store", str(target), "--overwrite", "--workers", "1") == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and words in err[0], err
        assert _tree(tmp_path) == before


def test_overwrite_replaces_only_what_boardsweep_made(tmp_path, cluster2, toy_spec_text, write_spec, capsys):
    url = tmp_path / "toy.zarr"
    assert run_sweep(parse_spec(toy_spec_text), str(url), scheduler=cluster2).complete
    (url / "notes.txt").write_text("my notes on this sweep\n")
    (url / "plots").mkdir()
    (url / "plots" / "fig.png").write_bytes(b"png")
    other = toy_spec_text.replace("seed = 7", "seed = 8")
    assert run_cli("run", str(write_spec(other)), "--store", str(url), "--scheduler", cluster2) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert run_cli("run", str(write_spec(other)), "--store", str(url), "--scheduler", cluster2,
                   "--overwrite") == 0
    assert (url / "notes.txt").read_text() == "my notes on this sweep\n"
    assert (url / "plots" / "fig.png").read_bytes() == b"png"
    reference = tmp_path / "reference.zarr"
    assert run_sweep(parse_spec(other), str(reference), scheduler=cluster2).complete
    assert_bitwise_equal(url, reference, ["counts", "events", "rolls", "done", "exact_frequency"])


def test_help_says_what_overwrite_replaces(capsys):
    assert run_cli("run", "--help") == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "removes only the arrays, metadata and checksum records boardsweep made" in text
    assert "not a boardsweep store is never replaced" in text


def test_creation_killed_midway_is_completed_by_the_same_command(tmp_path, cluster2, toy_spec_text,
                                                                  write_spec):
    """A store whose creation stopped after its root metadata (as a SIGKILL or
    a full disk leaves it) is completed by rerunning, without --overwrite."""
    spec = parse_spec(toy_spec_text)
    url = tmp_path / "toy.zarr"
    reference = tmp_path / "reference.zarr"
    assert run_sweep(spec, str(reference), scheduler=cluster2).complete
    # what an interrupted creation leaves: the root group and only some arrays
    from boardsweep.pipeline import store

    store.create_store(str(url), spec)
    for name in ("counts", "done", "location", "zarr.json"):
        target = url / name
        if target.is_dir():
            shutil.rmtree(target)
    root = json.loads((url / "zarr.json").read_text())
    root.pop("consolidated_metadata", None)
    (url / "zarr.json").write_text(json.dumps(root))
    assert run_cli("status", str(url)) == 1
    assert run_cli("run", str(write_spec(toy_spec_text)), "--store", str(url), "--scheduler", cluster2) == 0
    assert run_cli("status", str(url)) == 0
    assert_bitwise_equal(url, reference, ["counts", "events", "rolls", "done", "exact_frequency"])


def test_a_coordinate_without_its_values_is_rewritten(tmp_path, cluster2, toy_spec_text, write_spec):
    """Creation stopped after a coordinate's metadata, before its values."""
    from boardsweep.pipeline import store

    url = tmp_path / "toy.zarr"
    store.create_store(str(url), parse_spec(toy_spec_text))
    shutil.rmtree(url / "dice_sides" / "c")
    assert run_cli("run", str(write_spec(toy_spec_text)), "--store", str(url), "--scheduler", cluster2) == 0
    assert zarr.open_array(str(url), path="dice_sides", mode="r")[...].tolist() == [2, 3]


@pytest.mark.parametrize("arrays", [2, None])
def test_sigkill_during_creation_then_rerun(tmp_path, toy_spec_text, write_spec, arrays):
    """A real process SIGKILLed while it writes the empty store: after the
    root group and ``arrays`` arrays (None: every array's metadata, before
    the consolidated metadata; the kill point is fixed so the test is exact)."""
    spec_path = write_spec(toy_spec_text)
    url = tmp_path / "toy.zarr"
    code = (
        "import os, signal, sys\n"
        f"sys.path.insert(0, {str(SUPPORT)!r})\n"
        "from boardsweep.core import games\n"
        "games.GAME_MODULES.setdefault('toy', 'toy_game')\n"
        "from boardsweep.pipeline import store\n"
        "from boardsweep.pipeline.spec.parse import parse_spec\n"
        "import zarr\n"
        "def die(*a, **k):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "orig, made = zarr.Group.create_array, []\n"
        "def create(*a, **k):\n"
        f"    if len(made) == {arrays!r}:\n"
        "        die()\n"
        "    made.append(1)\n"
        "    return orig(*a, **k)\n"
        "zarr.Group.create_array = create\n"
        "zarr.consolidate_metadata = die\n"
        "spec = parse_spec(open(sys.argv[1]).read(), sys.argv[1])\n"
        "store.create_store(sys.argv[2], spec)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(spec_path), str(url)], capture_output=True)
    assert proc.returncode == -signal.SIGKILL
    assert (url / "zarr.json").exists()
    assert len([p for p in url.glob("*/zarr.json") if p.parent.name != ".boardsweep"]) == (arrays or 15)  # the toy store has 15 arrays (series_counts and its batch coordinate among them)
    assert run_cli("run", str(spec_path), "--store", str(url), "--workers", "1") == 0
    assert run_cli("status", str(url)) == 0


def test_a_full_disk_during_creation_is_named_and_resumable(tmpfs, toy_spec_text, write_spec, capsys):
    small_disk = tmpfs("disk", "512k")  # the toy store with its equal-batch series (format 7)
    spec_path = write_spec(toy_spec_text.replace("replicates = 4", "replicates = 1").replace(
        "replicates_per_task = 2", "replicates_per_task = 1"))
    from boardsweep.pipeline.plan.sizing import estimate

    needed = estimate(parse_spec(spec_path.read_text())).store_bytes
    filler = small_disk / "filler.bin"
    free = os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize
    # room for the estimate, which passes the size check, but not for every
    # file of the empty store: tmpfs gives each small file a whole 4 KiB page
    filler.write_bytes(b"\0" * (free - needed - 4096))
    url = small_disk / "toy.zarr"
    assert run_cli("run", str(spec_path), "--store", str(url), "--workers", "1") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "could not create the store" in err[0] and "No space left" in err[0], err
    left = sorted(str(p.relative_to(url)) for p in url.rglob("*")) if url.exists() else []
    assert not left, f"left in the store's folder after the failed creation: {left}"
    filler.unlink()
    assert run_cli("run", str(spec_path), "--store", str(url), "--workers", "1") == 0
    assert run_cli("status", str(url)) == 0


def test_a_store_that_cannot_fit_is_refused_before_anything_is_written(tmp_path, toy_spec_text, write_spec,
                                                                       capsys):
    huge = toy_spec_text.replace("replicates = 4", "replicates = 1000000000").replace(
        "replicates_per_task = 2", "replicates_per_task = 1000")
    url = tmp_path / "huge.zarr"
    t0 = time.perf_counter()
    assert run_cli("run", str(write_spec(huge)), "--store", str(url)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the store would need up to" in err[0] and "free" in err[0], err
    assert "run.replicates" in err[0]
    assert not url.exists()
    assert time.perf_counter() - t0 < 60  # refused up front, not after planning a billion replicates


def test_a_plan_that_cannot_fit_in_memory_is_refused(tmp_path, toy_spec_text, write_spec, capsys):
    many = toy_spec_text.replace("replicates = 4", "replicates = 2000000000").replace(
        "replicates_per_task = 2", "replicates_per_task = 1").replace("turns = 60", "turns = 1").replace(
        "games = 2", "games = 1")
    from boardsweep.pipeline.plan.sizing import estimate

    est = estimate(parse_spec(many))
    assert est.tasks == 4 * 2_000_000_000 and est.plan_bytes > 10**12
    assert run_cli("run", str(write_spec(many)), "--store", str(tmp_path / "many.zarr")) == 2
    err = capsys.readouterr().err.strip()
    assert "tasks.replicates_per_task" in err or "the store would need" in err
    assert not (tmp_path / "many.zarr").exists()


def test_size_estimate_matches_a_real_store(tmp_path, cluster2, monopoly_spec_text):
    """The estimate is an upper bound of the bytes a real store takes, and not a loose one."""
    from boardsweep.pipeline.plan.sizing import estimate

    spec = parse_spec(monopoly_spec_text)
    url = tmp_path / "small.zarr"
    assert run_sweep(spec, str(url), scheduler=cluster2).complete
    used = sum(p.stat().st_size for p in url.rglob("*") if p.is_file())
    est = estimate(spec).store_bytes
    assert used <= est < 50 * used, (used, est)
    counts = zarr.open_array(str(url), path="counts", mode="r")
    assert np.prod(counts.shape) * 8 <= est
