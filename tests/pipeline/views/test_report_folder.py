"""``report``'s folder: beside the store by default; never overwrites a page,
table or figure boardsweep did not write; replaces only the files its earlier
report recorded making (another store's, a killed run's); says in one line
when the folder cannot be written (a real read-only mount)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clirun import run_cli
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec


@pytest.fixture(scope="module")
def store(tmp_path_factory, cluster2):
    from specs import TOY_SPEC  # tests/support is on sys.path

    url = tmp_path_factory.mktemp("report_out") / "toy.zarr"
    assert run_sweep(parse_spec(TOY_SPEC, "toy.toml"), str(url), scheduler=cluster2).complete
    return url


@pytest.mark.parametrize("name", ["index.html", "summary.json", "points.csv"])
def test_the_users_own_files_are_never_overwritten(name, store, tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / name).write_text("my own work")
    assert run_cli("report", str(store), "--out", str(out)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and name in err[0] and "did not write" in err[0], err
    assert [p.name for p in out.iterdir()] == [name] and (out / name).read_text() == "my own work"


def test_a_report_boardsweep_wrote_is_rewritten(store, tmp_path, capsys):
    out = tmp_path / "report"
    assert run_cli("report", str(store), "--out", str(out)) == 0
    assert run_cli("report", str(store), "--out", str(out)) == 0
    assert (out / "index.html").is_file()


def test_a_read_only_folder_is_refused_in_one_line(store, tmpfs, capsys):
    out = tmpfs("readonly", "1m", read_only=True)
    assert run_cli("report", str(store), "--out", str(out)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot write the report there" in err[0], err


def files(out) -> set[str]:
    return {p.name for p in out.iterdir()}


def test_report_with_no_options_goes_beside_the_store(store, capsys):
    """``boardsweep report STORE``, as the run's last line suggests: STORE_DIR/<name>.report."""
    from boardsweep.pipeline.views.report import MANIFEST

    out = store.parent / "toy.report"
    assert run_cli("report", str(store)) == 0
    assert capsys.readouterr().out.strip() == f"report written to {out / 'index.html'}"
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["complete"] and manifest["store"] == str(store)
    assert files(out) == set(manifest["files"]) | {MANIFEST}


def test_the_apis_report_with_no_folder_goes_beside_the_store(store):
    """``boardsweep.pipeline.api.report(STORE)``, as a ``file://`` URL too: STORE_DIR/<name>.report."""
    import shutil

    from boardsweep.pipeline.api import report as write_report
    from boardsweep.pipeline.views.report import MANIFEST

    out = store.parent / "toy.report"
    for url in (str(store), f"file://{store}"):
        shutil.rmtree(out, ignore_errors=True)
        write_report(url)
        assert (out / "index.html").is_file() and json.loads((out / MANIFEST).read_text())["complete"]


@pytest.fixture(scope="module")
def other_store(tmp_path_factory, cluster2):
    """A toy store of another shape: one point without an exact answer, so its report has fewer files."""
    from specs import spec_toml  # tests/support is on sys.path

    text = spec_toml("toy", name="other", params={"size": 8, "rule": "sticky"},
                     run={"replicates": 2, "games": 2, "turns": 40}, checkpoints={"count": 3})
    url = tmp_path_factory.mktemp("report_other") / "other.zarr"
    assert run_sweep(parse_spec(text, "other.toml"), str(url), scheduler=cluster2).complete
    return url


