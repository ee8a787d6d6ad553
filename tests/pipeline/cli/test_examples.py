"""``boardsweep examples``: the shipped example sweeps listed, shown, copied, and run by bare name."""

from __future__ import annotations

import tomllib
from pathlib import Path

from clirun import run_cli

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = sorted(p.stem for p in (ROOT / "sweeps").glob("*.toml"))


def test_examples_lists_every_shipped_sweep(capsys):
    assert run_cli("examples") == 0
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.splitlines()[:-1]]
    assert listed == SHIPPED  # the package carries the repository's sweeps/, all of them
    quick = next(line for line in out.splitlines() if line.startswith("quickstart"))
    assert tomllib.loads((ROOT / "sweeps" / "quickstart.toml").read_text())["description"] in quick
    assert "boardsweep run quickstart" in out.splitlines()[-1]


def test_examples_copy_writes_the_spec_and_never_replaces_one(tmp_path, capsys):
    target = tmp_path / "mine"
    assert run_cli("examples", "copy", "quickstart", str(target)) == 0
    copied = target / "quickstart.toml"
    assert copied.read_bytes() == (ROOT / "sweeps" / "quickstart.toml").read_bytes()
    assert str(copied) in capsys.readouterr().out
    copied.write_text("# mine\n")
    assert run_cli("examples", "copy", "quickstart.toml", str(target)) == 2
    err = capsys.readouterr().err
    assert err.startswith("boardsweep: error:") and "exists already" in err and len(err.splitlines()) == 1
    assert copied.read_text() == "# mine\n"  # changed nothing


def test_examples_copy_brings_the_recorded_digest_with_the_spec(tmp_path, capsys):
    assert run_cli("examples", "copy", "nightly", str(tmp_path)) == 0
    for name in ("nightly.toml", "nightly.digest.json"):
        assert (tmp_path / name).read_bytes() == (ROOT / "sweeps" / name).read_bytes(), name
    assert "--against " + str(tmp_path / "nightly.digest.json") in capsys.readouterr().out
    (tmp_path / "again").mkdir()
    (tmp_path / "again" / "nightly.digest.json").write_text("{}")  # a digest already there: nothing written
    assert run_cli("examples", "copy", "nightly", str(tmp_path / "again")) == 2
    assert "nightly.digest.json: exists already" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "again").iterdir()) == ["nightly.digest.json"]


def test_verify_against_an_example_without_a_digest_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run_cli("verify", "quickstart", "--against", "quickstart") == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "no shipped digest of that name (examples with one: nightly)" in err
    assert list(tmp_path.iterdir()) == []


def test_examples_show_prints_the_spec(capsys):
    assert run_cli("examples", "show", "shut_the_box") == 0
    assert capsys.readouterr().out == (ROOT / "sweeps" / "shut_the_box.toml").read_text()


def test_an_unknown_example_is_one_line_naming_the_examples(tmp_path, monkeypatch, capsys):
    assert run_cli("examples", "copy", "nope") == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "no example named 'nope'" in err and "quickstart" in err
    monkeypatch.chdir(tmp_path)
    assert run_cli("run", "nope", "--dry-run") == 2  # neither a file nor an example
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "nope: no such spec file here, and no example" in err, err
    assert "quickstart" in err and list(tmp_path.iterdir()) == []


def test_run_takes_a_bare_example_name_where_no_such_file_exists(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run_cli("run", "quickstart", "--dry-run", "--workers", "1") == 0
    out = capsys.readouterr().out
    assert "dry run of sweep quickstart (monopoly) from " in out and "sweeps/quickstart.toml" in out
    assert f"{tmp_path / 'results' / 'quickstart.zarr'}: new" in out
    assert list(tmp_path.iterdir()) == []  # a dry run creates nothing
    (tmp_path / "quickstart").write_text('name = "x"\n')  # a file of that name is the user's: it wins
    assert run_cli("run", "quickstart", "--dry-run") == 2
    assert "quickstart:" in capsys.readouterr().err


def test_shipped_specs_leave_task_sizes_to_the_automatic_rule(capsys):
    for name in SHIPPED:
        raw = tomllib.loads((ROOT / "sweeps" / f"{name}.toml").read_text())
        assert "tasks" not in raw, name
    # the quickstart at 2 replicates: refused while it pinned 4 replicates per task
    assert run_cli("run", "quickstart", "--set", "run.replicates=2", "--dry-run", "--workers", "1") == 0
    assert "replicates:  2 per point" in capsys.readouterr().out
