"""Cost counters: the same ones bench/native/main.cc uses, from Python.

Phase(): wall seconds, user and system CPU seconds of this process and, when
the CPU has a PMU, user-space instructions of this thread (perf_event_open).
Virtual machines without a PMU driver (e.g. Firecracker) give instructions
= -1; CPU time is the fallback measure then.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import platform
import resource
import time
from dataclasses import asdict, dataclass

_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}
_PERF_TYPE_HARDWARE, _PERF_COUNT_HW_INSTRUCTIONS = 0, 1
_PERF_TYPE_SOFTWARE, _PERF_COUNT_SW_TASK_CLOCK = 1, 1
_IOC_ENABLE, _IOC_DISABLE, _IOC_RESET = 0x2400, 0x2401, 0x2403
_ATTR_SIZE = 64                     # PERF_ATTR_SIZE_VER0
_DISABLED, _EXCLUDE_KERNEL, _EXCLUDE_HV = 1 << 0, 1 << 5, 1 << 6


def open_counter(kind: int = _PERF_TYPE_HARDWARE,
                 config: int = _PERF_COUNT_HW_INSTRUCTIONS) -> int:
    """A disabled perf counter of this thread (user space only); -1 if unavailable."""
    number = _PERF_EVENT_OPEN.get(platform.machine())
    if number is None:
        return -1
    # struct perf_event_attr: u32 type, u32 size, u64 config, u64 sample_period,
    # u64 sample_type, u64 read_format, u64 flag bits, ...
    attr = (ctypes.c_uint64 * (_ATTR_SIZE // 8))()
    attr[0] = kind | (_ATTR_SIZE << 32)
    attr[1] = config
    attr[5] = _DISABLED | _EXCLUDE_KERNEL | _EXCLUDE_HV
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fd = libc.syscall(ctypes.c_long(number), ctypes.byref(attr), ctypes.c_int(0),
                      ctypes.c_int(-1), ctypes.c_int(-1), ctypes.c_ulong(0))
    return int(fd) if fd >= 0 else -1


@dataclass
class PhaseCost:
    wall_s: float
    user_s: float
    system_s: float
    instructions: int       # -1: no hardware counter

    def to_dict(self) -> dict:
        return asdict(self)


class Phase:
    """Measure a phase: `with Phase() as p: ...; p.cost`."""

    def __init__(self) -> None:
        self._fd = open_counter()
        self.cost: PhaseCost | None = None

    def __enter__(self) -> "Phase":
        usage = resource.getrusage(resource.RUSAGE_SELF)
        self._start = (time.perf_counter(), usage.ru_utime, usage.ru_stime)
        if self._fd >= 0:
            fcntl.ioctl(self._fd, _IOC_RESET, 0)
            fcntl.ioctl(self._fd, _IOC_ENABLE, 0)
        return self

    def __exit__(self, *exc) -> None:
        instructions = -1
        if self._fd >= 0:
            fcntl.ioctl(self._fd, _IOC_DISABLE, 0)
            instructions = int.from_bytes(os.read(self._fd, 8), "little")
            os.close(self._fd)
            self._fd = -1
        usage = resource.getrusage(resource.RUSAGE_SELF)
        wall0, user0, sys0 = self._start
        self.cost = PhaseCost(time.perf_counter() - wall0, usage.ru_utime - user0,
                              usage.ru_stime - sys0, instructions)
