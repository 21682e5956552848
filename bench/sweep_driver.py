"""`python -m bench.sweep_driver GRID OUT JOBS EXECUTOR`: one sweep in a process
of its own (so ns-3, loaded by the local executor's parent, stays out of the
bench process), reported on stdout as JSON. EXECUTOR: local, dask (a
LocalCluster) or dask-processes (a `dask scheduler` and JOBS `dask worker`
processes, started before the sweep's clock and stopped after it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    from harness.sweeps.grid import load_grid
    from harness.sweeps.sweeping import run_sweep

    grid, out, jobs, executor = Path(argv[0]), Path(argv[1]), int(argv[2]), argv[3]
    if executor == "dask-processes":
        from bench.dask_processes import dask_processes

        with dask_processes(jobs, out.parent / f"{out.name}-dask") as address:
            report = run_sweep(load_grid(grid), out, jobs=jobs, executor="dask",
                               scheduler=address, progress=False)
    else:
        report = run_sweep(load_grid(grid), out, jobs=jobs, executor=executor, progress=False)
    summary = report.tables["summary"]
    cell_wall = summary["wall_s"].dropna() if "wall_s" in summary else []
    print(json.dumps({"cells": report.cells, "ran": report.ran, "failed": len(report.failed),
                      "wall_s": report.wall_s,
                      "cell_wall_s": [float(w) for w in cell_wall],
                      "events": [int(e) for e in summary.get("events", [])]}))


if __name__ == "__main__":
    main(sys.argv[1:])
