"""`harness sweep` and `harness boundary`: a grid's cells run, or its
boundary searched (harness.usecases.sweeping and .boundary: every
pre-check, then the run), and the outcome printed. Registered on the group
by harness.cli."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from harness.cli_common import (ALLOW_SHORT_HELP, EXIT_INTERRUPTED, cell_runner_options,
                                completions, fail, joined, resume_command, within)
from harness import catalog
from harness.config.errors import ConfigError, shorten
from harness.sweeps import adaptive_text


@click.command()
@click.argument("grid_file", metavar="GRID", shell_complete=completions("sweep"))
@cell_runner_options
@click.option("--resume", is_flag=True, help="Continue a sweep directory: run unfinished cells.")
@click.option("--retry-failed", is_flag=True, help="With --resume: run failed cells again.")
@click.option("-o", "--output", metavar="DIR",
              help="Sweep directory (default: results/sweeps/<grid name> under "
                   "$DDNN_HARNESS_RESULTS or .).")
@click.option("--max-seeds", type=click.IntRange(1), default=None, metavar="N",
              help="Add seeds to points whose verdict is undecided at 95 %, up to N seeds "
                   "per point (default: the grid's [adaptive] max_seeds, else off).")
@click.option("--budget", default=None, metavar="TIME",
              help="With added seeds: wall time from the sweep's start, e.g. 20min, 2h or "
                   "1200 (seconds) (default: the grid's [adaptive] budget, else none). "
                   + adaptive_text.SEED_ORDER + " " + adaptive_text.BUDGET_MEANING)
@click.option("--cached", "--reference", "cached_dir", metavar="DIR", default=None,
              help="Cached cells (made with `harness cache`, or the name of a cache "
                   "kept with the harness, e.g. validate) for the cells of the grid's "
                   "smallest scale: those cells are taken from DIR, not run. A grid "
                   "without a scale axis takes the cells DIR holds (same cell id), "
                   "and runs the rest. --reference is its old name.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar (default: when stderr is a terminal).")
@click.option("--allow-short", is_flag=True, help=ALLOW_SHORT_HELP)
def sweep(grid_file: str, jobs: int | None, executor: str, scheduler: str | None, resume: bool,
          retry_failed: bool, output: str | None, max_seeds: int | None, budget: str | None,
          cached_dir: str | None, progress: bool | None, allow_short: bool = False) -> None:
    from harness.analysis.tables import SEED_AXIS
    from harness.usecases import checks, sweeping as service
    from harness.sweeps import sweepdir, sweeping

    try:
        prepared = service.prepare(grid_file, Path(output) if output else None, checks.CLI,
                                   jobs=jobs, executor=executor, scheduler=scheduler,
                                   resume=resume, retry_failed=retry_failed,
                                   max_seeds=max_seeds, budget=budget,
                                   cached=cached_dir or None, allow_short=allow_short)
    except (ConfigError, sweepdir.SweepError) as e:
        fail(e)
    grid, out, cells, jobs = prepared.grid, prepared.out, prepared.cells, prepared.jobs
    if prepared.cached is not None:
        click.echo(f"sweep {shorten(grid.name)}: {prepared.taken} cells from the cached "
                   f"cells in {prepared.cached}", err=True)
    points = len({json.dumps(c.point, default=str) for c in cells})
    arms = len({c.arm for c in cells})
    done = sum(sweepdir.is_done(out, c) for c in cells) if resume else 0
    state = f"; {done} done, {len(cells) - done} to run" if resume else ""
    click.echo(f"sweep {shorten(grid.name)}: {len(cells)} cells ({points} points incl. seeds, "
               f"{arms} arms), {jobs} at a time on {executor}{state}; {out}", err=True)
    resume_cmd = resume_command("sweep", grid_file, out)
    try:
        report = service.run(prepared, progress)
    except (sweepdir.SweepError, ConfigError) as e:
        fail(e)
    except sweeping.SweepInterrupted as e:
        r = e.report
        click.echo(f"interrupted: {r.ran} cells run now ({r.failed_now} failed), "
                   f"{r.unfinished} unfinished (stopped, not failed); tables of the finished "
                   f"cells written to {out}", err=True)
        fail(f"interrupted; continue with: {resume_cmd}", EXIT_INTERRUPTED)
    except KeyboardInterrupt:
        hint = f"; continue with: {resume_cmd}" if (out / "sweep.json").is_file() else ""
        fail(f"interrupted before any cell ran{hint}", EXIT_INTERRUPTED)
    _print_counts(report)
    summary = report.tables["summary"]
    for _, row in summary[summary["status"] == "failed"].iterrows():
        first = str(row["error"]).strip().splitlines()[0] if row["error"] else ""
        click.echo(f"  failed {row['cell']}: {first}", err=True)
    if "reason" in summary:
        for _, row in summary[summary["status"] == "stalled"].iterrows():
            click.echo(f"  stalled {row['cell']}: {row['reason']}", err=True)
    if "deltas_mean" in report.tables:
        _print_deltas(report.tables["deltas_mean"], [f for f in grid.axis_fields
                                                      if f != SEED_AXIS])
    click.echo(f"results: {out}")
    if report.failed:
        sys.exit(1)


sweep.help = f"""Run a grid of scenarios and write summary.parquet and deltas.parquet;
exit 1 if any cell failed.

