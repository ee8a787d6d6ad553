"""Creating the empty store of a large grid: one dask chunk per array (now)
against one dask chunk per grid point and task block (before), in one run.

``to_zarr(compute=False)`` writes only metadata, but it first builds the dask
graph of every array: with per-point chunks that graph has one task per grid
point, task block and array, which took minutes at 10^5 points and printed
nothing.  The script times both ways on the same toy grid (``--points``,
default 10,000) into fresh folders and prints the ratio.

Usage::

    python benchmarks/planning.py [--points 10000]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "pipeline"))


def _timed_create(spec, url: str, per_point: bool) -> float:
    from boardsweep.pipeline.store import quiet_zarr, template

    t0 = time.perf_counter()
    ds, encoding = template(spec, spec.game)
    if per_point:  # the dask chunks the template had before: the zarr chunks themselves
        ds = ds.assign({n: ds[n].chunk(dict(zip(ds[n].dims, encoding[n]["chunks"]))) for n in encoding})
    with quiet_zarr():
        ds.to_zarr(url, mode="a", compute=False, encoding=encoding, consolidated=True, zarr_format=3)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=10_000)
    args = parser.parse_args()
    from conftest import TOY_SPEC  # the toy game, registered

    from boardsweep.pipeline.spec import parse_spec

    sides = ", ".join(str(n) for n in range(2, 2 + args.points // 2))
    spec = parse_spec(TOY_SPEC.replace("dice_sides = [2, 3]", f"dice_sides = [{sides}]"), "planning.toml")
    print(f"{platform.processor() or platform.machine()}, load {os.getloadavg()[0]:.2f}; "
          f"{args.points} grid points, {len(spec.game.variables)} simulated arrays")
    with tempfile.TemporaryDirectory() as tmp:
        now = _timed_create(spec, f"{tmp}/one_chunk.zarr", per_point=False)
        before = _timed_create(spec, f"{tmp}/per_point.zarr", per_point=True)
    print(f"empty store, one dask chunk per array: {now:.1f} s")
    print(f"empty store, one dask chunk per point: {before:.1f} s")
    print(f"ratio: {before / now:.1f}x")


if __name__ == "__main__":
    main()
