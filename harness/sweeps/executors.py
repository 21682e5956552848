"""Where sweep cells run: forked local processes, or a Dask cluster.

Every cell runs in a child process of its own: an ns-3 fatal error
(NS_FATAL_ERROR / NS_ABORT) ends that process, not the sweep. The local
executor loads ns-3 once in the parent and forks a child per cell, so a cell
pays no import or library-load cost; concurrent.futures' pools cannot be
used for this (a crashed worker breaks the whole pool, a task cannot be
killed on a wall-clock limit, and max_tasks_per_child refuses fork).

The Dask executor does the same on each worker: a worker keeps warm "cell
servers" (`python -m harness.sweeps.executors --serve`, one per worker thread,
started when the sweep begins), each of which loads ns-3 once and runs every
cell it is handed with run_local, i.e. in a child forked from it. (Not in the
worker process itself: Dask's worker processes are daemonic, which forbids
multiprocessing children, and multi-threaded, which makes fork unsafe.) So
the workers of the LocalCluster that run_dask starts need no process of
their own: they are threads of the sweep's process.

Both executors end with the same cell directory, written by write_run_dir
(temporary name, then rename): local children write it directly; Dask tasks
run the cell on their worker's server and ship the files back, so the
workers need no shared filesystem.
"""

from __future__ import annotations

import atexit
import ctypes
import io
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid
from dataclasses import dataclass
from multiprocessing import connection, get_context
from pathlib import Path
from typing import Callable, Iterable

from harness.engine import memory
from harness.io import outdir
from harness.sweeps.cells import Cell, cell_json
from harness.sweeps.failures import error_message, process_failure
from harness.config.errors import ConfigError


@dataclass(frozen=True)
class Task:
    cell: Cell
    out_dir: Path          # the cell's final directory
    log_file: Path         # the child's stderr (ns-3 fatal messages land here)
    timeout_s: float


@dataclass(frozen=True)
class Outcome:
    cell: Cell
    error: str | None      # None: the cell's directory is in place; else one line
    wall_s: float
    detail: str | None = None  # behind the error: a traceback, ns-3's last output


#: Called as each task ends; may return more tasks to run (an adaptive
#: sweep's next seed of a point, harness.sweeps.sweeping): they go ahead of the tasks
#: not started yet, in the order given.
OnDone = Callable[[Outcome], "Iterable[Task] | None"]
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
    from harness.engine.simulation import execute, write_run_dir
    from harness.engine.planning import plan

    result = execute(plan(cell.scenario), progress=False, quiet=True)
    write_run_dir(result, out_dir, {"cell.json": cell_json(cell)})


# --------------------------------------------------------------------------
# local: fork from a parent that has ns-3 loaded


#: the signals that stop a sweep (Ctrl-C, and SIGTERM as `timeout` and batch
#: systems send it): the parent alone handles them
_STOPPING = {signal.SIGINT, signal.SIGTERM}


def _child(task: Task, conn) -> None:
    # Ctrl-C reaches the whole process group: the parent alone decides (it
    # stops the cells it runs, which then count as unfinished, not failed).
    # SIGINT was blocked across the fork, so none slips in before this.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)   # SIGTERM to the group, as Ctrl-C
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)
    _die_with_parent()
    _redirect_stderr(task.log_file)
    try:
        run_cell(task.cell, task.out_dir)
        conn.send(None)
    except BaseException as e:  # report anything, including SystemExit from deep code
        detail = traceback.format_exc()
        sys.stderr.write(detail)  # the cell's log keeps it too
        conn.send((error_message(e), detail))
    finally:
        conn.close()
        os._exit(0)  # no atexit / ns-3 static destructors in a forked child


# Known-good networks with every kind of object a cell builds, one per
# training architecture (the cells' own scenarios could hit an ns-3 abort,
# which would end the sweep here).
WARM_UP = ["run.duration=0.001", "run.warmup=0", "run.cooldown=0", "training.enabled=true",
           'training.profile="resnet50-like-2MB"', "training.workers=2"]


