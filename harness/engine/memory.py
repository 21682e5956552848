"""The simulation processes' heap on transparent huge pages.

A large fabric's events touch more memory than the caches hold, and on
virtual machines each miss in the translation caches (a page-table walk in
the guest and in the host) costs as much as the miss itself. glibc (2.35 and
later) puts its heap on transparent huge pages when the tunable
`glibc.malloc.hugetlb=1` is set, which cuts those misses by 512x per mapped
region. Measured (docs/performance/scaling.md, "Huge pages"): +5 % at 32
hosts and +19 % at 512 on an Intel virtual machine, +27 % at 32 hosts on
another, nothing lost on an AMD one. Where to put its heap changes no
result: the same scenario and seed give byte-identical tables either way.

glibc reads its tunables once, when a process starts, so the `harness`
command re-executes itself with the tunable set (`exec_with_huge_pages`,
called by harness.launcher before it imports anything heavy), and the
processes it starts (Dask cell servers) are given it in their environment
(`environment`). An older glibc
ignores a tunable it does not know. DDNN_HARNESS_HUGE_PAGES=0 turns this
off; the Python API (`import harness`) cannot, since its process has
started: set GLIBC_TUNABLES yourself there.
"""

from __future__ import annotations

import os
import sys
from typing import Mapping

from harness.config import environment as variables

HUGE_PAGES_ENV = "DDNN_HARNESS_HUGE_PAGES"
TUNABLE = "glibc.malloc.hugetlb"


def huge_pages_wanted(env: Mapping[str, str]) -> bool:
    """DDNN_HARNESS_HUGE_PAGES: unset or 1/true/yes/on -> on, 0/false/no/off -> off
    (the one rule of every switch: harness.config.environment.flag)."""
    return variables.flag(HUGE_PAGES_ENV, env)


def _tunable(env: Mapping[str, str]) -> str | None:
    """The huge-page tunable's value in env's GLIBC_TUNABLES (None: not set)."""
    for item in env.get("GLIBC_TUNABLES", "").split(":"):
        name, _, value = item.partition("=")
        if name == TUNABLE:
            return value
    return None


#: "PID:epoch seconds" of the `harness` program's start (harness.launcher),
#: read by the process it names: its start-up is counted from there.
STARTED_ENV = "DDNN_HARNESS_STARTED"


def started_at() -> float | None:
    """When the `harness` program of this process started (epoch seconds),
    or None: another process's mark (a child's) or none (not started by it)."""
    pid, _, at = os.environ.get(STARTED_ENV, "").partition(":")
    try:
        return float(at) if pid == str(os.getpid()) else None
    except ValueError:
        return None


def environment(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with glibc's huge-page tunable added to GLIBC_TUNABLES, unless
    huge pages are not wanted or the user set that tunable (to any value)."""
    out = dict(env)
    if not sys.platform.startswith("linux") or not huge_pages_wanted(env) \
            or _tunable(env) is not None:
        return out
    out["GLIBC_TUNABLES"] = ":".join(filter(None, [out.get("GLIBC_TUNABLES"), f"{TUNABLE}=1"]))
    return out


def heap_on_huge_pages() -> bool:
    """Whether this process started with the tunable on (for the manifest)."""
    return _tunable(os.environ) == "1"


def exec_with_huge_pages() -> None:
    """Replace this process with itself, the tunable set, when it is not set
    yet (once: the new process finds it set). Returns when nothing is to do."""
    env = environment(os.environ)
    if env == os.environ:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, list(sys.orig_argv), env)
    except OSError:
        return   # cannot re-execute (no interpreter path): run as it is