GRID is a grid file or a sweep preset ({joined(catalog.sweep_names())}).
`harness check --sweep GRID` lists its cells and cost without running them.
Ctrl-C stops the running cells (they stay unfinished, not failed), writes
the tables of the finished ones and prints the --resume command."""


@click.command()
@click.argument("grid_file", metavar="GRID", shell_complete=completions("sweep"))
@cell_runner_options
@click.option("--resume", is_flag=True,
              help="Continue a search directory: finished cells are kept, the searches "
                   "replayed from them.")
@click.option("--retry-failed", is_flag=True, help="With --resume: run failed cells again.")
@click.option("-o", "--output", metavar="DIR",
              help="Search directory (default: results/sweeps/<grid name> under "
                   "$DDNN_HARNESS_RESULTS or .).")
@click.option("--map", "map_dir", metavar="SWEEP_DIR", default=None,
              type=click.Path(file_okay=False),
              help="Draw the curves over this sweep's map (e.g. results/sweeps/quick): its "
                   "training verdicts over the same axes and the searched field.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar (default: when stderr is a terminal).")
@click.option("--allow-short", is_flag=True, help=ALLOW_SHORT_HELP)
def boundary(grid_file: str, jobs: int | None, executor: str, scheduler: str | None,
             resume: bool, retry_failed: bool, output: str | None, map_dir: str | None,
             progress: bool | None, allow_short: bool = False) -> None:
    from harness.usecases import boundary as service, checks
    from harness.sweeps import sweepdir

    try:
        prepared = service.prepare(grid_file, Path(output) if output else None, checks.CLI,
                                   jobs=jobs, executor=executor, scheduler=scheduler,
                                   resume=resume, retry_failed=retry_failed,
                                   map_dir=Path(map_dir) if map_dir else None,
                                   allow_short=allow_short)
    except (ConfigError, sweepdir.SweepError) as e:
        fail(e)
    grid, out, jobs = prepared.grid, prepared.out, prepared.jobs
    spec = grid.search
    n, t = len(service.search_points(grid)), len(spec.thresholds)
    click.echo(f"boundary {shorten(grid.name)}: {n} point{'s' if n != 1 else ''} x {t} "
               f"threshold{'s' if t != 1 else ''}, {spec.field} in [{spec.lo:g}, {spec.hi:g}] "
               f"to within {within(spec)}; {jobs} at a time on {executor}; {out}", err=True)
    resume_cmd = resume_command("boundary", grid_file, out)
    try:
        report = service.run(prepared, progress)
    except (sweepdir.SweepError, ConfigError) as e:
        fail(e)
    except KeyboardInterrupt:
        hint = f"; continue with: {resume_cmd}" if (out / "sweep.json").is_file() else ""
        fail(f"interrupted: the finished cells are kept{hint}", EXIT_INTERRUPTED)
    _print_boundary(report.table)
    click.echo(f"{report.cells} cells used, {report.ran} run now, {report.failed} failed; "
               f"{report.cpu_s:.1f} s of simulation CPU, {report.wall_s:.1f} s wall", err=True)
    click.echo(f"results: {out}")
    if report.failed:
        sys.exit(1)


boundary.help = """Search, for each point of a grid's axes, where the training
slowdown crosses each threshold along one numeric field (the grid's [search]
table), by bisection over probes judged at 95 %; write boundary.parquet,
probes.parquet and boundary.png in the search directory. Exit 1 if a cell
failed.