def test_a_report_of_another_store_leaves_no_file_of_the_first(store, other_store, tmp_path):
    """The second report removes exactly what the first recorded making; a user's files stay."""
    from boardsweep.pipeline.views.report import MANIFEST

    out = tmp_path / "shared"
    out.mkdir()
    mine = {"notes.txt": "my notes", "photo.png": "not a figure", "mine.csv": "a,b"}
    for name, text in mine.items():
        (out / name).write_text(text)
    assert run_cli("report", str(store), "--out", str(out)) == 0
    first = set(json.loads((out / MANIFEST).read_text())["files"])
    assert run_cli("report", str(other_store), "--out", str(out)) == 0
    second = json.loads((out / MANIFEST).read_text())
    gone = first - set(second["files"])
    assert gone  # the first report had files the second does not make (comparisons, z heatmap)
    assert files(out) == set(second["files"]) | {MANIFEST} | set(mine)
    assert all((out / name).read_text() == text for name, text in mine.items())
    page = (out / "index.html").read_text()
    assert second["store"] == str(other_store) and str(other_store) in page
    assert "= 1 grid point, 2 replicates done" in page and "1 grid points" not in page  # English plurals


def test_a_killed_report_does_not_block_the_next(store, tmp_path):
    """A report killed while it writes leaves its partial folder; the next run replaces it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from boardsweep.pipeline.views.report import STAGING, MANIFEST

    out = tmp_path / "r"
    assert run_cli("report", str(store), "--out", str(out)) == 0
    before = files(out)
    code = ("from boardsweep.core import games; games.register('toy', 'toy_game'); "
            "from boardsweep.pipeline.cli.commands import main; import sys; main(sys.argv[1:])")
    proc = subprocess.Popen([sys.executable, "-c", code, "report", str(store), "--out", str(out)],
                            env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    staging, deadline = out / STAGING, time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline and not (staging.is_dir() and any(staging.iterdir())):
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL and any(staging.iterdir())  # killed midway, leftovers there
    assert files(out) == before | {STAGING}  # the earlier report untouched
    assert run_cli("report", str(store), "--out", str(out)) == 0
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["complete"] and files(out) == set(manifest["files"]) | {MANIFEST}


@pytest.mark.parametrize("store, folder", [("results/quick.zarr", "results/quick.report"),
                                           ("results/quick.zarr/", "results/quick.report"),
                                           ("file:///data/x.zarr", "/data/x.report"),
                                           ("local:///data/x.zarr", "/data/x.report"),
                                           ("s3://bucket/runs/x.zarr", "x.report")])
def test_the_default_folder_is_beside_a_local_store(store, folder):
    from boardsweep.pipeline.store import local_root
    from boardsweep.pipeline.views.report import default_out_dir

    assert default_out_dir(store, local_root(store)) == Path(folder)


def test_the_runs_suggestion_works_as_printed(tmp_path, write_spec, cluster2, capsys, monkeypatch):
    """The run's last line suggests ``boardsweep report STORE``: that command, as printed, writes the report."""
    import re
    import shlex

    from specs import TOY_SPEC  # tests/support is on sys.path

    monkeypatch.chdir(tmp_path)
    assert run_cli("run", str(write_spec(TOY_SPEC)), "--store", "toy.zarr", "--scheduler", cluster2) == 0
    printed = " ".join(capsys.readouterr().out.split())
    command = re.findall(r"`(boardsweep report [^`]+)`", printed)
    assert command, printed[-500:]
    assert run_cli(*shlex.split(command[-1])[1:]) == 0
    said = capsys.readouterr().out.strip()
    assert said.startswith("report written to ") and said.endswith(str(Path("toy.report") / "index.html"))
    assert (tmp_path / "toy.report" / "index.html").is_file()


