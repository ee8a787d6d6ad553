"""``report --out``: never overwrites a page, table or figure boardsweep did
not write, rewrites its own report, and says in one line when the folder
cannot be written (a real read-only mount)."""

from __future__ import annotations

import pytest

from clirun import run_cli
from boardsweep.pipeline.execute import run_sweep
from boardsweep.pipeline.spec import parse_spec


@pytest.fixture(scope="module")
def store(tmp_path_factory, cluster2):
    from conftest import TOY_SPEC

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
