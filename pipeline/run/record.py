"""What a run did: the numbers its summary, the Python API and the benchmarks read."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RunReport"]


@dataclass
class RunReport:
    """What a run did (for the summary and the benchmark)."""

    store: str
    tasks_total: int
    tasks_run: int = 0
    exact_run: int = 0  # exact tasks (chunks of grid points) run
    exact_solves: int = 0  # exact solves those tasks made (points sharing an answer share a solve)
    points_per_task: int = 1  # grid points per task (at most)
    kernel_s: float = 0.0  # simulating and solving, summed over tasks (compilation apart)
    compile_s: float = 0.0  # compiling kernels or loading them from numba's cache, summed over tasks
    warm_s: float = 0.0  # the same while the run started, before the tasks (workers that are threads here)
    write_s: float = 0.0
    wall_s: float = 0.0
    dashboard: str = ""
    workers: int = 0
    pending: int = 0  # tasks to run when the run started: simulation tasks and exact solves
    pending_exact: int = 0  # of them, exact solves
    complete: bool = False
    repaired: list[str] = field(default_factory=list)
    max_in_flight: int = 0
    block: int = 0
    calibration: str = ""
    packing: str = ""  # why a complete store was left in the task layout ("" when packed or not asked)
    pack_s: float = 0.0
    head_start: int = 0  # simulation tasks run by the warm-up thread while the run started (counted in tasks_run)
    records: list[dict] = field(default_factory=list)
