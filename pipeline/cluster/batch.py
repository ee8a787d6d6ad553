"""Worker jobs on a batch system (SLURM, PBS, SGE, LSF, HTCondor, Moab, OAR)
through dask-jobqueue, for ``boardsweep run SPEC --cluster slurm --jobs N``.

Everything about the jobs (queue, cores, memory, walltime, extra directives,
scheduler options) comes from dask-jobqueue's own ``jobqueue.<system>.*``
configuration: a Dask config file or ``DASK_JOBQUEUE__SLURM__CORES=1`` and
the like.  boardsweep adds what a sweep needs around it:

* the run waits for its first worker, saying so, and gives up after
  ``start_timeout`` seconds with one line naming the batch system's reason
  (SLURM: squeue's reason column, e.g. ``PartitionDown``);
* a job that ends early (cancelled, walltime, node lost) is resubmitted; its
  unfinished tasks run again elsewhere, so it costs time, never data;
* every job the run submitted is cancelled when the run ends, however it ends
  (success, error, Ctrl-C, SIGTERM), first by dask-jobqueue and then again by
  job id, so that a failed close leaves none behind.

Only the SLURM path is tested against a real batch system
(``tests/pipeline/cluster/test_slurm.py``); the other systems go through the
same dask-jobqueue calls, and their reason commands are best effort.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Callable

from ..errors import BatchUnavailable, JobsNotStarted

__all__ = ["SYSTEMS", "Jobs", "parse_jobs", "check_available", "start_jobs", "wait_for_worker", "signals_end_run"]

#: ``--cluster`` name -> (dask-jobqueue class, submit command).
SYSTEMS = {
    "slurm": ("SLURMCluster", "sbatch"),
    "pbs": ("PBSCluster", "qsub"),
    "sge": ("SGECluster", "qsub"),
    "lsf": ("LSFCluster", "bsub"),
    "htcondor": ("HTCondorCluster", "condor_submit"),
    "moab": ("MoabCluster", "msub"),
    "oar": ("OARCluster", "oarsub"),
}

#: The command that says why a job waits, and the lines of its output that tell it
#: (None: every line).  ``{ids}`` is the job ids, comma-separated for SLURM.
REASONS = {
    "slurm": (["squeue", "-h", "-o", "job %i %T (%r)", "-j", "{ids}"], None),
    "pbs": (["qstat", "-f", "{ids}"], ("job_state", "comment")),
    "sge": (["qstat", "-j", "{ids}"], ("scheduling info", "error reason")),
    "lsf": (["bjobs", "-p", "{ids}"], None),
    "htcondor": (["condor_q", "-af", "ClusterId", "JobStatus", "HoldReason", "{ids}"], None),
    "moab": (["checkjob", "{ids}"], ("State:", "BLOCK MSG", "NOTE")),
    "oar": (["oarstat", "-f", "-j", "{ids}"], ("state", "message")),
}

#: The batch cluster's dashboard, where neither --dashboard-address nor Dask's configuration names one:
#: a free port on every interface (as Dask's own default listens), never a fixed 8787 that another
#: program may hold (distributed then warns "Port 8787 is already in use" into the run's output).
FREE_DASHBOARD_PORT = ":0"

#: Seconds between checks that the wanted jobs are there (lost ones are resubmitted).
KEEP_JOBS_EVERY_S = 5.0
#: Seconds between two queries of the batch system while waiting for the first worker.
ASK_REASON_EVERY_S = 5.0


@dataclass(frozen=True)
class Jobs:
    """How many worker jobs: ``minimum == maximum`` is a fixed count, else adaptive."""

    minimum: int
    maximum: int

    @property
    def adaptive(self) -> bool:
        return self.maximum > self.minimum

    def __str__(self) -> str:
        return f"{self.minimum}:{self.maximum}" if self.adaptive else str(self.minimum)


def parse_jobs(text: str | int) -> Jobs:
    """``N`` (N jobs) or ``MIN:MAX`` (adaptive between MIN and MAX, MIN >= 1)."""
    parts = str(text).split(":")
    try:
        low, high = (int(parts[0]), int(parts[-1])) if len(parts) <= 2 else (0, -1)
    except ValueError:
        low, high = 0, -1
    if len(parts) > 2 or low < 1 or high < low:
        raise BatchUnavailable(f"--jobs {text}: expected N or MIN:MAX with 1 <= MIN <= MAX (e.g. 4 or 1:8)")
    return Jobs(low, high)


def check_available(system: str) -> None:
    """Raise :class:`BatchUnavailable` unless ``--cluster system`` can start jobs here."""
    if system not in SYSTEMS:
        raise BatchUnavailable(f"--cluster {system}: expected one of {', '.join(SYSTEMS)}")
    try:
        _import_jobqueue()
    except ImportError:
        raise BatchUnavailable(
            f"--cluster {system} needs dask-jobqueue: pip install 'boardsweep[hpc]'") from None
    import dask.config

    command = SYSTEMS[system][1]
    if shutil.which(command) is None:
        raise BatchUnavailable(f"--cluster {system}: the {command} command is not on PATH; run boardsweep "
                               f"where {system} jobs can be submitted (e.g. a login node)")
    missing = [k for k in ("cores", "memory") if dask.config.get(f"jobqueue.{system}.{k}", None) is None]
    if missing:
        raise BatchUnavailable(
            f"--cluster {system} needs {' and '.join(f'jobqueue.{system}.{k}' for k in missing)} in Dask's "
            f"configuration (a Dask config file, or e.g. DASK_JOBQUEUE__{system.upper()}__CORES=1 "
            f"DASK_JOBQUEUE__{system.upper()}__MEMORY=2GiB)")


def _import_jobqueue():
    """``dask_jobqueue``, imported without its side effect: its ``runner``
    module replaces the process's SIGINT handler with ``sys.exit()`` on import,
    which turned Ctrl-C into a silent exit with status 0; the handler that was
    there before is put back."""
    import signal
    import threading

    previous = signal.getsignal(signal.SIGINT)
    import dask_jobqueue

    if previous is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, previous)
    return dask_jobqueue


@dataclass
class _Submitted:
    """What the run's jobs did: their ids, submission errors and cancel command."""

    system: str
    ids: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cancel: str = ""


