"""An unfinished store that lost its ``.boardsweep/`` folder (its checksum
records) keeps the finished tasks whose chunks are intact: the next run
computes only what is missing or damaged, and the store ends equal to an
undisturbed run.  Real runs on the shared two-worker cluster, real files
deleted and cut short."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from localdask import assert_bitwise_equal
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec

DATA = ["counts", "events", "rolls", "done", "exact_frequency", "exact_done"]
FINISHED = 5  # of the toy sweep's 8 simulation tasks (and its 4 exact answers, which run first)


@pytest.fixture(scope="module")
def reference(tmp_path_factory, cluster2):
    from specs import TOY_SPEC  # tests/support is on sys.path

    url = tmp_path_factory.mktemp("lost") / "reference.zarr"
    assert run_sweep(parse_spec(TOY_SPEC), str(url), scheduler=cluster2, pack=False).complete
    return url


def _unfinished_without_records(tmp_path, toy_spec_text, cluster2) -> Path:
    url = tmp_path / "store.zarr"
    report = run_sweep(parse_spec(toy_spec_text), str(url), scheduler=cluster2, max_tasks=FINISHED)
    assert not report.complete and report.tasks_run == FINISHED
    shutil.rmtree(url / ".boardsweep")
    return url


def test_intact_tasks_are_kept_when_their_records_are_lost(tmp_path, toy_spec_text, cluster2, reference):
    url = _unfinished_without_records(tmp_path, toy_spec_text, cluster2)
    report = run_sweep(parse_spec(toy_spec_text), str(url), scheduler=cluster2, pack=False)
    assert report.complete
    assert report.tasks_run == 8 - FINISHED and report.exact_run == 0  # only the missing tasks ran
    assert report.repaired == [f"{FINISHED + 4} finished tasks had lost their checksum records; their chunks "
                               "are intact: kept, records written again"]
    assert_bitwise_equal(url, reference, DATA)
    again = run_sweep(parse_spec(toy_spec_text), str(url), scheduler=cluster2, pack=False)
    assert again.tasks_run == 0 and again.repaired == []  # the records written again verify as usual


def test_a_cut_chunk_without_its_record_is_recomputed(tmp_path, toy_spec_text, cluster2, reference):
    url = _unfinished_without_records(tmp_path, toy_spec_text, cluster2)
    chunk = next(p for p in sorted((url / "counts" / "c").rglob("*")) if p.is_file())
    chunk.write_bytes(chunk.read_bytes()[: chunk.stat().st_size // 2])  # cut short: it no longer decodes
    report = run_sweep(parse_spec(toy_spec_text), str(url), scheduler=cluster2, pack=False)
    assert report.complete and report.tasks_run == 8 - FINISHED + 1 and report.exact_run == 0
    assert any("no checksum record" in line for line in report.repaired), report.repaired
    assert_bitwise_equal(url, reference, DATA)
