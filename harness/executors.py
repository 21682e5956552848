"""Where sweep cells run: forked local processes, or a Dask cluster.

Every cell runs in a child process of its own: an ns-3 fatal error
(NS_FATAL_ERROR / NS_ABORT) ends that process, not the sweep. The local
executor loads ns-3 once in the parent and forks a child per cell, so a cell
pays no import or library-load cost; concurrent.futures' pools cannot be
used for this (a crashed worker breaks the whole pool, a task cannot be
killed on a wall-clock limit, and max_tasks_per_child refuses fork).

Both executors end with the same cell directory, written by write_run_dir
(temporary name, then rename): local children write it directly; Dask tasks
run the cell in a subprocess on the worker and ship the files back, so the
workers need no shared filesystem.
"""

from __future__ import annotations

import ctypes
import io
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from dataclasses import dataclass
from multiprocessing import connection, get_context
from pathlib import Path
from typing import Callable

from harness.sweep import Cell


@dataclass(frozen=True)
class Task:
    cell: Cell
    out_dir: Path          # the cell's final directory
    log_file: Path         # the child's stderr (ns-3 fatal messages land here)
    timeout_s: float


@dataclass(frozen=True)
class Outcome:
    cell: Cell
    error: str | None      # None: the cell's directory is in place
    wall_s: float


OnDone = Callable[[Outcome], None]
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Linux: a child is killed when its parent dies, so a SIGKILLed sweep leaves
    no orphan cells behind to race a resumed one."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _redirect_stderr(log_file: Path) -> None:
    log_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), line_buffering=True)


def run_cell(cell: Cell, out_dir: Path) -> None:
    """Plan, run and write one cell (in the calling process)."""
    from harness.run import execute, plan, write_run_dir
    from harness.sweep import cell_json

    result = execute(plan(cell.scenario), progress=False, quiet=True)
    write_run_dir(result, out_dir, {"cell.json": cell_json(cell)})


def _log_tail(log_file: Path, lines: int = 15) -> str:
    try:
        text = log_file.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        return f"killed by signal {signal.Signals(-code).name}"
    if code == 133:
        return "exit code 133 (an ns-3 fatal error or abort)"
    return f"exit code {code}"


# --------------------------------------------------------------------------
# local: fork from a parent that has ns-3 loaded


def _child(task: Task, conn) -> None:
    _die_with_parent()
    _redirect_stderr(task.log_file)
    try:
        run_cell(task.cell, task.out_dir)
        conn.send(None)
    except BaseException:  # report anything, including SystemExit from deep code
        conn.send(traceback.format_exc())
    finally:
        conn.close()
        os._exit(0)  # no atexit / ns-3 static destructors in a forked child


# A known-good network with every kind of object a cell builds (the cells'
# own scenarios could hit an ns-3 abort, which would end the sweep here).
WARM_UP = ["run.duration=0.001", "run.warmup=0", "run.cooldown=0", "training.enabled=true",
           'training.profile="resnet50-like-2MB"', "training.workers=2"]


def _warm_up() -> None:
    """Build and run 1 ms of a small network here, once: cppyy compiles its call
    wrappers on first use (~1 s), and forked children inherit them compiled."""
    from harness.config import load_scenario
    from harness.run import execute, plan

    execute(plan(load_scenario(None, WARM_UP)), progress=False, quiet=True)


