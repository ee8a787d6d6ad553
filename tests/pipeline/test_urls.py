"""Where a store is (:mod:`boardsweep.pipeline.urls`): the one local-versus-object answer
that the store, the CLI's Ctrl-C line and a run's head start all take."""

from __future__ import annotations

from pathlib import Path

import pytest

from boardsweep.pipeline import store, urls


@pytest.mark.parametrize("url, folder", [
    ("results/x.zarr", Path("results/x.zarr")),
    ("/tmp/x.zarr", Path("/tmp/x.zarr")),
    ("file:///tmp/x.zarr", Path("/tmp/x.zarr")),
    ("local:///tmp/x.zarr", Path("/tmp/x.zarr")),
    ("s3://bucket/x.zarr", None),
    ("gs://bucket/x.zarr", None),
    ("simplecache::s3://bucket/x.zarr", None),  # a chained URL: fsspec's, never a folder
    ("memory::x.zarr", None),
])
def test_a_url_is_a_local_folder_or_object_storage(url, folder):
    assert urls.local_root(url) == folder


def test_the_store_hands_on_the_one_answer():
    assert store.local_root is urls.local_root


def test_the_cli_start_asks_it_without_importing_pathlib():
    """The Ctrl-C line's module (imported as the CLI starts) defers the question to the line itself."""
    import subprocess
    import sys

    code = "import sys; import boardsweep.pipeline.cli.interrupt; print('pathlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() \
        == "False"
