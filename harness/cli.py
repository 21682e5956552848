"""The `harness` command: thin wrappers that parse, call, and print."""

from __future__ import annotations

import json

import sys
from pathlib import Path

import click

from harness.config import REPO_DIR, ConfigError


def _fail(message: str, code: int = 2) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


@click.group()
@click.version_option(package_name="ddnn-harness")
def main() -> None:
    """ns-3 experiments: can DNN training traffic go at lower priority without
    slowing training, while other tenants' flows finish faster?"""


@main.command()
@click.argument("scenario", required=False, type=click.Path(dir_okay=False))
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a scenario field, e.g. --set background.rate=92 (repeatable).")
@click.option("-o", "--output", type=click.Path(file_okay=False),
              help="Run directory (default: results/runs/<name>-<digest>).")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar (default: when stderr is a terminal).")
@click.pass_obj
def run(obj: dict | None, scenario: str | None, overrides: tuple[str, ...],
        output: str | None, progress: bool | None) -> None:
    """Run one scenario (default: a small built-in one) and write its results."""
    # obj: from a program that calls main(obj={"on_phase": ...}) (python -m bench)
    from harness import ns3
    from harness.config import load_scenario
    from harness.run import execute, plan, write_run_dir

    try:
        p = plan(load_scenario(scenario, list(overrides)))
    except ConfigError as e:
        _fail(str(e))
    sc = p.scenario
    click.echo(f"scenario {sc.name!r} (seed {sc.seed}, digest {sc.digest()}): "
               f"{p.topology.kind} with {p.topology.n_hosts} hosts, {p.run.duration:g} s "
               f"simulated, {len(p.flows)} background flows "
               f"(lambda {p.background_rate:.1f}/s per host, load {p.background_load:.1%})"
               + (f"; scaled down {sc.scale}x (rates and sizes / {sc.scale}, times kept)"
                  if sc.scale > 1 else ""),
               err=True)
    try:
        result = execute(p, progress=progress, on_phase=(obj or {}).get("on_phase"))
    except ns3.Ns3LoadError as e:
        _fail(str(e), 3)
    out = Path(output) if output else REPO_DIR / "results" / "runs" / f"{sc.name}-{sc.digest()}"
    write_run_dir(result, out)
    _print_summary(result.summary, result.manifest)
    click.echo(f"results: {out}")
    if result.summary["completion_ratio"] < 1.0:
        click.echo(f"WARNING: {result.summary['measured_flows'] - result.summary['completed_flows']}"
                   f" measured flows did not complete (completion ratio "
                   f"{result.summary['completion_ratio']:.3f}): lengthen run.cooldown or lower "
                   "the load", err=True)
    if result.summary["socket_errors"]:
        click.echo(f"WARNING: {result.summary['socket_errors']} flows hit socket errors "
                   "(see the error column of flows.parquet)", err=True)


@main.command()
@click.option("--layers", "n_layers", type=int, default=50, show_default=True,
              help="Number of layers L.")
@click.option("--model-bytes", type=float, default=1e8, show_default=True,
              help="Model size M in bytes (e.g. 1e8).")
@click.option("--compute-ms", type=float, help="Iteration compute time T in ms.")
@click.option("--ratio", type=float,
              help="Compute-to-network ratio R instead of --compute-ms: T = R x ring time.")
@click.option("--workers", type=int, default=8, show_default=True,
              help="Ring size N, for --ratio.")
@click.option("--link-rate", default="10Gbps", show_default=True, help="Link rate, for --ratio.")
@click.option("--check", "check_file", type=click.Path(dir_okay=False),
              help="Validate an existing profile CSV instead of generating one.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the profile CSV here (default: print it).")