GRID is a grid file with a [search] table, or a preset (boundary-quick).
`harness check GRID` says what it would search and its cost, running
nothing. Ctrl-C keeps the finished cells; --resume replays the searches from
them (same decisions) and runs only what is missing."""


def _print_boundary(table) -> None:
    """The boundary table: per point and threshold, the crossing and its bracket."""
    import pandas as pd

    shown = table.assign(threshold=[f"{100 * t:g} %" for t in table["threshold"]])
    shown = shown.drop(columns=["field"])
    with pd.option_context("display.max_rows", None, "display.width", 200):
        click.echo(f"where the slowdown crosses each threshold along "
                   f"{table['field'].iloc[0] if len(table) else '?'} (crossing: interpolated "
                   "in the bracket [low, high]; band: the undecided probes in it):")
        click.echo(shown.to_string(index=False, float_format=lambda v: f"{v:.4g}"))


def _print_counts(report) -> None:
    parts = [f"{report.ran} cells run"]
    if report.done_before:
        parts.append(f"{report.done_before} already done")
    if report.failed_before:
        parts.append(f"{report.failed_before} failed before (not run again; --resume "
                     "--retry-failed runs them)")
    if report.invalid:
        parts.append(f"{report.invalid} invalid (not run)")
    click.echo(f"{', '.join(parts)}; {len(report.failed)} failed; {report.wall_s:.1f} s wall",
               err=True)


def _print_deltas(means, keys: list[str]) -> None:
    """Each point's changes vs the reference arm: change [95 % interval] verdict
    (harness.analysis.stats); undecided verdicts end in '?' or name two classes."""
    from harness.analysis.tables import POINT_LABEL

    shown = {"iteration_time": "iteration", "fct_small_mean": "small FCT",
             "fct_large_mean": "large FCT"}
    # the tails, on a line of their own under each point (stats: p99 / p999 rules)
    tails = {"iteration_time_p99": "iteration p99", "fct_small_p99": "small FCT p99",
             "fct_large_p99": "large FCT p99"}
    rows = means[means["metric"].isin({**shown, **tails})]
    if rows.empty or "change" not in rows:
        return

    def fmt(r) -> str:
        if r["change"] == float("inf"):
            return "stalled"
        if not r["change"] == r["change"]:   # NaN
            return "n/a"
        if not r["change_low"] == r["change_low"]:   # too few pairs for an interval
            from harness.analysis import stats

            return f"{100 * r['change']:+.1f} % ({stats.too_few_words(r['metric'], r['samples'])})"
        text = (f"{100 * r['change']:+.1f} % [{100 * r['change_low']:+.1f}, "
                f"{100 * r['change_high']:+.1f}] {r['verdict']}")
        to_decide = r.get("seeds_to_decide", float("nan"))
        if to_decide == to_decide:   # undecided, with a projection (harness.analysis.stats)
            text += (f" (~{to_decide:.0f} seeds to decide)" if to_decide < 1000
                     else " (1000+ seeds to decide)" if to_decide != float("inf")
                     else " (on a class boundary)")
        return text

    click.echo("change vs the reference arm, pooled over seeds [95 % interval] verdict:")
    for key, group in rows.groupby([*keys, "arm"], sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        # a labelled point by its label; fields a point does not set (NaN) left out
        named = [(k, v) for k, v in zip([*keys, "arm"], key)
                 if (k in (POINT_LABEL, "arm") or POINT_LABEL not in keys)
                 and v == v]
        label = ", ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in named)
        parts = {r["metric"]: fmt(r) for r in group.to_dict("records")}
        seeds = int(group["seeds"].max()) if group["seeds"].notna().any() else 0
        click.echo(f"  {label} ({seeds} seed{'s' if seeds != 1 else ''}): "
                   + "; ".join(f"{shown[m]} {parts[m]}" for m in shown if m in parts))
        if any(m in parts for m in tails):
            click.echo("    tails: " + "; ".join(f"{tails[m]} {parts[m]}" for m in tails
                                                 if m in parts))
