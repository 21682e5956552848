"""Sweep efficiency of a small adaptive grid: the cells' summed wall time over
(jobs x wall time), the sweep's and the cells' span (first start to last end).

    PYTHONPATH=. python -m bench.sweep_efficiency OUT_DIR [--jobs 2] [--max-seeds 4]
        [--ratios "[2, 1]"] [--loads "[0.05, 0.1, 0.2]"] [--executor local|dask]

Each cell's wall time is the executor's own (Outcome.wall_s: fork to end).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

GRID = """
name = "efficiency"
scenario = "default"
timeout = "10min"
[set]
"run.duration" = 0.25
"run.warmup" = 0.05
"run.cooldown" = 0.05
"training.enabled" = true
"training.profile" = "{model}"
"training.workers" = 4
[axes]
seed = [1]
"training.ratio" = {ratios}
"background.load" = {loads}
[arms]
reference = "same"
same = {{ "training.priority" = "same" }}
low = {{ "training.priority" = "low" }}
[adaptive]
max_seeds = {max_seeds}
"""


def main(argv: list[str] | None = None) -> int:
    from harness.sweeps import executors
    from harness.sweeps import sweeping
    from harness.traffic import profiles
    from harness.sweeps.grid import load_grid

    p = argparse.ArgumentParser()
    p.add_argument("out", type=Path)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--max-seeds", type=int, default=4)
    p.add_argument("--executor", default="local")
    p.add_argument("--ratios", default="[2, 1]", help="training.ratio axis (TOML list)")
    p.add_argument("--loads", default="[0.05, 0.1, 0.2]", help="background.load axis")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    model = args.out / "m1.csv"
    profiles.save_profile(profiles.resnet50_like(10, 1_000_000, 5.0), model)
    grid_path = args.out / "grid.toml"
    grid_path.write_text(GRID.format(model=model, max_seeds=args.max_seeds,
                                     ratios=args.ratios, loads=args.loads))
    grid = load_grid(grid_path)
    spans: list[tuple[float, float]] = []
    walls: list[float] = []
    originals = executors.run_local, executors.run_dask

    def timed(on_done):
        def wrapped(outcome):
            end = time.monotonic()
            spans.append((end - outcome.wall_s, end))
            walls.append(outcome.wall_s)
            return on_done(outcome)
        return wrapped

    executors.run_local = lambda tasks, jobs, on_done, *a, **k: originals[0](
        tasks, jobs, timed(on_done), *a, **k)
    executors.run_dask = lambda tasks, jobs, sched, on_done, *a, **k: originals[1](
        tasks, jobs, sched, timed(on_done), *a, **k)
    report = sweeping.run_sweep(grid, args.out / "sweep", jobs=args.jobs, executor=args.executor,
                             progress=False)
    span = max(e for _, e in spans) - min(s for s, _ in spans)
    result = {"jobs": args.jobs, "cells": report.cells, "rounds": report.rounds,
              "cell_wall_sum_s": round(sum(walls), 2), "sweep_wall_s": round(report.wall_s, 2),
              "cells_span_s": round(span, 2),
              "efficiency_sweep": round(sum(walls) / (args.jobs * report.wall_s), 3),
              "efficiency_cells": round(sum(walls) / (args.jobs * span), 3)}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