def profile(n_layers: int, model_bytes: float, compute_ms: float | None, ratio: float | None,
            workers: int, link_rate: str, check_file: str | None, output: str | None) -> None:
    """Generate a resnet50-like profile (SPEC §2) for any L, M and T or R,
    or check a profile CSV (layer, bytes, fp_ms, bp_ms)."""
    from harness import profiles
    from harness.config import parse_rate

    try:
        if check_file:
            prof = profiles.load_profile(check_file)
        else:
            if (compute_ms is None) == (ratio is None):
                _fail("give exactly one of --compute-ms and --ratio")
            if ratio is not None:
                compute_ms = profiles.compute_ms_for_ratio(
                    ratio, model_bytes, workers, parse_rate(link_rate, "--link-rate"))
            prof = profiles.resnet50_like(n_layers, model_bytes, compute_ms)
    except (profiles.ProfileError, ValueError) as e:
        _fail(str(e))
    buffers = profiles.fuse(prof)
    click.echo(f"profile {prof.name}: {prof.n_layers} layers, {prof.model_bytes:,} B, "
               f"compute {prof.compute_ms:.3f} ms, largest layer {prof.largest_layer:,} B, "
               f"{len(buffers)} fusion buffers of <= {profiles.fusion_buffer_bytes(prof):,} B",
               err=True)
    if check_file:
        return
    if output:
        click.echo(f"wrote {profiles.save_profile(prof, output)}", err=True)
    else:
        click.echo(prof.to_frame().to_csv(index=False), nl=False)


@main.command()
@click.argument("grid_file", metavar="GRID")
@click.option("-j", "--jobs", type=click.IntRange(1), default=None,
              help="Cells run at once (default: CPU count).")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local",
              show_default=True, help="Forked local processes, or a Dask cluster.")
@click.option("--scheduler", metavar="ADDRESS",
              help="Dask scheduler address (default with --executor dask: a LocalCluster).")
@click.option("--resume", is_flag=True, help="Continue a sweep directory: run unfinished cells.")
@click.option("--retry-failed", is_flag=True, help="With --resume: run failed cells again.")
@click.option("-o", "--output", type=click.Path(file_okay=False),
              help="Sweep directory (default: results/sweeps/<grid name>).")
@click.option("--max-seeds", type=click.IntRange(1), default=None, metavar="N",
              help="Add seeds to points whose verdict is undecided at 95 %, up to N seeds "
                   "per point (default: the grid's [adaptive] max_seeds, else off).")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar (default: when stderr is a terminal).")
def sweep(grid_file: str, jobs: int | None, executor: str, scheduler: str | None, resume: bool,
          retry_failed: bool, output: str | None, max_seeds: int | None,
          progress: bool | None) -> None:
    """Run a grid of scenarios (GRID: a file, or a preset in workloads/sweeps) and
    write summary.parquet and deltas.parquet; exit 1 if any cell failed."""
    import os

    from harness import sweep as sweeps

    try:
        grid = sweeps.load_grid(grid_file)
        out = Path(output) if output else sweeps.default_dir(grid)
        cells = sweeps.expand(grid)
    except ConfigError as e:
        _fail(str(e))
    jobs = jobs or os.cpu_count() or 1
    points = len({json.dumps(c.point, default=str) for c in cells})
    arms = len({c.arm for c in cells})
    click.echo(f"sweep {grid.name!r}: {len(cells)} cells ({points} points incl. seeds, "
               f"{arms} arms), {jobs} at a time on {executor}; {out}", err=True)
    try:
        report = sweeps.run_sweep(grid, out, jobs, executor, scheduler, resume, retry_failed,
                                  progress, cells, max_seeds)
    except (sweeps.SweepError, ConfigError) as e:
        _fail(str(e))
    summary = report.tables["summary"]
    click.echo(f"{report.ran} cells run, {report.skipped} already done or failed before, "
               f"{len(report.failed)} failed; {report.wall_s:.1f} s wall", err=True)
    for _, row in summary[summary["status"] == "failed"].iterrows():
        first = str(row["error"]).strip().splitlines()[0] if row["error"] else ""
        click.echo(f"  failed {row['cell']}: {first}", err=True)
    if "deltas_mean" in report.tables:
        _print_deltas(report.tables["deltas_mean"], [f for f in grid.axis_fields
                                                      if f != sweeps.SEED_AXIS])
    click.echo(f"results: {out}")
    if report.failed:
        sys.exit(1)


