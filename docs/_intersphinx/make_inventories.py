"""Write the intersphinx inventories the documentation links through (``python docs/_intersphinx/make_inventories.py``).

The docs build offline (CI has no network), so intersphinx cannot fetch the
projects' own ``objects.inv``.  These are small inventories in Sphinx's format
(version 2), holding only the objects boardsweep's pages and docstrings name,
each at its page in that project's stable documentation.  With network, the
projects' full inventories can replace them: ``conf.py`` reads these first and
the project's own URL second.
"""

from __future__ import annotations

import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: project -> (base URL, [(name, domain:role, page relative to the base URL)]).
OBJECTS = {
    "xarray": ("https://docs.xarray.dev/en/stable/", [
        ("xarray.Dataset", "py:class", "generated/xarray.Dataset.html"),
        ("xarray.DataArray", "py:class", "generated/xarray.DataArray.html"),
        ("xarray.open_zarr", "py:function", "generated/xarray.open_zarr.html"),
        ("xarray.open_dataset", "py:function", "generated/xarray.open_dataset.html"),
        ("xarray.Dataset.to_zarr", "py:method", "generated/xarray.Dataset.to_zarr.html"),
        ("xarray.Dataset.to_netcdf", "py:method", "generated/xarray.Dataset.to_netcdf.html"),
        ("xarray.Dataset.sel", "py:method", "generated/xarray.Dataset.sel.html"),
        ("xarray.register_dataset_accessor", "py:function", "generated/xarray.register_dataset_accessor.html"),
    ]),
    "dask": ("https://docs.dask.org/en/stable/", [
        ("dask.config.set", "py:function", "configuration.html"),
        ("dask.config.get", "py:function", "configuration.html"),
    ]),
    "distributed": ("https://distributed.dask.org/en/stable/", [
        ("distributed.Client", "py:class", "api.html"),
        ("distributed.LocalCluster", "py:class", "api.html"),
    ]),
    "zarr": ("https://zarr.readthedocs.io/en/stable/", [
        ("zarr.Group", "py:class", "api/zarr/group/"),
        ("zarr.open_group", "py:function", "api/zarr/open_group/"),
        ("zarr.open", "py:function", "api/zarr/open/"),
    ]),
    "numpy": ("https://numpy.org/doc/stable/", [
        ("numpy.ndarray", "py:class", "reference/generated/numpy.ndarray.html"),
        ("numpy.random.Generator", "py:class", "reference/random/generator.html"),
        ("numpy.random.SeedSequence", "py:class",
         "reference/random/bit_generators/generated/numpy.random.SeedSequence.html"),
    ]),
    "scipy": ("https://docs.scipy.org/doc/scipy/", [
        ("scipy.stats.t", "py:data", "reference/generated/scipy.stats.t.html"),
        ("scipy.stats.chi2", "py:data", "reference/generated/scipy.stats.chi2.html"),
        ("scipy.stats.binomtest", "py:function", "reference/generated/scipy.stats.binomtest.html"),
        ("scipy.sparse.linalg.spsolve", "py:function", "reference/generated/scipy.sparse.linalg.spsolve.html"),
        ("scipy.sparse.linalg.bicgstab", "py:function", "reference/generated/scipy.sparse.linalg.bicgstab.html"),
    ]),
}


def inventory(project: str, entries: list[tuple[str, str, str]]) -> bytes:
    """The ``objects.inv`` bytes of ``entries`` (each linked to its page's anchor named after it)."""
    header = (f"# Sphinx inventory version 2\n# Project: {project}\n# Version: stable\n"
              "# The remainder of this file is compressed using zlib.\n").encode()
    lines = "".join(f"{name} {role} 1 {page}#$ -\n" for name, role, page in sorted(entries))
    return header + zlib.compress(lines.encode())


def main() -> None:
    for project, (_, entries) in OBJECTS.items():
        (HERE / f"{project}.inv").write_bytes(inventory(project, entries))


if __name__ == "__main__":
    main()
