"""The `harness` program's entry point. It puts the process's heap on huge
pages first (harness.engine.memory: the process re-executes itself once,
since glibc reads its tunables only at start-up), before the command line
and all it imports are loaded, so the re-execution costs a bare interpreter
start; then it hands over to harness.cli."""

from __future__ import annotations

import os
import signal
import sys
import time

from harness.config.errors import EXIT_BAD_INPUT, ConfigError
from harness.engine import memory


def main() -> None:
    # when the harness started, for its start-up time: before the re-execution
    # below (same process, same environment), and not when the shell forked
    # the process, which can be long before it ran the harness
    os.environ.setdefault(memory.STARTED_ENV, f"{os.getpid()}:{time.time()!r}")
    try:
        memory.exec_with_huge_pages()
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    # SIGTERM (how `timeout` and batch systems stop a job) is Ctrl-C: a sweep
    # writes its finished cells' tables and says how to resume, a run says it stopped
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    from harness import cli

    cli.main()
