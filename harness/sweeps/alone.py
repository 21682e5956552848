"""Each job's slowdown against the same job alone ([[training]]): the
scenario runs once with every job, then once per job with the others
disabled (`training.<i>.enabled = false`: same placement, ports, seed and
background), and each job's mean iteration time is compared.

    harness alone two-jobs [--set key=value ...] [-o table.csv]

prints one row per job: name, mean iteration together and alone (ms), and
slowdown = together / alone."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.config.scenario import (ConfigError, apply_overrides, apply_values,
                                     read_scenario_dict, scenario_from_dict, shorten)


#: the table's columns, in order: its CSV's header line (`harness alone -o`)
COLUMNS = ("job", "name", "together_ms", "alone_ms", "slowdown")


def is_alone_table(path: str | Path) -> bool:
    """A CSV `harness alone -o` wrote (its header is the table's columns):
    an earlier table of its own, which it may replace, as `harness profile
    -o` replaces a profile it wrote; any other file is the user's."""
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            return f.readline().rstrip("\r\n") == ",".join(COLUMNS)
    except OSError:
        return False


def _mean_iterations(summary: dict) -> dict[str, float | None]:
    jobs = summary.get("jobs") or [summary["training"]]
    return {j.get("name", ""): j["mean_iteration_s"] for j in jobs}


def slowdowns(scenario: str | Path, overrides: list[str] = (), run=None) -> pd.DataFrame:
    """job, name, together_ms, alone_ms, slowdown for every enabled job.
    run: Scenario -> summary dict (default: a real run)."""
    if run is None:
        from harness.engine.simulation import run_scenario

        def run(sc):
            return run_scenario(sc, quiet=True).summary
    data = apply_overrides(read_scenario_dict(scenario), list(overrides))
    together = scenario_from_dict(data)
    enabled = [i for i, job in enumerate(together.jobs) if job.enabled]
    if not enabled:   # nothing to compare: refused before the simulation
        raise ConfigError("training", f"{shorten(str(scenario))} has no enabled training "
                          "job: `harness alone` compares each job with itself alone; allowed: "
                          "a scenario with training on (--set training.enabled=true, or "
                          "[[training]] jobs such as two-jobs)")
    mean = _mean_iterations(run(together))
    rows = []
    for i in enabled:
        alone = apply_values(data, [(["training", str(j), "enabled"], False)
                                    for j in enabled if j != i])
        name = together.jobs[i].name
        alone_s = _mean_iterations(run(scenario_from_dict(alone)))[name]
        with_s = mean[name]
        rows.append({"job": i, "name": name,
                     "together_ms": with_s * 1e3 if with_s else None,
                     "alone_ms": alone_s * 1e3 if alone_s else None,
                     "slowdown": with_s / alone_s if with_s and alone_s else None})
    return pd.DataFrame(rows, columns=list(COLUMNS))