def warm_ups() -> list[list[str]]:
    """The warm-up scenario's overrides for each registered architecture."""
    from harness import training

    return [[*WARM_UP, f'training.architecture="{name}"']
            for name in training.ARCHITECTURES]


def _warm_up() -> None:
    """Build and run 1 ms of small networks here, once: cppyy compiles its call
    wrappers on first use (~0.6 s, and ~0.3 s more for a parameter-server
    job), and forked children inherit them compiled."""
    from harness.config.scenario import load_scenario
    from harness.engine.simulation import execute
    from harness.engine.planning import plan

    for overrides in warm_ups():
        execute(plan(load_scenario(None, overrides)), progress=False, quiet=True)


def run_local(tasks: list[Task], jobs: int, on_done: OnDone, warm_up: bool = True) -> None:
    """Run the tasks, at most `jobs` at a time, each in a child forked from this
    process (ns-3 loaded here first). Calls on_done as each ends (once the
    free cores have their next cells); the tasks it returns run next."""
    from harness.engine import ns3

    ns3.load(quiet=True)  # compiled and loaded once; children inherit it
    if warm_up and tasks:
        _warm_up()
    ctx = get_context("fork")
    pending = list(reversed(tasks))
    running: dict = {}  # sentinel -> (process, conn, task, start)
    try:
        _run_children(ctx, pending, running, jobs, on_done)
    except BaseException:  # Ctrl-C above all: stop the cells, they stay unfinished
        for proc, recv, task, _ in running.values():
            proc.kill()
            proc.join()
            recv.close()
            # what the killed child had begun to write (its own pid in the name)
            outdir.remove_leftovers(task.out_dir.parent)
        raise


def _run_children(ctx, pending: list[Task], running: dict, jobs: int, on_done: OnDone) -> None:
    while pending or running:
        _start_children(ctx, pending, running, jobs)
        deadline = min(start + t.timeout_s for _, _, t, start in running.values())
        ready = connection.wait(list(running), timeout=max(0.0, deadline - time.monotonic()))
        now = time.monotonic()
        ended: list[Outcome] = []
        for sentinel in list(running):
            proc, recv, task, start = running[sentinel]
            detail = None
            if sentinel in ready:
                message, detail = _reply(recv)
                proc.join()
                if message is None and proc.exitcode != 0:
                    message, detail = process_failure(proc.exitcode, _read_log(task.log_file))
                elif message is None and not (task.out_dir / "summary.json").is_file():
                    message = "cell process ended without writing its results"
            elif now >= start + task.timeout_s:
                proc.kill()
                proc.join()
                outdir.remove_leftovers(task.out_dir.parent)
                message = f"timeout: over the wall-clock limit of {task.timeout_s:g} s"
            else:
                continue
            recv.close()
            del running[sentinel]
            ended.append(Outcome(task.cell, message, now - start, detail))
        # the free cores take their next cells before on_done (an adaptive
        # sweep judges a point there) runs here in the parent
        _start_children(ctx, pending, running, jobs)
        for outcome in ended:
            pending.extend(reversed(list(on_done(outcome) or ())))


def _start_children(ctx, pending: list[Task], running: dict, jobs: int) -> None:
    while pending and len(running) < jobs:
        task = pending.pop()
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(task, send), daemon=False)
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
        try:
            proc.start()
            send.close()
            running[proc.sentinel] = (proc, recv, task, time.monotonic())
        finally:  # a Ctrl-C meanwhile is delivered here, the child known
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)


def _reply(recv) -> tuple[str | None, str | None]:
    """The child's (error, detail), or (None, None) if it sent nothing: it
    finished without error, or died. A dead child's pipe reads as EOF once
    nothing holds its end (ns-3's crash handler runs gdb, which holds it
    for a while): poll() is then true but there is no message."""
    try:
        reply = recv.recv() if recv.poll() else None
    except EOFError:
        reply = None
    return reply if reply is not None else (None, None)


def _read_log(log_file: Path) -> str:
    try:
        return log_file.read_text(errors="replace")
    except OSError:
        return ""


