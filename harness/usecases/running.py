"""Running one scenario (`harness run`, harness.api.run) and checking one
(`harness check SCENARIO`): plan -> pre-checks -> execute -> write."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from harness.usecases import checks
from harness.usecases.checks import Names


@dataclass(frozen=True)
class PreparedRun:
    """A planned run that passed every pre-check: what execute() runs."""

    plan: object                 # harness.engine.planning.Plan
    out: Path | None             # the checked run directory (None: in memory only)
    long_run: str | None         # a note on a run estimated at minutes of wall time


def prepare(load: Callable[[], object], out: Path | None, allow_short: bool, names: Names,
            default_out: bool = False) -> PreparedRun:
    """Every pre-check of a run, before ns-3 starts: the environment, the
    scenario (`load` returns it, with the overrides applied), a window that
    can measure an iteration, and the output directory (`out`, or with
    default_out the default results/runs/<name>-<digest>)."""
    from harness.engine.planning import output_bytes, plan
    from harness.io import outdir
    from harness.sweeps.cost import long_run_note

    checks.check_environment()
    p = plan(load())
    checks.refuse_short_window(p, allow_short, names)
    sc = p.scenario
    if out is None and default_out:
        out = outdir.default_run_dir(sc.name, sc.digest())
    target = outdir.check_run_dir(Path(out), names.out, output_bytes(p)) \
        if out is not None else None
    return PreparedRun(p, target, long_run_note(p))


def execute(prepared: PreparedRun, progress: bool | None = None, on_phase=None,
            quiet: bool = False):
    """Run it in ns-3: the result (harness.analysis.tables.Run), not written yet."""
    from harness.engine.simulation import execute as run_in_ns3

    return run_in_ns3(prepared.plan, progress=progress, on_phase=on_phase, quiet=quiet)


def write(result, prepared: PreparedRun) -> None:
    """The run directory, where one was asked for (checked in prepare)."""
    from harness.engine.simulation import write_run_dir

    if prepared.out is not None:
        write_run_dir(result, prepared.out)


def plan(load: Callable[[], object]):
    """`harness check SCENARIO`: the plan of a valid scenario, nothing run
    (the caller prints load's notes, then refuses a short window:
    checks.refuse_short_window)."""
    from harness.engine.planning import plan as planned

    return planned(load())


def target_kind(target: str | None, as_sweep: bool) -> tuple[str, bool]:
    """What `harness check TARGET` checks: "grid" or "scenario", and whether
    the name is both a built-in scenario and a sweep preset (the scenario
    is checked; a note says how to check the grid)."""
    from harness.config.scenario import SCENARIOS_DIR, SWEEPS_DIR, read_toml

    if as_sweep:
        return "grid", False
    if target is None:
        return "scenario", False
    path = Path(target)
    if path.is_file():  # a grid names its base scenario; a scenario never does
        return ("grid" if "scenario" in read_toml(path, "file") else "scenario"), False
    scenario, sweep = _builtin(SCENARIOS_DIR, target), _builtin(SWEEPS_DIR, target)
    if not scenario and sweep:
        return "grid", False
    return "scenario", scenario and sweep


def _builtin(directory: Path, name: str) -> bool:
    return (directory / f"{name}.toml").is_file() or (directory / name).is_file()
