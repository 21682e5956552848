"""`harness findings`: the findings' kept results, listed, rerun, redrawn and
checked against today's code (harness.usecases.findings, over
harness.findings). Registered on the group by harness.cli."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click


def _jobs(value: int | None) -> int:
    if value is not None and value < 1:
        raise click.BadParameter(f"at least 1, got {value}", param_hint="-j/--jobs")
    return value or os.cpu_count() or 1


@click.group()
def findings() -> None:
    """What the findings pages stand on: kept sweep tables, rerun and checked.

    \b
    harness findings list            each finding, its sweeps, their cost and status
    harness findings run NAME -j 2   rerun its sweeps (resumable), keep their tables
    harness findings draw [NAME]     redraw its figures from the kept tables
    harness findings check           no simulation: kept cells against today's code

    The reference suite's rows (docs/findings/references.md) are kept by
    `python -m bench --only references --keep-references` and checked here too.

    Status: current (every kept cell has the digest today's code and defaults
    give it), pinned (current, and its grid pins a setting on purpose), stale
    (a kept cell's settings changed: the setting is named), not kept (no kept
    tables yet: its page says so)."""


@findings.command(name="list")
@click.option("--results", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where findings run runs the sweeps (default results/findings/ under "
                   "the results root): a sweep begun there shows its finished cells, their "
                   "CPU and the CPU left at their rate.")
def list_(results: Path | None) -> None:
    """Each finding: status, the sweeps it stands on and their CPU cost."""
    from harness.io import outdir
    from harness.usecases import findings as service
    from harness.findings import checking, registry

    root = results if results is not None else outdir.results_root() / "findings"
    checked: dict = {}   # a sweep two findings share is compared once
    for finding in registry.load_registry().values():
        # the kept digests against today's (seconds); `findings check` also plans every cell
        states = service.sweep_states(finding, checked, planned=False)
        status = checking.finding_status(states)
        click.echo(f"{finding.name:<26} {status:<9} {finding.title} "
                   f"(docs/{finding.page})")
        for state in states:
            record = state.provenance
            if record:
                cost = (f"{record.get('cells')} cells, {record.get('simulation_cpu_s', 0):,.0f} s "
                        f"CPU, kept {record.get('date')} at {record.get('commit')}")
            else:
                estimate = service.estimate_cpu_s(state.sweep)
                cost = "not kept"
                parts = service.held_in_cache(state.sweep)
                if parts and parts[0] < parts[1]:   # a sweep kept in parts
                    cost += (f"; {parts[0]} of {parts[1]} cells kept as cached cells "
                             f"({state.sweep.cached})")
                if estimate and estimate[0] == estimate[1]:
                    cost += (f"; first round ~{estimate[0]:,.0f} s CPU (estimate)"
                             + (" for the rest" if parts and parts[0] else ""))
                elif estimate:
                    cost += (f"; ~{estimate[0]:,.0f} to {estimate[1]:,.0f} s CPU (estimate: "
                             "its fewest and most probes)")
                begun = service.run_so_far(state.sweep, root)
                if begun is not None and begun.done and begun.cells is None:
                    cost += (f"; {begun.done} cells run in {begun.directory} "
                             f"({begun.cpu_s:,.0f} s CPU)")
                elif begun is not None and begun.done:
                    cost += (f"; {begun.done} of {begun.cells} cells run in {begun.directory} "
                             f"({begun.cpu_s:,.0f} s CPU), ~{begun.left_cpu_s:,.0f} s CPU "
                             "left at their rate")
                    if begun.from_cache:
                        cost += f" ({begun.from_cache} more from its cached cells)"
            click.echo(f"    sweep {state.sweep.key} ({state.sweep.grid}): {cost}")
            for reason in state.reasons:
                click.echo(f"      {reason}")
        if finding.note:
            click.echo(f"    also: {finding.note}")
    refs = service.check_references()   # kept by the bench, not by a sweep
    click.echo(f"{refs.name:<26} {refs.status:<9} The reference suite "
               "(docs/findings/references.md): python -m bench --only references "
               "--keep-references")
    for reason in refs.reasons:
        click.echo(f"      {reason}")


@findings.command()
@click.argument("name")
@click.option("-j", "--jobs", type=int, default=None, help="Cells at once (default: every CPU).")
@click.option("--results", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the sweeps run (default results/findings/ under the results "
                   "root); an existing sweep there is resumed.")
@click.option("--no-added-seeds", is_flag=True,
              help="Add no seeds beyond those the sweep directory already holds (its "
                   "unfinished cells still run): keeps a finished adaptive sweep as it is, "
                   "where a resume would otherwise spend its budget again.")
@click.option("--rerun", is_flag=True,
              help="Run again the sweeps whose kept tables are current too (by default "
                   "they stand: a sweep another finding shares is not run twice, nor "
                   "its seed budget spent again).")
def run(name: str, jobs: int | None, results: Path | None, no_added_seeds: bool,
        rerun: bool) -> None:
    """Rerun the sweeps a finding stands on (resuming what ran before), keep
    their tables in workloads/findings/ and redraw its figures.

    Each sweep runs as `harness sweep` would, with its grid, budget and
    cached cells as findings.toml gives them; a sweep already finished
    there only has its tables kept again. A sweep whose kept tables are
    current (or pinned) is left as it is, unless --rerun."""
    from harness.usecases import findings as service
    from harness.findings import checking, keeping, registry

    # a bad name or -j, and a ConfigError below, end as the command's one line (cli._Cli)
    finding = registry.finding(name)
    jobs = _jobs(jobs)
    root = service.results_root(results)
    for sweep in finding.sweeps:   # where each is kept, before any of them runs
        keeping.check_kept_dir(sweep)
    for sweep in finding.sweeps:
        if not rerun and checking.check_sweep(sweep).status in (checking.CURRENT,
                                                                checking.PINNED):
            click.echo(f"kept {sweep.key} is current: left as it is (--rerun to run it)",
                       err=True)
            continue
        out = root / sweep.key
        command = service.sweep_command(sweep, out, jobs, no_added_seeds)
        click.echo("+ " + " ".join(command[2:]), err=True)
        code = subprocess.call(command)
        if code != 0:
            sys.exit(code)
        where = keeping.keep(sweep, out)
        click.echo(f"kept {sweep.key}: {where}", err=True)
    for figure in finding.figures:
        click.echo(f"drew {service.draw(figure)}", err=True)


@findings.command()
@click.argument("name", required=False)
def draw(name: str | None) -> None:
    """Redraw a finding's figures (default: every finding's) from its kept
    tables, with their provenance in the PNG's metadata."""
    from harness.usecases import findings as service
    from harness.findings import checking, registry

    chosen = [registry.finding(name)] if name else list(registry.load_registry().values())
    for finding in chosen:
        for figure in finding.figures:
            state = checking.check_sweep(registry.kept_sweep(figure.sweep))
            if state.status == checking.NOT_KEPT:
                click.echo(f"skipped {figure.file}: {figure.sweep} is not kept", err=True)
                continue
            click.echo(f"drew {service.draw(figure)}", err=True)