def _recording(job_cls, submitted: _Submitted):
    """``job_cls`` that records each job's id and any submission error."""

    class Recorded(job_cls):
        async def start(self):
            try:
                await super().start()
            except Exception as exc:  # noqa: BLE001 - reported by the waiting run, in one line
                from distributed.core import Status

                submitted.errors.append(_submit_error(exc))
                self.status = Status.failed  # so that the cluster's close accepts it
                raise
            finally:
                submitted.cancel = self.cancel_command
                if self.job_id and self.job_id not in submitted.ids:
                    submitted.ids.append(self.job_id)

    Recorded.__name__ = Recorded.__qualname__ = job_cls.__name__
    return Recorded


def _submit_error(exc: BaseException) -> str:
    """dask-jobqueue's error for a failed submission, as the submit command's own words."""
    text = str(exc)
    if "stderr:" in text:  # "Command exited with non-zero exit code ... stderr:\n<what sbatch said>"
        said = [line.strip() for line in text.split("stderr:", 1)[1].splitlines() if line.strip()]
        command = text.split("Command:", 1)[-1].split()[0] if "Command:" in text else "the submit command"
        return f"{command} said: {'; '.join(said) or 'nothing'}"
    return " ".join(text.split()) or type(exc).__name__


def start_jobs(stack: ExitStack, system: str, jobs: Jobs, dashboard_address: str | None = None):
    """Start the dask-jobqueue cluster for ``system`` with ``jobs`` worker jobs
    (closed, and every job it submitted cancelled, by ``stack``).

    Returns the cluster and the record of its jobs, for :func:`wait_for_worker`.
    """
    import dask.config

    check_available(system)
    cls = getattr(_import_jobqueue(), SYSTEMS[system][0])
    submitted = _Submitted(system)
    stack.callback(_cancel, submitted)  # runs after the cluster's own close, whatever happened
    options = dict(dask.config.get(f"jobqueue.{system}.scheduler-options", None) or {})
    if dashboard_address:
        options["dashboard_address"] = dashboard_address
    options.setdefault("dashboard_address", FREE_DASHBOARD_PORT)
    try:
        cluster = cls(job_cls=_recording(cls.job_cls, submitted), scheduler_options=options)
    except ValueError as exc:  # a setting dask-jobqueue refuses
        raise BatchUnavailable(f"--cluster {system}: {' '.join(str(exc).split())}") from None
    stack.enter_context(cluster)
    if jobs.adaptive:
        cluster.adapt(minimum_jobs=jobs.minimum, maximum_jobs=jobs.maximum)
    else:
        cluster.scale(jobs=jobs.minimum)
    _keep_jobs(stack, cluster)
    return cluster, submitted


