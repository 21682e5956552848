"""A failed cell in words: one line for the summary's `error` column (ns-3's
own message, a Python error's, or how the cell's process ended) and the
lines of its log worth keeping beside it. harness.sweeps.executors reports
every cell that failed with these."""

from __future__ import annotations

import re
import signal

from harness.config.errors import ConfigError

# An ns-3 fatal error (NS_FATAL_ERROR, NS_ASSERT_MSG) prints `msg="...", file=...,
# line=...`, with the simulated time and the node between them once a simulator
# exists (`msg="...", +0.520000000s 5 file=...`), then the wheel's crash
# handler prints a gdb backtrace of every thread.
_NS3_MESSAGE = re.compile(r'msg="(.*)", (?:\S+ ){0,2}file=(\S+), line=(\d+)')
_BACKTRACE_START = re.compile(r"^\s*\*\*\* Break \*\*\*|^Thread \d+ \(|^#\d+ ")


def _without_backtrace(lines: list[str]) -> list[str]:
    """The lines before a gdb backtrace (all of them if there is none)."""
    for i, line in enumerate(lines):
        if _BACKTRACE_START.search(line):
            return lines[:i]
    return lines


def crash_message(how: str, log_text: str) -> str:
    """One line for a cell process that died: ns-3's own message when it
    aborted (msg="..."), else the last line it printed before any backtrace."""
    lines = log_text.strip().splitlines()
    for line in lines:
        m = _NS3_MESSAGE.search(line)
        if m:
            return f"ns-3 fatal error: {m.group(1)} ({how})"
    before = [line.strip() for line in _without_backtrace(lines) if line.strip()]
    return f"cell process died: {how}" + (f": {before[-1]}" if before else "")


def process_failure(code: int | None, log_text: str) -> tuple[str, str]:
    """(message, detail) of a cell process that ended with exit status
    `code` without a reply, from its stderr `log_text`: crash_message, and
    the log's last 15 lines before any backtrace."""
    detail = "\n".join(_without_backtrace(log_text.strip().splitlines())[-15:])
    return crash_message(_describe_exit(code), log_text), detail


def error_message(error: BaseException) -> str:
    """A Python failure in one line: a ConfigError's own text (it names the
    field), else the exception's type and message."""
    if isinstance(error, ConfigError):
        return str(error)
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        return f"killed by signal {signal.Signals(-code).name}"
    if code == 133:
        return "exit code 133 (an ns-3 fatal error or abort)"
    return f"exit code {code}"
