"""Preparing the store of a large grid, in one run:

1. creating the empty store: one dask chunk per array (now) against one dask
   chunk per grid point and task block (before).  ``to_zarr(compute=False)``
   writes only metadata, but it first builds the dask graph of every array:
   with per-point chunks that graph has one task per grid point, task block
   and array, which took minutes at 10^5 points and printed nothing;
2. what ``run`` does before it submits a task, step by step, in CPU seconds
   (less sensitive than wall time to other load on the machine): the grid
   resolved by the game, ``Store.prepare`` (the template and its metadata, written), the check of a
   store (``Store.clear_damaged``) and ``plan_tasks``.

Both on the same toy grid (``--points``, default 10,000), into fresh folders.

Usage::

    python benchmarks/planning.py [--points 10000] [--skip-per-point]
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


def _prepare_steps(spec, url: str) -> dict[str, float]:
    """CPU seconds of each step ``run`` takes on a new store before it submits tasks."""
    from boardsweep.pipeline.plan.tasks import plan_tasks
    from boardsweep.pipeline.store import Store

    st, steps = Store(url), {}
    t0 = time.process_time()
    spec.points()  # the grid, resolved by the game once per spec
    steps["the grid resolved (first Spec.points)"] = time.process_time() - t0
    t0 = time.process_time()
    st.prepare(spec, overwrite=False)
    steps["Store.prepare (template, metadata written)"] = time.process_time() - t0
    t0 = time.process_time()
    _, done, _ = st.clear_damaged(spec)
    steps["Store.clear_damaged (the check)"] = time.process_time() - t0
    t0 = time.process_time()
    tasks = plan_tasks(spec, done)
    steps[f"plan_tasks ({len(tasks)} tasks)"] = time.process_time() - t0
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=10_000)
    parser.add_argument("--skip-per-point", action="store_true",
                        help="leave out the old per-point creation (minutes at 10^5 points)")
    args = parser.parse_args()
    from conftest import TOY_SPEC  # the toy game, registered

    from boardsweep.pipeline.spec.parse import parse_spec

    sides = ", ".join(str(n) for n in range(2, 2 + args.points // 2))
    spec = parse_spec(TOY_SPEC.replace("dice_sides = [2, 3]", f"dice_sides = [{sides}]"), "planning.toml")
    print(f"{platform.processor() or platform.machine()}, load {os.getloadavg()[0]:.2f}; "
          f"{args.points} grid points, {len(spec.game.variables)} simulated arrays")
    with tempfile.TemporaryDirectory() as tmp:
        steps = _prepare_steps(spec, f"{tmp}/prepared.zarr")
        now = _timed_create(spec, f"{tmp}/one_chunk.zarr", per_point=False)
        before = None if args.skip_per_point else _timed_create(spec, f"{tmp}/per_point.zarr", per_point=True)
    print(f"empty store, one dask chunk per array: {now:.1f} s")
    if before is not None:
        print(f"empty store, one dask chunk per point: {before:.1f} s")
        print(f"ratio: {before / now:.1f}x")
    print("a new store prepared and planned as `run` does (CPU s):")
    for step, seconds in steps.items():
        print(f"  {step}: {seconds:.2f}")
    print(f"  total: {sum(steps.values()):.2f}")


if __name__ == "__main__":
    main()
