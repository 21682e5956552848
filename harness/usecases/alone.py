"""Each job's slowdown against the same job alone (`harness alone`):
SCENARIO with every job, then once per job with the others disabled."""

from __future__ import annotations

from pathlib import Path

from harness.usecases import checks
from harness.usecases.checks import Names


def prepare(output: Path | None, names: Names, scenario: str | None = None,
            overrides: list[str] = (), allow_short: bool = False) -> Path | None:
    """Before anything runs: the environment, the scenario (planned, and a
    window too short for one iteration refused as `harness run` refuses
    it, unless allow_short), and the output table (new, or one this command
    wrote, which is replaced)."""
    from harness.config.scenario import load_scenario
    from harness.io import outdir
    from harness.sweeps import alone as jobs_alone
    from harness.usecases import running

    checks.check_environment()
    if scenario is not None:
        p = running.plan(lambda: load_scenario(scenario, list(overrides)))
        checks.refuse_short_window(p, allow_short, names)
    return outdir.check_new_file(Path(output), names.out, jobs_alone.is_alone_table,
                                 64 * 1024) if output is not None else None


def slowdowns(scenario: str, overrides: list[str]):
    """The table: per job together / alone / slowdown."""
    from harness.sweeps import alone as jobs_alone

    return jobs_alone.slowdowns(scenario, overrides)


def write(table, out: Path) -> None:
    from harness.io import outdir

    outdir.write_file(out, table.to_csv(index=False))