def _keep_jobs(stack: ExitStack, cluster) -> None:
    """Every few seconds, resubmit wanted jobs that are gone (cancelled, walltime)."""
    from tornado.ioloop import PeriodicCallback

    keeper = PeriodicCallback(cluster._correct_state, KEEP_JOBS_EVERY_S * 1000)
    cluster.loop.add_callback(keeper.start)

    def stop() -> None:
        try:
            cluster.loop.add_callback(keeper.stop)
        except RuntimeError:  # the loop is already closed
            pass

    stack.callback(stop)


def wait_for_worker(client, submitted: _Submitted, timeout: float,
                    on_wait: Callable[[str], None] | None = None) -> None:
    """Wait until a worker has joined; raise :class:`JobsNotStarted` naming the
    batch system's reason when none has after ``timeout`` seconds, or at once
    when submitting a job failed."""
    t0 = time.monotonic()
    state, asked = "submitting", -ASK_REASON_EVERY_S
    while not client.nthreads():
        waited = time.monotonic() - t0
        if submitted.errors:
            raise JobsNotStarted(f"--cluster {submitted.system}: submitting a worker job failed: "
                                 f"{submitted.errors[0]}")
        if submitted.ids and waited - asked >= ASK_REASON_EVERY_S:
            state, asked = pending_reason(submitted.system, submitted.ids), waited
        if waited > timeout:
            raise JobsNotStarted(
                f"no {submitted.system} worker job started within {timeout:g} s: {state}; the jobs are "
                f"cancelled (raise --start-timeout to wait longer, or change jobqueue.{submitted.system}.* "
                "settings such as the queue)")
        if on_wait:
            jobs = f"job(s) {', '.join(submitted.ids)}: {state}" if submitted.ids else "job(s) being submitted"
            on_wait(f"waiting for the first worker: {submitted.system} {jobs} ({waited:.0f} s of {timeout:g} s)")
        time.sleep(0.5)


def pending_reason(system: str, ids: list[str]) -> str:
    """What the batch system says about jobs ``ids``, in one line (best effort)."""
    command, keep = REASONS[system]
    joined = ",".join(ids) if system == "slurm" else None
    args: list[str] = []
    for part in command:
        if part == "{ids}":
            args += [joined] if joined else list(ids)
        else:
            args.append(part)
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"queued ({args[0]} could not tell why: {exc})"
    lines = [" ".join(line.split()) for line in (out.stdout + out.stderr).splitlines() if line.strip()]
    if keep:
        lines = [line for line in lines if any(k.lower() in line.lower() for k in keep)]
    return "; ".join(lines)[:300] or "queued"


def _cancel(submitted: _Submitted) -> None:
    """Cancel every job the run submitted (those already gone are ignored)."""
    if not submitted.ids:
        return
    command = shlex.split(submitted.cancel or "true")
    try:
        subprocess.run([*command, *submitted.ids], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        pass


class signals_end_run:
    """With worker jobs, SIGTERM and SIGHUP end the run like Ctrl-C: the jobs are cancelled."""

    def __init__(self, batch: str | None) -> None:
        self.batch, self.saved = batch, {}

    def __enter__(self) -> "signals_end_run":
        import signal
        import threading

        if self.batch and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGHUP):
                self.saved[sig] = signal.signal(sig, _interrupt)
        return self

    def __exit__(self, *exc) -> None:
        import signal

        for sig, handler in self.saved.items():
            signal.signal(sig, handler)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")
