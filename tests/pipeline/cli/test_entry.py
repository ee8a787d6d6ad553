"""The command's entry point: what it settles before anything is imported."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2,
                    reason="threads counted in /proc, OpenBLAS's pool needs two cores")
def test_the_command_loads_numpy_with_one_openblas_thread():
    """A run's workers are threads of the command's process, one per core:
    OpenBLAS's own pool of a thread per core fought them (a 123 x 123 solve
    took up to 70 ms beside running kernels, 0.2 ms on one thread)."""
    count = ("import os\nimport numpy\n"
             "print(os.environ.get('OPENBLAS_NUM_THREADS'), len(os.listdir('/proc/self/task')))")
    threads = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS")  # a Dask nanny sets
    env = {k: v for k, v in os.environ.items() if k not in threads}  # them in its own process (another test's cluster)
    plain = subprocess.run([sys.executable, "-c", count], env=env, capture_output=True, text=True, check=True)
    assert plain.stdout.split() != ["None", "1"]  # numpy alone starts OpenBLAS's threads: the check can fail
    # the command's own modules stand aside: what its entry point settles, then numpy as the command loads it
    stub = ("import sys, types\nfrom boardsweep.pipeline.cli import entry\n"
            "sys.modules['boardsweep.pipeline.cli.commands'] = types.SimpleNamespace(command_line=lambda: exec("
            f"{count!r}))\nentry.command_line()")
    out = subprocess.run([sys.executable, "-c", stub], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "1"], out.stdout + out.stderr


def test_a_users_openblas_setting_is_kept():
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "3"}
    code = "from boardsweep.pipeline.cli import entry\nentry.one_blas_thread()\nimport os\nprint(os.environ['OPENBLAS_NUM_THREADS'])"
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.strip() == "3"
