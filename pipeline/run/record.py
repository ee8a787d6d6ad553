"""What a run did: the numbers its summary, the Python API and the benchmarks read."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

__all__ = ["RunReport", "span_union"]


def span_union(spans: list, start: float, end: float) -> float:
    r"""Seconds of ``[start, end]`` that some span ``(a, b)`` covers:
    :math:`|\bigcup_i [a_i, b_i] \cap [start, end]|`."""
    total, reach = 0.0, start
    for a, b in sorted((max(a, start), min(b, end)) for a, b in spans):
        if b > reach:
            total += b - max(a, reach)
            reach = b
    return total


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
    compile_wait_s: float = 0.0  # of the wall time, the seconds some kernel compiled (:meth:`finish_compile`)
    compile_spans: list = field(default_factory=list)  # when they compiled: (start, end) in time.time()
    write_s: float = 0.0
    wall_s: float = 0.0
    dashboard: str = ""
    workers: int = 0
    pending: int = 0  # tasks to run when the run started: simulation tasks and exact tasks
    pending_exact: int = 0  # of them, exact tasks (chunks of grid points; :mod:`plan.tasks`' words)
    complete: bool = False
    repaired: list[str] = field(default_factory=list)
    max_in_flight: int = 0
    block: int = 0
    calibration: str = ""
    packing: str = ""  # why a complete store was left in the task layout ("" when packed or not asked)
    pack_s: float = 0.0
    on_packed_s: float = 0.0  # the caller's work on the workers once packed (the verdict: Hooks.on_packed)
    on_packed_failed: str = ""  # why that work failed (then done after the run), "" when it did not
    head_start: int = 0  # simulation tasks run by the warm-up thread while the run started (counted in tasks_run)
    records: list[dict] = field(default_factory=list)
    started_at: float = 0.0  # when the run began (time.time()): the phases of a run, for the benchmarks
    first_done_at: float = 0.0  # when the client heard of its first finished task (time.time(); 0: none)
    last_done_at: float = 0.0  # ... and of its last: what the client does after it is the run's tail

    def add(self, record: dict, head_start: bool = False) -> None:
        """Count one finished task's timing ``record`` (``head_start``: one the
        warm-up thread simulated while the run started)."""
        self.records.append(record)
        self.last_done_at = time.time()
        self.first_done_at = self.first_done_at or self.last_done_at
        self.kernel_s += record["kernel_s"]
        self.compile_s += record.get("compile_s", 0.0)
        self.compile_spans += [tuple(span) for span in record.get("compile_spans", ())]
        self.write_s += record["write_s"]
        if record["key"].startswith("exact-"):
            self.exact_run += 1
            self.exact_solves += record.get("solves", 0)
        else:
            self.tasks_run += 1
            self.head_start += head_start

    def finish_compile(self, start: float, end: float) -> None:
        """The compile time as the user waited for it: the seconds of the run,
        from ``start`` to ``end`` (``time.time()``), during which some kernel
        was compiling (or loading, or waited for) anywhere, the warm-up's
        included; workers compiling side by side count once, never summed."""
        self.compile_wait_s = span_union(self.compile_spans, start, end)
