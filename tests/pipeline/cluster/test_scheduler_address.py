"""A ``--scheduler`` address Dask cannot use is refused in one line (exit 2)
before the store is created."""

from __future__ import annotations

import pytest

from clirun import run_cli


@pytest.mark.parametrize("address", ["foo bar", "udp://127.0.0.1:8786", "tcp://host:99999", "tcp://a b:1"])
def test_a_bad_scheduler_address_is_refused_before_the_store_is_created(address, tmp_path, write_spec,
                                                                       toy_spec_text, capsys):
    spec = write_spec(toy_spec_text)
    url = tmp_path / "store.zarr"
    assert run_cli("-q", "run", str(spec), "--store", str(url), "--scheduler", address) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a Dask scheduler address" in err[0] and repr(address) in err[0], err
    assert not url.exists()
