"""A Dask cluster of real processes on this machine: a `dask scheduler` and
N `dask worker --preload harness.sweeps.executors` processes (one thread
each, each with its warm cell server), started and stopped around a block.
What a user starts by hand on a cluster, for the bench and the tests."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def dask_processes(workers: int, workdir: Path) -> Iterator[str]:
    """Yield the scheduler's address once `workers` workers have joined;
    stop every process afterwards (their output goes to workdir/dask.log)."""
    from dask.distributed import Client

    workdir.mkdir(parents=True, exist_ok=True)
    scheduler_file = workdir / "scheduler.json"
    scheduler_file.unlink(missing_ok=True)
    common = ["--scheduler-file", str(scheduler_file), "--no-dashboard"]
    with (workdir / "dask.log").open("wb") as log:
        procs = [subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host",
                                   "127.0.0.1", "--port", "0", *common],
                                  stdout=log, stderr=log, env=os.environ.copy())]
        try:
            deadline = time.monotonic() + 60
            while not scheduler_file.is_file() and time.monotonic() < deadline:
                time.sleep(0.2)
            procs += [subprocess.Popen([sys.executable, "-m", "dask", "worker", "--nthreads", "1",
                                        "--nworkers", "1", "--preload", "harness.sweeps.executors",
                                        "--host", "127.0.0.1", *common],
                                       stdout=log, stderr=log, env=os.environ.copy())
                      for _ in range(workers)]
            with Client(scheduler_file=str(scheduler_file), timeout=60) as client:
                client.wait_for_workers(workers, timeout=120)
                address = client.scheduler.address
            yield address
        finally:
            for proc in reversed(procs):
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
