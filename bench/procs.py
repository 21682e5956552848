"""Running a measured child process: wall time, CPU time and peak RSS of the
child (wait4), user-space instructions (perf stat, when the CPU has a PMU),
and how busy the rest of the machine was meanwhile."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass
class ProcessCost:
    wall_s: float
    user_s: float
    system_s: float
    max_rss_mib: float       # wait4's ru_maxrss
    time_max_rss_mib: float  # /usr/bin/time -f %M (-1 without it)
    instructions: int        # user space; -1 without a hardware counter
    other_busy_cores: float  # CPU used by other processes meanwhile, in cores
    load_1min: float         # load average when it started

    def to_dict(self) -> dict:
        return asdict(self)


def _busy_cpu_s() -> float:
    """CPU seconds all processes have used since boot, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def machine_busy_cores(sample_s: float = 2.0) -> float:
    """Cores busy over the next `sample_s` seconds (this process sleeps meanwhile)."""
    busy0, t0 = _busy_cpu_s(), time.perf_counter()
    time.sleep(sample_s)
    return (_busy_cpu_s() - busy0) / (time.perf_counter() - t0)


def wait_quiet(max_wait_s: float, threshold_cores: float = 0.5) -> dict:
    """Wait (at most max_wait_s) until other processes use < threshold_cores."""
    start = time.monotonic()
    busy = machine_busy_cores(2.0 if max_wait_s > 0 else 0.5)
    while busy >= threshold_cores and time.monotonic() - start < max_wait_s:
        busy = machine_busy_cores(5.0)
    return {"busy_cores": round(busy, 3), "waited_s": round(time.monotonic() - start, 1)}


@functools.cache
def perf_instructions_available() -> bool:
    """Does `perf stat -e instructions:u` count here? (Not in VMs without a PMU.)"""
    if shutil.which("perf") is None:
        return False
    proc = subprocess.run(["perf", "stat", "-e", "instructions:u", "-x,", "true"],
                          capture_output=True, text=True)
    first = proc.stderr.strip().split(",", 1)[0]
    return proc.returncode == 0 and first.isdigit()


def _temp_path(prefix: str) -> Path:
    fd, name = tempfile.mkstemp(prefix=prefix)
    os.close(fd)
    return Path(name)


def _time_rss_mib(path: Path) -> float:
    words = path.read_text().split()
    return int(words[-1]) / 1024 if words and words[-1].isdigit() else -1.0


def _perf_count(path: Path) -> int:
    for line in path.read_text().splitlines():
        parts = line.split(",")
        if len(parts) > 2 and parts[2].startswith("instructions") and parts[0].isdigit():
            return int(parts[0])
    return -1


def run(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
        timeout_s: float = 3600) -> tuple[ProcessCost, subprocess.CompletedProcess]:
    """Run `cmd` to completion and measure it. Raises on a non-zero exit."""
    perf_out = time_out = None
    if perf_instructions_available():
        perf_out = _temp_path("bench-perf-")
        cmd = ["perf", "stat", "-e", "instructions:u", "-x,", "-o", str(perf_out), "--", *cmd]
    if Path("/usr/bin/time").exists():
        time_out = _temp_path("bench-time-")
        cmd = ["/usr/bin/time", "-f", "%M", "-o", str(time_out), "--", *cmd]
    load = os.getloadavg()[0]
    busy0 = _busy_cpu_s()
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd)
        deadline = time.monotonic() + timeout_s
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        busy = _busy_cpu_s() - busy0
        out.seek(0)
        err.seek(0)
        completed = subprocess.CompletedProcess(cmd, proc.returncode,
                                                out.read().decode(errors="replace"),
                                                err.read().decode(errors="replace"))
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {completed.returncode}:\n"
                           f"{completed.stderr[-3000:]}")
    instructions = _perf_count(perf_out) if perf_out else -1
    time_rss = _time_rss_mib(time_out) if time_out else -1.0
    for path in (perf_out, time_out):
        if path:
            path.unlink(missing_ok=True)
    other = max(0.0, busy - usage.ru_utime - usage.ru_stime) / wall if wall > 0 else 0.0
    return ProcessCost(wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss / 1024,
                       time_rss, instructions, round(other, 3), load), completed
