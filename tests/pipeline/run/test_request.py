"""One translation from options to a run (:mod:`boardsweep.pipeline.run.request`):
``boardsweep run`` and ``boardsweep.run`` build the same target and request,
refused in the same one line, each in its own spelling."""

from __future__ import annotations

import pytest

import boardsweep
from boardsweep.pipeline.errors import InputError
from boardsweep.pipeline.run.request import (API_ARGUMENTS, CLI_OPTIONS, EXTEND_AND_OVERWRITE, RunRequest,
                                             cluster_target)
from boardsweep.pipeline.spec.parse import parse_spec
from specs import TOY_SPEC


def test_extend_with_overwrite_is_refused_by_the_request_alone():
    spec = parse_spec(TOY_SPEC, "toy.toml")
    with pytest.raises(InputError, match="give one of them") as refused:
        RunRequest(spec, extend=True, overwrite=True)
    assert str(refused.value) == EXTEND_AND_OVERWRITE
    with pytest.raises(InputError, match="give one of them"):
        boardsweep.run(spec, extend=True, overwrite=True)


@pytest.mark.parametrize("names, jobs, dashboard", [(CLI_OPTIONS, "--jobs sizes", "--dashboard-address applies"),
                                                    (API_ARGUMENTS, "jobs= sizes", "dashboard_address= applies")])
def test_conflicting_options_are_refused_in_the_callers_spelling(names, jobs, dashboard):
    with pytest.raises(InputError, match=jobs):
        cluster_target(jobs="2", names=names)
    with pytest.raises(InputError, match=dashboard):
        cluster_target(scheduler="tcp://127.0.0.1:8786", dashboard_address=":8787", names=names)


def test_a_target_from_either_caller_is_the_same():
    given = dict(workers=2, dashboard_address=":0")
    cli, api = cluster_target(**given, names=CLI_OPTIONS), cluster_target(**given, names=API_ARGUMENTS)
    assert cli == api and cli.workers == 2 and cli.scheduler is None
    assert cluster_target(scheduler="tcp://h:1").describe() == "Dask scheduler tcp://h:1"


def test_the_request_names_its_store(tmp_path):
    spec = parse_spec(TOY_SPEC, "toy.toml")
    assert RunRequest(spec, str(tmp_path / "s.zarr")).url.endswith("s.zarr")
    assert RunRequest(spec).url.endswith(spec.default_store().lstrip("./"))
    assert RunRequest(spec).target is not None
