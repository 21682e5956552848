"""`python -m bench.harness_driver PHASE_JSON ARGS...` is `harness ARGS...`
with one addition: the cost of the simulation phase (the Simulator::Stop/Run
slices, which harness.engine.simulation.execute brackets with its `on_phase` context
manager) is measured with bench.counters.Phase and written to PHASE_JSON.
Nothing else changes, so the whole process costs what `harness ARGS...`
costs (plus this module's import, a few milliseconds).

With $BENCH_PHASE_MARKER naming libbench-marker.so (bench/native/marker.c),
its bench_phase_start/stop are called around the phase too: under
`valgrind --tool=callgrind --instr-atstart=no` only the phase is counted."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import sys
from pathlib import Path


@contextlib.contextmanager
def measured_phase(out: Path):
    """Counters (and the callgrind marker) around the phase; PHASE_JSON at its end."""
    from bench.counters import Phase

    marker = _marker()
    with Phase() as phase:
        if marker is not None:
            marker.bench_phase_start()
        try:
            yield
        finally:
            if marker is not None:
                marker.bench_phase_stop()
    out.write_text(json.dumps(phase.cost.to_dict()))


def _marker():
    path = os.environ.get("BENCH_PHASE_MARKER")
    return ctypes.CDLL(path) if path else None


def main(argv: list[str]) -> None:
    from harness import cli

    out, args = Path(argv[0]), argv[1:]
    sys.argv = ["harness", *args]   # what the run's manifest records as its command
    cli.main(args, prog_name="harness", obj={"on_phase": measured_phase(out)})


if __name__ == "__main__":
    main(sys.argv[1:])
