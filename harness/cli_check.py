"""`harness check`: a scenario or a grid validated and printed, nothing run
(harness.usecases: running.plan, sweeping.grid_cells, boundary.search_plan;
the cost model: harness.sweeps.cost). Registered on the group by harness.cli."""

from __future__ import annotations

import json
import sys

import click

from harness.cli_common import (ALLOW_SHORT_HELP, completions, fail, joined, simulated,
                                within)
from harness import catalog
from harness.config.errors import ConfigError, shorten


@click.command()
@click.argument("target", required=False, metavar="SCENARIO|GRID",
                shell_complete=completions("scenario", "sweep"))
@click.option("--sweep", "as_sweep", is_flag=True,
              help="TARGET is a grid (for a name that is both a scenario and a sweep preset).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Scenarios: override a field, as for `harness run` (repeatable).")
@click.option("-j", "--jobs", type=click.IntRange(1), default=None,
              help="Grids: cores for the wall-time estimate (default: CPU count).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the resolved scenario (a grid: its cells) as JSON on stdout, "
                   "the summary on stderr.")
@click.option("--allow-short", is_flag=True, help=ALLOW_SHORT_HELP)
def check(target: str | None, as_sweep: bool, overrides: tuple[str, ...],
          jobs: int | None, as_json: bool, allow_short: bool = False) -> None:
    import os

    from harness.usecases import running
    from harness.sweeps.grid import load_grid

    try:
        kind, both = running.target_kind(target, as_sweep)
        if both:
            click.echo(f"note: {target!r} is a scenario and a sweep preset; checking the "
                       f"scenario (the grid: harness check --sweep {target})", err=True)
        if kind == "grid":
            if target is None:
                fail("--sweep: give the grid to check")
            if overrides:
                fail("--set: applies to scenarios; a grid sets fields in its [set] table")
            failed = _check_grid(load_grid(target), jobs or os.cpu_count() or 1, as_json,
                                 allow_short)
        else:
            failed = _check_scenario(target, overrides, as_json, allow_short)
    except ConfigError as e:
        fail(e)
    if failed:
        sys.exit(1)


check.help = f"""Validate a scenario or a grid and print it; run nothing.

A scenario ({joined(catalog.scenario_names())}, or a file) is summed up: what
would run (network, window, background, training) and its cost estimate;
--json prints the whole resolved scenario. A grid
({joined(catalog.sweep_names())}, or a file) is printed as its cells (invalid
ones with their error) with the sweep's cost estimate. Exit code 2: bad
input; 1: some cells are invalid (the sweep would record them failed and run
the others)."""


def _check_scenario(target: str | None, overrides: tuple[str, ...], as_json: bool,
                    allow_short: bool = False) -> bool:
    from harness.config.scenario import load_scenario
    from harness.usecases import checks, running
    from harness.sweeps.cost import Cost, predicted_bytes

    notes: list[str] = []
    p = running.plan(lambda: load_scenario(target, list(overrides), notes))
    for note in notes:
        click.echo(f"note: {note}", err=True)
    checks.refuse_short_window(p, allow_short, checks.CLI)
    if as_json:
        click.echo(json.dumps(p.resolved(), indent=2, default=str))
    sc = p.scenario
    click.echo(f"scenario {shorten(sc.name)} is valid (digest {sc.digest()}): "
               f"{p.topology.kind} with "
               f"{p.topology.n_hosts} hosts, {simulated(p)}, "
               f"{len(p.flows)} background flows; cost {Cost(predicted_bytes(p)).describe()} "
               "(rough: docs/performance/sweep-cost.md)", err=as_json)
    if not as_json:
        for line in _scenario_lines(p):
            click.echo(f"  {line}")
        click.echo("  (the whole resolved scenario: --json)")
    return False