# --------------------------------------------------------------------------
# Dask: a task hands its cell to a warm cell server on its worker, which forks
# a child for it (run_local, as above), and returns the cell's files


def _serve() -> int:
    """`python -m harness.sweeps.executors --serve`: a cell server. Loads ns-3 and warms
    up once, then runs each pickled Task read from stdin with run_local (so in
    a child forked from here) and writes back its pickled Outcome, until EOF."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the sweep stops its servers itself
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed here or in a child must not reach the replies
    from harness.engine import ns3

    ns3.load(quiet=True)
    _warm_up()
    while True:
        try:
            task = pickle.load(sys.stdin.buffer)
        except EOFError:
            return 0
        outcomes: list[Outcome] = []
        run_local([task], 1, outcomes.append, warm_up=False)
        pickle.dump(outcomes[0], replies)
        replies.flush()


class _CellServer:
    """One `--serve` process, started here; its stderr (ns-3 loading, a crash
    of the server itself) goes to an unnamed temporary file."""

    def __init__(self) -> None:
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "harness.sweeps.executors", "--serve"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, preexec_fn=_die_with_parent,
                                     env=memory.environment(os.environ))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """End of input: the server exits; wait for it (so its CPU time is counted)."""
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()

    def run(self, task: Task) -> Outcome:
        start = time.monotonic()
        try:
            pickle.dump(task, self.proc.stdin)
            self.proc.stdin.flush()
            return pickle.load(self.proc.stdout)
        except (EOFError, OSError, pickle.UnpicklingError):
            self.proc.kill()
            self.log.seek(0)
            message, detail = process_failure(self.proc.wait(),
                                              self.log.read().decode(errors="replace"))
            return Outcome(task.cell, message.replace("cell process", "cell server"),
                           time.monotonic() - start, detail)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


class _CellServers:
    """The idle cell servers of this (Dask worker) process: a task takes one, or
    starts one if none is idle, and gives it back when it is done."""

    def __init__(self) -> None:
        self._idle: list[_CellServer] = []
        self._all: list[_CellServer] = []   # idle or busy, for kill()
        self._lock = threading.Lock()
        atexit.register(self.close)

    def _new(self) -> _CellServer:
        server = _CellServer()
        with self._lock:
            self._all.append(server)
        return server

    def close(self) -> None:
        with self._lock:
            servers, self._idle = self._idle, []
        for server in servers:
            server.close()

    def kill(self) -> None:
        """Ctrl-C: stop every server of this process now, idle or busy (their
        cells, forked children, die with them)."""
        with self._lock:
            servers, self._idle = self._all, []
            self._all = []
        for server in servers:
            if server.alive():
                server.kill()

    def start(self, n: int) -> None:
        with self._lock:
            missing = n - len(self._idle)
        started = [self._new() for _ in range(missing)]
        with self._lock:
            self._idle += started

    def _take(self) -> _CellServer:
        with self._lock:
            while self._idle:
                server = self._idle.pop()
                if server.alive():
                    return server
        return self._new()

    def run(self, task: Task) -> Outcome:
        server = self._take()
        outcome = server.run(task)
        if server.alive():
            with self._lock:
                self._idle.append(server)
        return outcome


_SERVERS = _CellServers()


def dask_setup(dask_worker) -> None:
    """Start one cell server per thread of a Dask worker ahead of its first task.
    Dask calls this when a worker starts with `dask worker --preload
    harness.sweeps.executors`; run_dask calls it on the workers of a given scheduler
    (a no-op where the preload did it). Without it a task starts a server."""
    _SERVERS.start(dask_worker.state.nthreads)


def _dask_task(cell: Cell, timeout_s: float
               ) -> tuple[str | None, dict[str, bytes], float, str | None]:
    with tempfile.TemporaryDirectory(prefix="ddnn-cell-") as tmp:
        out = Path(tmp) / "run"
        outcome = _SERVERS.run(Task(cell, out, Path(tmp) / "stderr.log", timeout_s))
        if outcome.error is not None:
            return outcome.error, {}, outcome.wall_s, outcome.detail
        return (None, {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()},
                outcome.wall_s, None)


def _install_files(files: dict[str, bytes], out_dir: Path) -> None:
    """A cell directory from shipped files: temporary name, then rename (if
    another attempt finished it meanwhile, that one stays: same content)."""
    def fill(tmp: Path) -> None:
        for name, data in files.items():
            (tmp / name).write_bytes(data)

    outdir.write_dir(out_dir, fill, existing="keep")


def check_scheduler(address: str, timeout_s: float = 5.0) -> None:
    """A Dask scheduler address that parses and answers, checked before a
    sweep creates its directory (dask's own client waits 30 s, then raises)."""
    import socket

    from distributed.comm.addressing import parse_address, parse_host_port

    shown = address if len(address) <= 80 else address[:77] + "..."
    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location, 8786)
    except (ValueError, TypeError) as e:
        raise ConfigError("--scheduler", f"{shown!r} is not a Dask scheduler address ({e}); "
                          "e.g. tcp://10.0.0.5:8786") from None
    if scheme not in ("tcp", "tls"):
        raise ConfigError("--scheduler", f"{shown!r}: scheme {scheme!r} cannot reach a "
                          "scheduler on another process; allowed: tcp://HOST:PORT, "
                          "tls://HOST:PORT")
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as e:
        raise ConfigError("--scheduler", f"no Dask scheduler answers at {shown} "
                          f"({e.strerror or e}); start one with `dask scheduler`, or leave "
                          "--scheduler out for a local cluster") from None


