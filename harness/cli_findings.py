"""`harness findings`: the findings' kept results, listed, rerun, redrawn and
checked against today's code (harness.sweeps.findings)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

from harness.config.errors import ConfigError


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

    Status: current (every kept cell has the digest today's code and defaults
    give it), pinned (current, and its grid pins a setting on purpose), stale
    (a kept cell's settings changed: the setting is named), not kept (no kept
    tables yet: its page says so)."""


def _estimate_cpu_s(sweep) -> float | None:
    """A not-yet-kept sweep's rough simulation CPU, from harness check's cost model."""
    from harness.sweeps.cost import Cost
    from harness.sweeps.grid import expand, load_grid

    try:
        grid = load_grid(sweep.grid_path())
        cells = [c for c in expand(grid) if c.scenario is not None]
    except ConfigError:
        return None
    low, high = Cost(sum(c.predicted_bytes for c in cells)).core_s
    return (low + high) / 2


@findings.command(name="list")
def list_() -> None:
    """Each finding: status, the sweeps it stands on and their CPU cost."""
    from harness.sweeps import findings as kept

    for finding in kept.load_registry().values():
        states = [kept.check_sweep(s) for s in finding.sweeps]
        status = kept.finding_status(states)
        click.echo(f"{finding.name:<26} {status:<9} {finding.title} "
                   f"(docs/{finding.page})")
        for state in states:
            record = state.provenance
            if record:
                cost = (f"{record.get('cells')} cells, {record.get('simulation_cpu_s', 0):,.0f} s "
                        f"CPU, kept {record.get('date')} at {record.get('commit')}")
            else:
                estimate = _estimate_cpu_s(state.sweep)
                cost = ("not kept; first round ~" + f"{estimate:,.0f} s CPU (estimate)"
                        if estimate else "not kept")
            click.echo(f"    sweep {state.sweep.key} ({state.sweep.grid}): {cost}")
            for reason in state.reasons:
                click.echo(f"      {reason}")
        if finding.note:
            click.echo(f"    also: {finding.note}")


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
def run(name: str, jobs: int | None, results: Path | None, no_added_seeds: bool) -> None:
    """Rerun the sweeps a finding stands on (resuming what ran before), keep
    their tables in workloads/findings/ and redraw its figures.

    Each sweep runs as `harness sweep` would, with its grid, budget and
    reference results as findings.toml gives them; a sweep already finished
    there only has its tables kept again."""
    from harness.outputs import findings_pages, outdir
    from harness.sweeps import findings as kept

    # a bad name or -j, and a ConfigError below, end as the command's one line (cli._Cli)
    finding = kept.finding(name)
    jobs = _jobs(jobs)
    root = results if results is not None else outdir.results_root() / "findings"
    if not os.access(kept.FINDINGS_DIR, os.W_OK):
        raise ConfigError(str(kept.FINDINGS_DIR), "not writable: findings run keeps its "
                          "tables in a checkout of the project")
    for sweep in finding.sweeps:
        out = root / sweep.key
        command = [sys.executable, "-m", "harness.cli", "sweep", str(sweep.grid_path()),
                   "-o", str(out), "-j", str(jobs)]
        if (out / "sweep.json").is_file():
            command.append("--resume")
        if no_added_seeds:
            command += ["--max-seeds", "1"]
        elif sweep.budget:
            command += ["--budget", sweep.budget]
        if sweep.max_seeds and not no_added_seeds:
            command += ["--max-seeds", str(sweep.max_seeds)]
        if sweep.reference:
            command += ["--reference", sweep.reference]
        click.echo("+ " + " ".join(command[2:]), err=True)
        code = subprocess.call(command)
        if code != 0:
            sys.exit(code)
        where = kept.keep(sweep, out)
        click.echo(f"kept {sweep.key}: {where}", err=True)
    for figure in finding.figures:
        click.echo(f"drew {findings_pages.draw(figure, _docs_dir())}", err=True)


def _docs_dir() -> Path:
    """The documentation's folder: the checkout's, or the copy a wheel carries."""
    from harness.config.paths import DOCS_DIR

    return DOCS_DIR


@findings.command()
@click.argument("name", required=False)
def draw(name: str | None) -> None:
    """Redraw a finding's figures (default: every finding's) from its kept
    tables, with their provenance in the PNG's metadata."""
    from harness.outputs import findings_pages
    from harness.sweeps import findings as kept

    chosen = [kept.finding(name)] if name else list(kept.load_registry().values())
    for finding in chosen:
        for figure in finding.figures:
            state = kept.check_sweep(kept.kept_sweep(figure.sweep))
            if state.status == kept.NOT_KEPT:
                click.echo(f"skipped {figure.file}: {figure.sweep} is not kept", err=True)
                continue
            click.echo(f"drew {findings_pages.draw(figure, _docs_dir())}", err=True)


@findings.command()
@click.option("--strict", is_flag=True,
              help="Fail on findings not kept yet too, not only on stale ones.")
def check(strict: bool) -> None:
    """No simulation: every kept cell made again from today's grid files and
    defaults must have its kept digest, and every figure the provenance of
    its kept tables. Exits 1 naming each stale finding and the settings that
    changed (and, with --strict, each finding not kept yet)."""
    from harness.outputs import findings_pages
    from harness.sweeps import findings as kept

    bad = []
    for finding in kept.load_registry().values():
        states = [kept.check_sweep(s) for s in finding.sweeps]
        status = kept.finding_status(states)
        reasons = [f"{s.sweep.key}: {r}" for s in states for r in s.reasons
                   if s.status != kept.PINNED]
        for figure in finding.figures:
            record = kept.provenance(kept.kept_sweep(figure.sweep))
            path = _docs_dir() / figure.file
            if not record:
                continue
            if not path.is_file():
                reasons.append(f"figure {figure.file} missing: harness findings draw")
                status = kept.STALE
                continue
            meta = findings_pages.png_metadata(path)
            if (meta.get("commit"), meta.get("date")) != (record.get("commit"),
                                                           record.get("date")):
                reasons.append(f"figure {figure.file} was drawn from other tables "
                               f"({meta.get('date')}, {meta.get('commit')}): "
                               f"harness findings draw {finding.name}")
                status = kept.STALE
        click.echo(f"{finding.name:<26} {status}")
        for reason in reasons:
            click.echo(f"    {reason}")
        if status == kept.STALE or (strict and status == kept.NOT_KEPT):
            bad.append(finding.name)
    if bad:
        click.echo(f"error: findings not current: {', '.join(bad)}", err=True)
        sys.exit(1)