def _print_deltas(means, keys: list[str]) -> None:
    """Each point's changes vs the reference arm: change [95 % interval] verdict
    (harness.stats); undecided verdicts end in '?' or name two classes."""
    from harness import sweep as sweeps

    shown = {"iteration_time": "iteration", "fct_small_mean": "small FCT",
             "fct_large_mean": "large FCT"}
    rows = means[means["metric"].isin(shown)]
    if rows.empty or "change" not in rows:
        return

    def fmt(r) -> str:
        if r["change"] == float("inf"):
            return "stalled"
        if not r["change"] == r["change"]:   # NaN
            return "n/a"
        return (f"{100 * r['change']:+.1f} % [{100 * r['change_low']:+.1f}, "
                f"{100 * r['change_high']:+.1f}] {r['verdict']}")

    click.echo("change vs the reference arm, pooled over seeds [95 % interval] verdict:")
    for key, group in rows.groupby([*keys, "arm"], sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        # a labelled point by its label; fields a point does not set (NaN) left out
        named = [(k, v) for k, v in zip([*keys, "arm"], key)
                 if (k in (sweeps.POINT_LABEL, "arm") or sweeps.POINT_LABEL not in keys)
                 and v == v]
        label = ", ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in named)
        parts = {r["metric"]: fmt(r) for r in group.to_dict("records")}
        seeds = int(group["seeds"].max()) if group["seeds"].notna().any() else 0
        click.echo(f"  {label} ({seeds} seed{'s' if seeds != 1 else ''}): "
                   + "; ".join(f"{shown[m]} {parts[m]}" for m in shown if m in parts))


@main.command()
@click.argument("directory", type=click.Path(file_okay=False, exists=True))
@click.option("-o", "--output", type=click.Path(file_okay=False),
              help="Where the figures go (default: DIRECTORY/plots).")
@click.option("--format", "formats", multiple=True, default=("png", "pdf"), show_default=True,
              type=click.Choice(["png", "pdf", "svg"]), help="Figure formats (repeatable).")
@click.option("--cell", "cells", multiple=True, metavar="ID",
              help="Sweep directories: a cell (id or unique prefix) for the FCT CDFs "
                   "(repeatable; default: both arms of the highest-load, lowest-R point).")
def plot(directory: str, output: str | None, formats: tuple[str, ...],
         cells: tuple[str, ...]) -> None:
    """Figures of a run directory (training timeline, FCT CDFs, utilisation) or of
    a sweep directory, one holding sweep.json (operating-boundary map, changes per
    R, FCT CDFs of chosen cells, utilisation per application)."""
    from harness import plots

    directory_path = Path(directory)
    out = Path(output) if output else None
    try:
        if (directory_path / "sweep.json").is_file():
            written = plots.plot_sweep(directory_path, out, tuple(formats), list(cells) or None)
        elif cells:
            _fail(f"--cell applies to sweep directories; {directory} has no sweep.json")
        else:
            written = plots.plot_run(directory_path, out, tuple(formats))
    except (FileNotFoundError, plots.UnknownCellError) as e:
        _fail(str(e))
    for path in written:
        click.echo(str(path))


def _print_summary(summary: dict, manifest: dict) -> None:
    click.echo(f"{'class':<8}{'flows':>7}{'mean FCT ms':>13}{'p50 ms':>10}{'p99 ms':>10}"
               f"{'mean slowdown':>15}")
    for cls in ("small", "medium", "large", "all"):
        s = summary["fct"][cls]
        if not s["count"]:
            click.echo(f"{cls:<8}{0:>7}")
            continue
        click.echo(f"{cls:<8}{s['count']:>7}{s['mean_fct_s'] * 1e3:>13.3f}"
                   f"{s['p50_fct_s'] * 1e3:>10.3f}{s['p99_fct_s'] * 1e3:>10.3f}"
                   f"{s['mean_slowdown']:>15.2f}")
    tr = summary.get("training")
    if tr:
        job = f"training ({tr.get('architecture', 'ring')}, {tr.get('policy', 'fifo')})"
        if tr["iterations"]:
            click.echo(f"{job}: {tr['iterations']} iterations in the window, mean "
                       f"{tr['mean_iteration_s'] * 1e3:.3f} ms, p50 {tr['p50_iteration_s'] * 1e3:.3f}"
                       f" ms, p99 {tr['p99_iteration_s'] * 1e3:.3f} ms")
        else:
            click.echo(f"{job}: no iteration completed inside the measurement window")
    util = summary.get("host_uplink_utilization", {})
    if util:
        click.echo("host uplink utilisation: " + ", ".join(f"{app} {u:.1%}"
                                                          for app, u in util.items()))
    click.echo(f"completion {summary['completed_flows']}/{summary['measured_flows']} measured "
               f"flows; {summary['events']:,} events, {manifest['events_per_s']:,.0f} events/s, "
               f"{manifest['sim_s_per_wall_s']:.3f} simulated s per wall s; "
               f"start-up {manifest['startup_s']:.2f} s")


if __name__ == "__main__":
    main()