def _rate(bps: float) -> str:
    for unit, scale in (("Tbit/s", 1e12), ("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= scale:
            return f"{bps / scale:g} {unit}"
    return f"{bps:g} bit/s"


def _scenario_lines(p) -> list[str]:
    """What `harness check` says of a planned scenario besides its headline:
    the network, the measured window, the background and each training job."""
    sc, net = p.scenario, p.network
    rates = sorted({link.rate_bps for link in p.topology.links})
    links = " to ".join(_rate(r) for r in sorted({rates[0], rates[-1]}))
    lines = [f"network: {len(p.topology.links)} links at {links}, {net.qdisc} "
             f"({p.classes.bands} bands), {net.buffer.model} buffers, "
             f"{sc.tcp.congestion_control}"
             + (f"; scaled down {sc.scale}x" if sc.scale > 1 else ""),
             f"measured: flows and iterations starting in [{p.run.warmup:g}, "
             f"{p.run.duration - p.run.cooldown:g}] s"]
    bg = sc.background
    if bg.enabled:
        lines.append(f"background: {bg.workload}, {p.background_rate:.1f} flows/s per host "
                     f"(load {p.background_load:.1%}) on {len(p.background_hosts)} hosts, "
                     f"class {bg.traffic_class}"
                     + (f", {len(p.background_steps)} load steps" if p.background_steps else ""))
    else:
        lines.append("background: off")
    for job in p.all_jobs:
        cfg = job.config
        name = f" {cfg.name}" if len(p.all_jobs) > 1 else ""
        lines.append(f"training{name}: {cfg.architecture}, {len(job.hosts)} workers, "
                     f"{job.profile.name}, policy {cfg.policy}, class "
                     f"{cfg.priority if cfg.priority != 'same' else 'same as the background'}; "
                     f"no-contention iteration {job.ideal_iteration_s * 1e3:.3g} ms")
    if not p.all_jobs:
        lines.append("training: off")
    return lines


def _check_grid(grid, jobs: int, as_json: bool = False, allow_short: bool = False) -> bool:
    import pandas as pd

    if grid.search is not None:
        return _check_search(grid, jobs, as_json)

    from harness.usecases import checks, sweeping
    from harness.sweeps.cost import SWEEP_START_S, Cost

    cells = sweeping.grid_cells(grid, allow_short, checks.CLI)
    rows = [{"cell": c.id, "arm": c.arm, **dict(c.point),
             "MB": round(c.predicted_bytes / 1e6, 1) if c.scenario else None,
             "status": "ok" if c.scenario else f"invalid: {c.error}"} for c in cells]
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
    else:
        with pd.option_context("display.max_rows", None, "display.max_colwidth", 90,
                               "display.width", 200):
            click.echo(pd.DataFrame(rows).to_string(index=False))
    valid = [c for c in cells if c.scenario is not None]
    cost = Cost(sum(c.predicted_bytes for c in valid))
    click.echo(f"grid {shorten(grid.name)}: {len(cells)} cells "
               f"({grid.shape()} points x {max(1, len(grid.arms))} arms), {len(valid)} valid, "
               f"{len(cells) - len(valid)} invalid; cost {cost.describe(jobs)} plus "
               f"~{SWEEP_START_S:g} s to start (rough: "
               "docs/performance/sweep-cost.md)", err=as_json)
    if grid.max_seeds:
        budget = (f", added only where they fit in {grid.budget_s / 60:g} min from the start"
                  if grid.budget_s is not None else " (not counted above)")
        click.echo(f"adaptive: undecided points get more seeds, up to {grid.max_seeds} each"
                   f"{budget}", err=as_json)
    return len(valid) < len(cells)


def _check_search(grid, jobs: int, as_json: bool) -> bool:
    """A search grid (harness boundary): what it would search, the cells of
    the range's ends (the low end every search's first probe) and the cost's bounds."""
    import pandas as pd

    from harness.analysis.tables import SEED_AXIS
    from harness.usecases import boundary
    from harness.sweeps import searching
    from harness.sweeps.cost import SWEEP_START_S, Cost

    searching.check_search(grid)   # every cell a probe may ask for, as harness boundary does
    spec = grid.search
    plan, points = boundary.search_plan(grid)
    cells = plan.end_cells
    rows = [{"cell": c.id, "arm": c.arm, **dict(c.point),
             "MB": round(c.predicted_bytes / 1e6, 1) if c.scenario else None,
             "status": "ok" if c.scenario else f"invalid: {c.error}"} for c in cells]
    err = as_json
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
    fields = [f for f, _ in grid.axes if f != SEED_AXIS]
    thresholds = ", ".join(f"{100 * t:g} %" for t in spec.thresholds)
    first = len(dict(grid.axes)[SEED_AXIS])
    click.echo(f"grid {shorten(grid.name)}: a boundary search (harness boundary), run nothing "
               f"now: for each of {len(points)} point{'s' if len(points) != 1 else ''}"
               + (f" ({', '.join(fields)})" if fields else "")
               + f" and each threshold ({thresholds}), where the training slowdown of "
               f"{spec.arm} vs {grid.reference} crosses it along {spec.field} in "
               f"[{spec.lo:g}, {spec.hi:g}], to within {within(spec)}", err=err)
    halving = "halving the bracket" + (" (geometrically)" if spec.spacing == "log" else "")
    click.echo(f"probes: {spec.lo:g} first (shared by the thresholds), then {halving} "
               f"towards {spec.hi:g} (probed when the bracket reaches it) and windows around "
               f"undecided probes: at most {plan.most_probes} per search, each "
               f"{first} to {max(first, spec.max_seeds)} seed{'s' if spec.max_seeds != 1 else ''}"
               f" x {len(grid.arms)} arms", err=err)
    if not as_json:
        click.echo("the cells of the range's ends, first seeds:")
        with pd.option_context("display.max_rows", None, "display.max_colwidth", 90,
                               "display.width", 200):
            click.echo(pd.DataFrame(rows).to_string(index=False))
    valid = [c for c in cells if c.scenario is not None]
    click.echo(f"{len(valid)} of {len(cells)} cells of the ends valid; cost from "
               f"{Cost(plan.least_bytes).describe(jobs)} (the low end alone, first seeds) to "
               f"{Cost(plan.most_bytes).describe(jobs)} (every search all its probes, "
               f"{max(first, spec.max_seeds)} seeds each), plus ~{SWEEP_START_S:g} s to start "
               "(rough: docs/performance/sweep-cost.md)", err=err)
    return len(valid) < len(cells)