def run_local(tasks: list[Task], jobs: int, on_done: OnDone, warm_up: bool = True) -> None:
    """Run the tasks, at most `jobs` at a time, each in a child forked from this
    process (ns-3 loaded here first). Calls on_done as each ends."""
    from harness import ns3

    ns3.load(quiet=True)  # compiled and loaded once; children inherit it
    if warm_up and tasks:
        _warm_up()
    ctx = get_context("fork")
    pending = list(reversed(tasks))
    running: dict = {}  # sentinel -> (process, conn, task, start)
    while pending or running:
        while pending and len(running) < jobs:
            task = pending.pop()
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(task, send), daemon=False)
            proc.start()
            send.close()
            running[proc.sentinel] = (proc, recv, task, time.monotonic())
        deadline = min(start + t.timeout_s for _, _, t, start in running.values())
        ready = connection.wait(list(running), timeout=max(0.0, deadline - time.monotonic()))
        now = time.monotonic()
        for sentinel in list(running):
            proc, recv, task, start = running[sentinel]
            if sentinel in ready:
                message = recv.recv() if recv.poll() else None
                proc.join()
                if message is None and proc.exitcode != 0:
                    message = f"cell process died: {_describe_exit(proc.exitcode)}"
                    tail = _log_tail(task.log_file)
                    message += f"\n{tail}" if tail else ""
                elif message is None and not (task.out_dir / "summary.json").is_file():
                    message = "cell process ended without writing its results"
            elif now >= start + task.timeout_s:
                proc.kill()
                proc.join()
                message = f"timeout: over the wall-clock limit of {task.timeout_s:g} s"
            else:
                continue
            recv.close()
            del running[sentinel]
            on_done(Outcome(task.cell, message, now - start))


# --------------------------------------------------------------------------
# Dask: a task runs the cell in a subprocess on the worker, returns its files


def _dask_task(cell: Cell, timeout_s: float) -> tuple[str | None, dict[str, bytes]]:
    with tempfile.TemporaryDirectory(prefix="ddnn-cell-") as tmp:
        out = Path(tmp) / "run"
        log = Path(tmp) / "stderr.log"
        with open(log, "wb") as err:
            try:
                proc = subprocess.run(
                    [sys.executable, "-m", "harness.executors", str(out)],
                    input=pickle.dumps(cell), stdout=subprocess.PIPE, stderr=err,
                    timeout=timeout_s, preexec_fn=_die_with_parent)
            except subprocess.TimeoutExpired:
                return f"timeout: over the wall-clock limit of {timeout_s:g} s", {}
        if proc.returncode != 0 or not (out / "summary.json").is_file():
            tail = _log_tail(log)
            return (f"cell process died: {_describe_exit(proc.returncode)}"
                    + (f"\n{tail}" if tail else "")), {}
        return None, {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}


def _install_files(files: dict[str, bytes], out_dir: Path) -> None:
    """A cell directory from shipped files: temporary name, then rename."""
    tmp = out_dir.parent / f".{out_dir.name}.tmp-{os.getpid()}"
    tmp.mkdir(parents=True)
    for name, data in files.items():
        (tmp / name).write_bytes(data)
    if out_dir.exists():  # finished meanwhile by someone else: same content
        import shutil
        shutil.rmtree(tmp)
        return
    os.replace(tmp, out_dir)


def run_dask(tasks: list[Task], jobs: int, scheduler: str | None, on_done: OnDone) -> None:
    """Run the tasks on a Dask cluster: `scheduler` is its address; None starts
    a LocalCluster of `jobs` single-threaded worker processes."""
    from dask.distributed import Client, LocalCluster, as_completed

    from harness import ns3

    ns3.build_modules(quiet=True)  # compile once here, not in every worker at once
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                               dashboard_address=None)
    client = Client(scheduler or cluster)
    try:
        started = time.monotonic()
        # a fresh key per attempt: a long-lived scheduler must not hand back an
        # earlier attempt's (failed) result
        futures = {client.submit(_dask_task, t.cell, t.timeout_s, pure=False,
                                 key=f"cell-{t.cell.id}-{uuid.uuid4().hex[:8]}"): t
                   for t in tasks}
        for future in as_completed(futures):
            task = futures[future]
            try:
                error, files = future.result()
            except Exception as e:  # the worker itself failed
                error, files = f"dask task failed: {e!r}", {}
            if error is None:
                _install_files(files, task.out_dir)
            on_done(Outcome(task.cell, error, time.monotonic() - started))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _main(argv: list[str]) -> int:
    """`python -m harness.executors OUT_DIR` with a pickled Cell on stdin."""
    cell = pickle.loads(sys.stdin.buffer.read())
    run_cell(cell, Path(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