@findings.command()
@click.option("--strict", is_flag=True,
              help="Fail on findings not kept yet too, not only on stale ones.")
def check(strict: bool) -> None:
    """No simulation: every kept cell made again from today's grid files and
    defaults must have its kept digest, every figure the provenance of its
    kept tables, and each kept reference check (the reference suite's rows)
    its digest. Exits 1 naming each stale finding and the settings that
    changed (and, with --strict, each finding not kept yet)."""
    from harness.usecases import findings as service
    from harness.findings import checking, registry

    bad = []
    found = registry.load_registry()
    click.echo(f"checking {len(found)} findings and the reference suite: every kept cell "
               "made again and planned from today's code (no simulation), each line as it "
               "is checked", err=True)
    shared: dict = {}   # a sweep two findings share is checked once

    def report(checked) -> None:   # each line as soon as its finding is checked
        click.echo(f"{checked.name:<26} {checked.status}")
        for reason in checked.reasons:
            click.echo(f"    {reason}")
        if checked.status == checking.STALE or (strict
                                                 and checked.status == checking.NOT_KEPT):
            bad.append(checked.name)
    for finding in found.values():
        report(service.check(finding, shared))
    # the reference suite's rows are kept by the bench, not a sweep: checked alike
    report(service.check_references())
    if bad:
        click.echo(f"error: findings not current: {', '.join(bad)}", err=True)
        sys.exit(1)
