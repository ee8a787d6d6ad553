"""What a run did: the numbers its summary, the Python API and the benchmarks read."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RunReport", "HEAD_START"]

#: The name under which the tasks of the warm-up thread's head start are counted (:meth:`RunReport.add`).
HEAD_START = "head start"


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
    compile_wait_s: float = 0.0  # the compile time the user waited for (:meth:`finish_compile`)
    compile_by_worker: dict[str, float] = field(default_factory=dict)  # compile_s per worker that ran tasks
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

    def add(self, record: dict, worker: str | None = None) -> None:
        """Count one finished task's timing ``record`` (from a worker, named in
        its ``worker`` entry, or from ``worker`` where given)."""
        self.records.append(record)
        self.kernel_s += record["kernel_s"]
        self.compile_s += record.get("compile_s", 0.0)
        self.write_s += record["write_s"]
        name = worker or str(record.get("worker", ""))
        self.compile_by_worker[name] = self.compile_by_worker.get(name, 0.0) + record.get("compile_s", 0.0)
        if record["key"].startswith("exact-"):
            self.exact_run += 1
            self.exact_solves += record.get("solves", 0)
        else:
            self.tasks_run += 1
            self.head_start += worker == HEAD_START

    def finish_compile(self, warm_s: float) -> None:
        """Set the compile time as the user waited for it: the warm-up's ``warm_s``
        while the run started, then the longest any one worker spent compiling
        (workers compile side by side, so their times overlap and are not added):
        :math:`w + \\max_k \\sum_{t \\in k} c_t` over workers :math:`k` and their tasks :math:`t`."""
        self.warm_s = warm_s
        self.compile_wait_s = warm_s + max(self.compile_by_worker.values(), default=0.0)
