"""``boardsweep digest`` and ``boardsweep verify``: re-running a spec is
compared (integers bit for bit, floats within rtol 1e-9) with a store (the first differing cell is named by its
coordinates) or with a recorded digest (the differing variable is named); the
committed nightly digest verifies."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import zarr

from clirun import run_cli
from localdask import finish, start_client
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import packing
from boardsweep.pipeline.run.verify import FLOAT_ATOL, FLOAT_RTOL, _decode_floats

ROOT = Path(__file__).resolve().parents[3]


def _edit(url: Path, name: str, index: tuple, value) -> None:
    """Change one stored cell as a store written with that value holds it,
    checksums recorded to match: a real difference (another CPU, another
    version), not damage, which verify refuses."""
    packing.unpack(str(url))  # tasks write the task layout only
    zarr.open_array(str(url), path=name, mode="r+")[index] = value
    packing._record_manifests(str(url))


@pytest.fixture
def toy_store(tmp_path, cluster2, toy_spec_text, write_spec):
    spec_path = write_spec(toy_spec_text)
    url = tmp_path / "toy.zarr"
    assert run_sweep(parse_spec(toy_spec_text), str(url), scheduler=cluster2).complete
    return spec_path, url


def test_digest_hashes_every_data_variable(toy_store, tmp_path, cluster2, toy_spec_text, capsys):
    spec_path, url = toy_store
    out = tmp_path / "toy.digest.json"
    assert run_cli("digest", str(url), "--out", str(out)) == 0
    recorded = json.loads(out.read_text())
    assert recorded["format"] == "boardsweep-digest/2" and recorded["sweep"] == "toy"
    assert recorded["spec_sha256"] == hashlib.sha256(toy_spec_text.encode()).hexdigest()
    assert set(recorded["variables"]) == {"counts", "events", "rolls", "exact_frequency", "done", "exact_done",
                                          "series_counts"}  # the equal-batch series (store format 7) too
    counts = zarr.open_array(str(url), path="counts", mode="r")[...]
    assert recorded["variables"]["counts"] == {
        "dtype": "<i8", "shape": [2, 2, 4, 5, 8],
        "sha256": hashlib.sha256(np.ascontiguousarray(counts).tobytes()).hexdigest(),
    }
    exact = zarr.open_array(str(url), path="exact_frequency", mode="r")[...]
    entry = recorded["variables"]["exact_frequency"]
    assert entry["dtype"] == "<f8" and "sha256" not in entry
    np.testing.assert_array_equal(_decode_floats(entry["values"], entry["shape"]), exact)
    assert recorded["tolerance"] == {"rtol": FLOAT_RTOL, "atol": FLOAT_ATOL}
    # stdout form, and a second run of the same spec gives the same digest
    again = tmp_path / "again.zarr"
    run_sweep(parse_spec(toy_spec_text), str(again), scheduler=cluster2)
    capsys.readouterr()
    assert run_cli("digest", str(again)) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["variables"] == recorded["variables"]
    assert second["spec_canonical_sha256"] == recorded["spec_canonical_sha256"]
    assert run_cli("digest", str(tmp_path / "missing.zarr")) == 2
    assert "no sweep store" in capsys.readouterr().err


def test_verify_names_the_changed_cell(toy_store, tmp_path, cluster2, capsys):
    spec_path, url = toy_store
    assert run_cli("verify", str(spec_path), "--against", str(url), "--scheduler", cluster2) == 0
    assert "verify: OK, identical: 7 variables match" in capsys.readouterr().out  # series_counts too

    changed = tmp_path / "changed.zarr"
    shutil.copytree(url, changed)
    before = int(zarr.open_array(str(changed), path="counts", mode="r")[1, 0, 2, 3, 5])
    _edit(changed, "counts", (1, 0, 2, 3, 5), before + 1)  # dice_sides=3, rule=plain, replicate 2, 4th checkpoint, S5
    checkpoint = int(zarr.open_array(str(changed), path="checkpoint", mode="r")[3])

    assert run_cli("verify", str(spec_path), "--against", str(changed), "--scheduler", cluster2) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0] == (
        f"boardsweep: error: verify failed: variable 'counts' differs at dice_sides=3, rule='plain', "
        f"replicate=2, checkpoint={checkpoint}, location='S5': {before + 1} in {changed}, {before} in the "
        "re-run (1 of 640 cells differ)"
    )

    # against a digest, the variable is named
    digest = tmp_path / "changed.digest.json"
    assert run_cli("digest", str(changed), "--out", str(digest)) == 0
    assert run_cli("verify", str(spec_path), "--against", str(digest), "--scheduler", cluster2) == 1
    err = capsys.readouterr().err
    assert "verify failed: variable 'counts' differs: SHA-256" in err
    assert "events" not in err and "rolls" not in err


def _nudge_exact(url: Path, factor: float) -> float:
    """Scale one exact frequency (dice_sides=3, rule='plain', location S2) by ``factor``."""
    value = float(zarr.open_array(str(url), path="exact_frequency", mode="r")[1, 0, 2])
    _edit(url, "exact_frequency", (1, 0, 2), value * factor)
    return value


def test_floats_from_another_cpu_verify_and_real_changes_fail(toy_store, tmp_path, cluster2, capsys):
    """An exact answer rounded differently (a few ulps, as another CPU's BLAS
    would) verifies, against a store and against a digest; a change beyond
    the tolerance fails and names the cell."""
    spec_path, url = toy_store
    rounded = tmp_path / "rounded.zarr"
    shutil.copytree(url, rounded)
    _nudge_exact(rounded, 1 + 8 * np.finfo(float).eps)
    digest = tmp_path / "rounded.digest.json"
    assert run_cli("digest", str(rounded), "--out", str(digest)) == 0
    for against in (rounded, digest):
        assert run_cli("verify", str(spec_path), "--against", str(against), "--scheduler", cluster2) == 0, \
            capsys.readouterr().err
    capsys.readouterr()

    changed = tmp_path / "changed.zarr"
    shutil.copytree(url, changed)
    value = _nudge_exact(changed, 1 + 1e-6)
    digest = tmp_path / "changed.digest.json"
    assert run_cli("digest", str(changed), "--out", str(digest)) == 0
    for against in (changed, digest):
        assert run_cli("verify", str(spec_path), "--against", str(against), "--scheduler", cluster2) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "variable 'exact_frequency' differs" in err[0], err
        assert "dice_sides=3, rule='plain', location='S2'" in err[0] and repr(value) in err[0]


def test_old_digest_format_is_refused_in_one_line(toy_store, tmp_path, capsys):
    spec_path, _ = toy_store
    old = tmp_path / "old.digest.json"
    old.write_text(json.dumps({"format": "boardsweep-digest/1", "variables": {}}))
    assert run_cli("verify", str(spec_path), "--against", str(old)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "record it again with `boardsweep digest`" in err[0], err


def test_verify_refuses_another_spec(toy_store, tmp_path, cluster2, toy_spec_text, write_spec, capsys):
    spec_path, url = toy_store
    other = write_spec(toy_spec_text.replace("seed = 7", "seed = 8"), "other.toml")
    digest = tmp_path / "toy.digest.json"
    assert run_cli("digest", str(url), "--out", str(digest)) == 0
    assert run_cli("verify", str(other), "--against", str(digest), "--scheduler", cluster2) == 1
    assert "was recorded for a different spec" in capsys.readouterr().err
    assert run_cli("verify", str(other), "--against", str(url), "--scheduler", cluster2) == 1
    assert "seed: 7 in the store, 8 in" in capsys.readouterr().err
    assert run_cli("verify", str(other), "--against", str(tmp_path / "nothing")) == 2
    assert "no such store or digest file" in capsys.readouterr().err


def test_verify_keeps_the_rerun_when_asked(toy_store, tmp_path, cluster2, capsys):
    spec_path, url = toy_store
    kept = tmp_path / "kept.zarr"
    assert run_cli("verify", str(spec_path), "--against", str(url), "--scheduler", cluster2,
                   "--store", str(kept)) == 0
    assert zarr.open_array(str(kept), path="done", mode="r")[...].all()
    assert run_cli("verify", str(spec_path), "--against", str(url), "--store", str(kept)) == 2
    assert "exists" in capsys.readouterr().err


def test_nightly_spec_matches_its_committed_digest(tmp_path):
    """What .github/workflows/nightly.yml runs.  After an intended change of
    Monopoly results, record a new digest (see the comment in sweeps/nightly.toml)."""
    proc = start_client(tmp_path, "verify", str(ROOT / "sweeps" / "nightly.toml"), "--against",
                        str(ROOT / "sweeps" / "nightly.digest.json"), "--workers", "2", real=True)
    rc, out, err = finish(proc, timeout=300)
    assert rc == 0, f"{out}\n{err}"
    assert "verify: OK" in out


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["deleted", "flipped"])
def test_digest_and_verify_refuse_a_damaged_store_in_one_line(damage, toy_store, tmp_path, cluster2, capsys):
    spec_path, url = toy_store
    chunk = url / "counts" / "c" / "0" / "0" / "0" / "0" / "0"  # the packed store's one chunk
    chunk.unlink() if damage == "deleted" else _flip(chunk)
    out = tmp_path / "digest.json"
    assert run_cli("digest", str(url), "--out", str(out)) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is damaged" in err[0] and "packed chunk counts/c/0/0/0/0/0" in err[0], err
    assert not out.exists()
    assert run_cli("verify", str(spec_path), "--against", str(url), "--scheduler", cluster2) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is damaged" in err[0], err


def _tree(url: Path) -> dict[str, bytes]:
    return {str(p.relative_to(url)): p.read_bytes() for p in sorted(url.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("where", ["zarr.json", "counts/zarr.json", "new.json", "sub/new.json"])
def test_digest_is_never_written_inside_a_store(where, toy_store, capsys):
    """``digest --out STORE/zarr.json`` replaced the store's root metadata
    (exit 0): a path anywhere inside a store is refused in one line, exit 2, nothing written."""
    _, url = toy_store
    (url / "sub").mkdir()
    before = _tree(url)
    assert run_cli("digest", str(url), "--out", str(url / where)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "inside the sweep store" in err[0] and str(url) in err[0], err
    assert _tree(url) == before
    assert run_cli("status", str(url)) == 0


def test_digest_is_not_written_inside_a_store_through_a_symlink(toy_store, tmp_path, capsys):
    _, url = toy_store
    (tmp_path / "link").symlink_to(url)
    before = _tree(url)
    assert run_cli("digest", str(url), "--out", str(tmp_path / "link" / "zarr.json")) == 2
    assert "inside the sweep store" in capsys.readouterr().err
    assert _tree(url) == before


def test_digest_never_overwrites_a_file_it_did_not_write(toy_store, tmp_path, capsys):
    """An existing file that is not a digest is refused, kept; a digest is rewritten."""
    _, url = toy_store
    mine = tmp_path / "notes.json"
    mine.write_text('{"my": "notes"}')
    assert run_cli("digest", str(url), "--out", str(mine)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a boardsweep digest" in err[0], err
    assert mine.read_text() == '{"my": "notes"}'
    out = tmp_path / "toy.digest.json"
    assert run_cli("digest", str(url), "--out", str(out)) == 0
    assert run_cli("digest", str(url), "--out", str(out)) == 0  # its own digest: rewritten
    assert json.loads(out.read_text())["format"] == "boardsweep-digest/2"
