"""`python -m bench.harness_driver PHASE_JSON ARGS...` is `harness ARGS...`
with one addition: the cost of the simulation phase (the harness's
run.`_run_with_progress`, i.e. its Simulator::Stop/Run slices) is measured
with bench.counters.Phase and written to PHASE_JSON. Nothing else changes,
so the whole process costs what `harness ARGS...` costs (plus this module's
import, a few milliseconds).

With $BENCH_PHASE_MARKER naming libbench-marker.so (bench/native/marker.c),
its bench_phase_start/stop are called around the phase too: under
`valgrind --tool=callgrind --instr-atstart=no` only the phase is counted."""

from __future__ import annotations

import ctypes
import functools
import os
import json
import sys
from pathlib import Path


def _measured(run_phase, out: Path):
    @functools.wraps(run_phase)
    def wrapper(*args, **kwargs):
        from bench.counters import Phase

        marker = _marker()
        with Phase() as phase:
            if marker is not None:
                marker.bench_phase_start()
            timing = run_phase(*args, **kwargs)
            if marker is not None:
                marker.bench_phase_stop()
        out.write_text(json.dumps({**phase.cost.to_dict(), "events": timing["events"],
                                   "simulated_s": timing["simulated_s"]}))
        return timing
    return wrapper


def _marker():
    path = os.environ.get("BENCH_PHASE_MARKER")
    return ctypes.CDLL(path) if path else None


def main(argv: list[str]) -> None:
    from harness import cli, run

    out, args = Path(argv[0]), argv[1:]
    run._run_with_progress = _measured(run._run_with_progress, out)
    sys.argv = ["harness", *args]
    cli.main(prog_name="harness")


if __name__ == "__main__":
    main(sys.argv[1:])