def test_a_report_made_before_checksums_is_refused_untouched(store, tmp_path, capsys):
    """A folder with an earlier boardsweep's report (no manifest, or one without
    checksums): nothing there can be shown to be the report's, so the folder is
    refused in one line naming the file and what to do; nothing is removed."""
    out = tmp_path / "old"
    out.mkdir()
    old = {"figures": {"old_figure.png": "caption"}, "tables": {"old": {"csv": "old.csv", "columns": {}}},
           "timing_s": 1.0}
    (out / "report.json").write_text(json.dumps(old))
    for name in ("index.html", "summary.json", "old_figure.png", "old_figure.svg", "old.csv", "notes.txt"):
        (out / name).write_text("old")
    before = {p.name: p.read_text() for p in out.iterdir()}
    assert run_cli("report", str(store), "--out", str(out)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "report.json" in err[0] and "choose a new or empty folder" in err[0], err
    assert {p.name: p.read_text() for p in out.iterdir()} == before

    from boardsweep.pipeline.views.report import MANIFEST

    (out / MANIFEST).write_text(json.dumps({"boardsweep_report": 1, "complete": True,
                                            "files": sorted(before)}))
    assert run_cli("report", str(store), "--out", str(out)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and MANIFEST in err[0] and "records no checksums" in err[0], err
    assert {p.name: p.read_text() for p in out.iterdir() if p.name != MANIFEST} == before


def _claim(out: Path, name: str, sha) -> None:
    """Add ``name`` to the report's manifest, as a user (or a tool) editing it would."""
    from boardsweep.pipeline.views.report import MANIFEST

    manifest = json.loads((out / MANIFEST).read_text())
    if isinstance(manifest["files"], list):  # the manifest before checksums: a list of names
        manifest["files"].append(name)
    else:
        manifest["files"][name] = sha
    (out / MANIFEST).write_text(json.dumps(manifest))


@pytest.mark.parametrize("sha", [None, "0" * 64, "same as index.html"])
def test_a_file_added_to_the_manifest_is_never_removed(sha, store, tmp_path, capsys):
    """The manifest is a claim: a user's file listed there without the checksum
    of its content (none, another, another file's) is not the report's: the
    folder is refused in one line, every file kept."""
    from boardsweep.pipeline.views.report import MANIFEST

    out = tmp_path / "rep"
    assert run_cli("report", str(store), "--out", str(out)) == 0
    (out / "thesis.txt").write_text("three years of work")
    if sha == "same as index.html":
        sha = dict(json.loads((out / MANIFEST).read_text())["files"]).get("index.html")
    _claim(out, "thesis.txt", sha)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert run_cli("report", str(store), "--out", str(out)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "thesis.txt" in err[0] and "did not write" in err[0], err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.parametrize("name", ["../outside.txt", "/ABSOLUTE", "link.txt"])
def test_a_manifest_never_reaches_out_of_its_folder(name, store, tmp_path, capsys):
    """Entries naming a path outside the folder, or a symlink (even with the
    checksum of the file it points to), are refused; the file outside stays."""
    import hashlib

    out = tmp_path / "rep"
    assert run_cli("report", str(store), "--out", str(out)) == 0
    target = tmp_path / "outside.txt"
    target.write_text("not the report's")
    sha = hashlib.sha256(target.read_bytes()).hexdigest()
    if name == "/ABSOLUTE":
        name = str(target)
    if name == "link.txt":
        (out / name).symlink_to(target)
    _claim(out, name, sha)
    assert run_cli("report", str(store), "--out", str(out)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ("did not write" in err[0] or "outside the folder" in err[0]), err
    assert target.read_text() == "not the report's"
    assert name != "link.txt" or (out / name).is_symlink()


def test_a_report_file_the_user_edited_is_kept(store, tmp_path, capsys):
    """A page of the report the user changed is no longer the report's: refused, kept."""
    out = tmp_path / "rep"
    assert run_cli("report", str(store), "--out", str(out)) == 0
    (out / "summary.json").write_text("my edits")
    assert run_cli("report", str(store), "--out", str(out)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "summary.json" in err[0], err
    assert (out / "summary.json").read_text() == "my edits"


@pytest.mark.parametrize("where", ["", "rep", "counts/rep"])
def test_a_report_is_never_written_inside_a_store(where, store, capsys):
    """``report --out`` pointing into a store (or at it) is refused in one line; the store is unchanged."""
    def tree():
        return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}

    before = tree()
    assert run_cli("report", str(store), "--out", str(store / where)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "inside the sweep store" in err[0], err
    assert tree() == before
