"""Progress of long work where no terminal shows a bar: a sweep or a run
started in the background (`harness sweep quick -j 2 > sweep.out 2>&1 &`),
by `timeout` or by a batch system, writes a line to its log every minute
with its counts and an ETA. On a terminal the progress bar (tqdm) stays;
the lines are formatted by tqdm too (`format_meter`), so both say the same.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Callable, TextIO

#: seconds between two lines of a log
EVERY_S = 60.0


def wants_lines(progress: bool | None, file: TextIO = sys.stderr) -> bool:
    """Lines instead of a bar: progress not switched off, and no terminal."""
    if progress is False:
        return False
    try:
        return not file.isatty()
    except (AttributeError, ValueError):
        return True


class ProgressLines:
    """A line per `every` seconds: `desc: n/total unit, postfix [elapsed, ETA]`.
    `update` counts; `tick` writes a line when one is due (call it from a
    loop), or `start` writes them from a thread of its own (for a loop that
    blocks, as a sweep waiting on its cells)."""

    def __init__(self, desc: str, total: float, unit: str, every: float = EVERY_S,
                 file: TextIO = sys.stderr, postfix: Callable[[], str] | None = None,
                 fmt: Callable[[float], str] = lambda n: f"{n:g}") -> None:
        self.desc, self.total, self.unit, self.every = desc, total, unit, every
        self.file, self.postfix, self.fmt = file, postfix, fmt
        self.n = 0.0
        self.started = time.monotonic()
        self.last = self.started
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def update(self, n: float = 1) -> None:
        self.n += n

    def line(self) -> str:
        from tqdm import tqdm

        elapsed = time.monotonic() - self.started
        rate = self.n / elapsed if elapsed > 0 and self.n > 0 else None
        left = (self.total - self.n) / rate if rate and self.total else None
        more = f", {self.postfix()}" if self.postfix is not None else ""
        eta = tqdm.format_interval(left) if left is not None else "unknown"
        return (f"{self.desc}: {self.fmt(self.n)}/{self.fmt(self.total)} {self.unit}{more} "
                f"[{tqdm.format_interval(elapsed)} elapsed, ETA {eta}]")

    def write(self) -> None:
        self.last = time.monotonic()
        print(self.line(), file=self.file, flush=True)

    def tick(self) -> None:
        """A line, if the last was `every` seconds ago."""
        if time.monotonic() - self.last >= self.every:
            self.write()

    def start(self) -> "ProgressLines":
        """Lines from a thread of its own until close()."""
        def loop() -> None:
            while not self._stop.wait(self.every):
                self.write()
        self._thread = threading.Thread(target=loop, name="progress-lines", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop the lines, with a last one where the work took a line's time."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
        if time.monotonic() - self.started >= self.every:
            self.write()
