"""Growing a sweep in place (``--extend``) and running to a precision target
on object storage (SeaweedFS on 127.0.0.1) give the store the same runs give
on a folder: integers bit for bit, floats within verify's tolerance, and
packed at the end."""

from __future__ import annotations

import os

import pytest

from localdask import COMPARED, assert_bitwise_equal, raw_arrays
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import integrity, packing

pytestmark = pytest.mark.slow



def _toy(make_spec, dice=(2, 3), replicates=4, **tables) -> str:
    return make_spec("toy", seed=7, params={"size": 8}, grid={"dice_sides": list(dice), "rule": ["plain", "sticky"]},
                     run={"replicates": replicates, "games": 2, "turns": 60}, checkpoints={"count": 5},
                     tasks={"replicates_per_task": 2}, **tables)


def _both(tmp_path, bucket_url: str, name: str) -> tuple[str, str]:
    return str(tmp_path / f"{name}.zarr"), f"{bucket_url.rsplit('/', 1)[0]}/{name}-{os.getpid()}.zarr"


def test_a_sweep_grown_on_s3_equals_the_same_growth_on_a_folder(tmp_path, bucket_url, s3cluster, make_spec):
    base, grown = _toy(make_spec), _toy(make_spec, dice=(4, 2, 3), replicates=6)
    reports = []
    for url in _both(tmp_path, bucket_url, "grown"):
        assert run_sweep(parse_spec(base, "base.toml"), url, scheduler=s3cluster).complete
        assert packing.layout(url) == "packed"  # so the growth unpacks first
        report = run_sweep(parse_spec(grown, "grown.toml"), url, scheduler=s3cluster, extend=True)
        assert report.complete and packing.layout(url) == "packed" and not integrity.check(url)
        reports.append((report.tasks_run, report.exact_run))
    assert reports[0] == reports[1] == (4 * 1 + 2 * 3, 2)  # old points one new block each, new points three
    local, remote = _both(tmp_path, bucket_url, "grown")
    assert_bitwise_equal(local, remote, COMPARED)
    assert raw_arrays(remote)["dice_sides"].tolist() == [2, 3, 4]
    assert run_sweep(parse_spec(grown, "grown.toml"), remote, scheduler=s3cluster).tasks_run == 0


def test_a_precision_run_on_s3_equals_the_same_run_on_a_folder(tmp_path, bucket_url, s3cluster, make_spec):
    text = _toy(make_spec, precision={"stderr": 0.02, "max_replicates": 32})
    rounds = []
    for url in _both(tmp_path, bucket_url, "precision"):
        report = run_sweep(parse_spec(text, "p.toml"), url, scheduler=s3cluster)
        assert report.complete and packing.layout(url) == "packed" and not integrity.check(url)
        rounds.append(report.tasks_run)
    local, remote = _both(tmp_path, bucket_url, "precision")
    assert rounds[0] == rounds[1] > 8  # more than the first round's 4 points x 2 blocks
    assert_bitwise_equal(local, remote, [*COMPARED, "replicates_used", "precision_state", "stderr_reached"])
    used = raw_arrays(remote)["replicates_used"]
    assert (raw_arrays(remote)["precision_state"] == 1).all() and 4 < used.max() <= 32


def test_a_checked_read_a_growth_crosses_reads_the_grown_store(bucket_url, s3cluster, make_spec, monkeypatch):
    """On object storage as on a folder (``run/test_growth``): a checked
    ``load_sweep`` whose integrity check read the store before a growth,
    and whose data read came after the growth, reads the grown store whole
    (the S3 soak: 3 such reads raised the raw ``ValueError: Data shape ...
    must match shape of object ...``)."""
    import boardsweep
    from boardsweep.pipeline.run import growth as grow
    from boardsweep.pipeline.store import Store

    assert run_sweep(parse_spec(_toy(make_spec), "base.toml"), bucket_url, scheduler=s3cluster).complete
    spec, growth = grow.check(bucket_url, parse_spec(_toy(make_spec, dice=(2, 3, 4)), "grown.toml"), True)
    checked = Store.check

    def then_grown(self):  # the real check, then the real growth (a run's) before the read goes on
        found = checked(self)
        monkeypatch.setattr(Store, "check", checked)
        Store(bucket_url).apply_growth(spec, growth.describe(), "grown.toml")
        return found

    monkeypatch.setattr(Store, "check", then_grown)
    ds = boardsweep.load_sweep(bucket_url)
    assert ds["dice_sides"].values.tolist() == [2, 3, 4]
    assert ds["done"].sel(dice_sides=[2, 3]).values.all() and not ds["done"].sel(dice_sides=4).values.any()