def run_dask(tasks: list[Task], jobs: int, scheduler: str | None, on_done: OnDone) -> None:
    """Run the tasks on a Dask cluster: `scheduler` is its address; None starts
    a LocalCluster of `jobs` single-threaded workers. The tasks on_done returns
    are submitted at once, ahead of those not started yet. Those are threads of this
    process (a worker only passes cells to a cell server and waits), and their
    servers are started first, so that loading ns-3 overlaps the cluster's start."""
    from dask.distributed import Client, LocalCluster, as_completed

    from harness.engine import ns3

    ns3.build_modules(quiet=True)  # compile once here, not in every server at once
    cluster = None
    if scheduler is None:
        _SERVERS.start(jobs)
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=False,
                               dashboard_address=None)
    client = Client(scheduler or cluster)
    try:
        if cluster is None:
            client.run(dask_setup)  # a no-op on workers started with the preload
        # a fresh key per attempt: a long-lived scheduler must not hand back an
        # earlier attempt's (failed) result
        def submit(task: Task, priority: int = 0):
            future = client.submit(_dask_task, task.cell, task.timeout_s, pure=False,
                                   priority=priority,
                                   key=f"cell-{task.cell.id}-{uuid.uuid4().hex[:8]}")
            futures[future] = task
            return future

        futures: dict = {}
        for t in tasks:
            submit(t)
        added = 0
        completed = as_completed(list(futures))
        for future in completed:
            task = futures[future]
            try:
                error, files, wall_s, detail = future.result()
            except Exception as e:  # the worker itself failed
                error, files, wall_s, detail = (f"dask task failed: {error_message(e)}", {},
                                                float("nan"), None)
            if error is None:
                _install_files(files, task.out_dir)
            # the tasks on_done adds go ahead of those not started yet
            for new in on_done(Outcome(task.cell, error, wall_s, detail)) or ():
                added += 1
                completed.add(submit(new, priority=added))
    except BaseException:  # Ctrl-C: stop the cells now (they stay unfinished)
        if cluster is not None:
            _SERVERS.kill()
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
            _SERVERS.close()


if __name__ == "__main__":
    if sys.argv[1:] != ["--serve"]:
        sys.exit("usage: python -m harness.sweeps.executors --serve  (a Dask worker's cell server)")
    from harness.sweeps.executors import _serve as serve  # pickled Outcomes name harness.sweeps.executors
    sys.exit(serve())
