"""Store URLs: a protocol fsspec does not know, one whose package is missing
and ``memory://`` (which worker processes do not share) are refused in one
line before anything starts; ``local://`` and ``file://`` are folders."""

from __future__ import annotations

import importlib.util

import pytest

from clirun import run_cli

REFUSED = {
    "fille:///tmp/boardsweep-misspelt.zarr": "unknown protocol 'fille'",
    "memory://sweep.zarr": "worker processes do not share",
}
if importlib.util.find_spec("s3fs") is None:
    REFUSED["s3://bucket/sweep.zarr"] = "needs a package that is not installed"


@pytest.mark.parametrize("url", list(REFUSED))
def test_an_unusable_store_url_is_refused_in_one_line(url, write_spec, toy_spec_text, capsys):
    spec = write_spec(toy_spec_text)
    assert run_cli("-q", "run", str(spec), "--store", url) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and REFUSED[url] in err[0] and url in err[0], err


MISSPELT = "fille:///tmp/boardsweep-misspelt.zarr"


@pytest.mark.parametrize("command", [("status",), ("query",), ("report", "--out", "REPORT")])
def test_a_misspelt_url_gets_the_same_line_from_the_reading_commands(command, tmp_path, capsys):
    args = [a.replace("REPORT", str(tmp_path / "report")) for a in command]
    assert run_cli(args[0], MISSPELT, *args[1:]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"boardsweep: error: store {MISSPELT}: unknown protocol 'fille'; give a folder or an fsspec "
                   "URL such as s3://bucket/path"], err
    assert not (tmp_path / "report").exists()


def test_a_local_url_is_a_folder(tmp_path, write_spec, toy_spec_text, cluster2, capsys):
    spec = write_spec(toy_spec_text)
    folder = tmp_path / "store.zarr"
    assert run_cli("-q", "run", str(spec), "--store", f"local://{folder}", "--scheduler", cluster2) == 0
    assert (folder / "zarr.json").is_file()
    bigger = write_spec(toy_spec_text.replace("replicates = 4", "replicates = 6"), "bigger.toml")
    assert run_cli("-q", "run", str(bigger), "--store", f"local://{folder}", "--scheduler", cluster2,
                   "--extend") == 0
    assert run_cli("status", str(folder)) == 0
