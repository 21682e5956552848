"""Commands over a scenario's jobs, a model profile and finished sweeps:
`harness alone`, `profile`, `cache` (and `reference`, its old name, hidden),
`plot`, `frontier` and `report` (harness.usecases: alone, profile, results).
Registered on the group by harness.cli."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli_common import ALLOW_SHORT_HELP, completions, fail, failed_write
from harness.config.errors import ConfigError


@click.command()
@click.argument("scenario", shell_complete=completions("scenario"))
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a scenario field (repeatable), as for `harness run`.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Also write the table as CSV here: a new file, or one this command "
                   "wrote (replaced).")
@click.option("--allow-short", is_flag=True, help=ALLOW_SHORT_HELP)
def alone(scenario: str, overrides: tuple[str, ...], output: str | None,
          allow_short: bool = False) -> None:
    """Each job's slowdown against the same job alone ([[training]]): SCENARIO
    runs once with every job, then once per job with the others disabled (same
    placement, ports, seed and background); prints together / alone / slowdown."""
    from harness.usecases import alone as service, checks

    try:  # the output is checked before anything runs; only an earlier table is replaced
        out = service.prepare(Path(output) if output else None, checks.CLI, scenario,
                              list(overrides), allow_short)
        table = service.slowdowns(scenario, list(overrides))
    except ConfigError as e:
        fail(e)
    if out is not None:   # before printing: a full stdout leaves the table written
        try:
            service.write(table, out)
        except OSError as e:  # checked before the runs: a race, or a disk filled since
            fail(f"-o: writing {out} failed after the runs ({e.strerror or e}); nothing "
                 "was written", 1)
    click.echo(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


@click.command()
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
@click.option("--model", "model", metavar="NAME|FILE",
              help="A transformer by its architecture instead (a name of workloads/models/, "
                   "e.g. gpt2-125m, llama-7b, or a .toml file): each layer's gradient bytes "
                   "and FLOPs; with --accelerator.")
@click.option("--accelerator", metavar="NAME|FILE",
              help="What computes --model's layers (a name of workloads/accelerators/, e.g. "
                   "h100, or a .toml file: peak_flops, efficiency).")
@click.option("--efficiency", type=float,
              help="The share of the accelerator's peak a step reaches, instead of its file's.")
@click.option("--check", "check_file", type=click.Path(dir_okay=False),
              help="Validate an existing profile CSV instead of generating one (it only "
                   "reads: no other option goes with it).")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the profile CSV here: a new file, or one this command wrote "
                   "(default: print it).")
def profile(n_layers: int, model_bytes: float, compute_ms: float | None, ratio: float | None,
            workers: int, link_rate: str, model: str | None, accelerator: str | None,
            efficiency: float | None, check_file: str | None, output: str | None) -> None:
    """Generate a resnet50-like profile for any L, M and T or R, a
    transformer's from its architecture (--model, --accelerator), or check
    a profile CSV (layer, bytes, fp_ms, bp_ms)."""
    from harness.usecases import profile as service
    from harness.traffic import profiles

    if check_file:
        _check_reads_only()
    if model or accelerator or efficiency is not None:
        _check_model_options(model, accelerator)
    try:
        # the output first: only a profile the harness wrote is replaced
        out = service.output(output if not check_file else None)
        if check_file:
            prof = service.load(check_file)
        elif model:
            prof = service.from_model(model, accelerator, efficiency)
        else:
            prof = service.generate(n_layers, model_bytes, compute_ms, ratio, workers,
                                    link_rate)
        if out is not None:
            service.check_room(out, prof)
    except (profiles.ProfileError, ValueError) as e:
        fail(e)
    buffers, buffer_bytes = service.fusion(prof)
    click.echo(f"profile {prof.name}: {prof.n_layers} layers, {prof.model_bytes:,} B, "
               f"compute {prof.compute_ms:.3f} ms, largest layer {prof.largest_layer:,} B, "
               f"{buffers} fusion buffers of <= {buffer_bytes:,} B", err=True)
    if check_file:
        return
    if out is not None:
        click.echo(f"wrote {service.save(prof, out)}", err=True)
    else:
        click.echo(prof.to_frame().to_csv(index=False), nl=False)


def _given(keep) -> list[str]:
    """The options of this command given on its command line (not left at
    their defaults) whose parameter name `keep` accepts, by their first flag."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    return [p.opts[0] for p in ctx.command.params if keep(p.name)
            and ctx.get_parameter_source(p.name) == ParameterSource.COMMANDLINE]


def _check_model_options(model: str | None, accelerator: str | None) -> None:
    """--model with --accelerator, and none of the generated profile's own
    options beside them (refused, not ignored)."""
    if not model or not accelerator:
        fail(f"{'--accelerator' if model else '--model'}: --model, --accelerator and "
             "--efficiency go together: give --model NAME and --accelerator NAME")
    given = _given(lambda name: name in ("n_layers", "model_bytes", "compute_ms", "ratio",
                                         "workers", "link_rate"))
    if given:
        fail(f"{given[0]}: --model computes the layers, their bytes and times from the "
             f"architecture; leave {', '.join(given)} out")


def _check_reads_only() -> None:
    """`harness profile --check` only reads: an option that generates or
    writes (-o, --layers, ...) given beside it is refused, not ignored."""
    given = _given(lambda name: name != "check_file")
    if given:
        fail(f"{given[0]}: --check only reads a profile (nothing is generated or written); "
              f"leave {', '.join(given)} out, or drop --check to generate one")


@click.command()
@click.argument("directory", metavar="SWEEP", type=click.Path(file_okay=False, exists=True))
@click.option("-o", "--output", metavar="DIR", required=True,
              help="A new directory for the cached cells.")
def cache(directory: str, output: str) -> None:
    """Keep the cells of a finished sweep's smallest scale (its reference
    fidelity) as cached cells in DIR, compact: per cell its summary, config
    and manifest, the iterations and the flow columns the paired intervals
    need (and a service's requests and stream packets, whole). Of a grid
    without a scale axis, its finished cells: a long sweep kept in parts.
    `harness sweep GRID --cached DIR` then takes those cells from DIR and
    runs only the others."""
    from harness.usecases import results

    try:
        n = results.export_cache(Path(directory), Path(output))
    except ConfigError as e:
        fail(e)
    click.echo(f"{n} cached cells -> {output}")


#: `harness reference`, the old name of `harness cache` (cached cells were
#: called reference results): the same command, left out of --help
reference = click.Command(
    "reference", callback=cache.callback, params=cache.params, hidden=True,
    short_help="The old name of `harness cache`.",
    help="The old name of `harness cache` (kept for the scripts that call it): keep the "
         "cells of a finished sweep's smallest scale as cached cells in DIR, which "
         "`harness sweep GRID --cached DIR` takes instead of running them.")


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, exists=True))
@click.option("-o", "--output", type=click.Path(file_okay=False),
              help="Where the figures go: a new directory or one holding only the harness's "
                   "figures (default: DIRECTORY/plots).")
@click.option("--format", "formats", multiple=True, default=("png", "pdf"), show_default=True,
              type=click.Choice(["png", "pdf", "svg"]), help="Figure formats (repeatable).")
@click.option("--cell", "cells", multiple=True, metavar="ID",
              help="Sweep directories: a cell (id or unique prefix) for the FCT CDFs "
                   "(repeatable; default: both arms of the highest-load, lowest-R point).")
@click.option("--metric", "metrics", metavar="NAME", multiple=True,
              help="Sweep directories: only the map of this metric of deltas_mean "
                   "(e.g. fct_small_p99, iteration_time_p99; with services query_p99, "
                   "rpc_slo_attainment), as map-NAME (repeatable: a map each).")
def plot(directory: str, output: str | None, formats: tuple[str, ...],
         cells: tuple[str, ...], metrics: tuple[str, ...] = ()) -> None:
    """Figures of a run directory (training timeline, FCT CDFs, utilisation) or of
    a sweep directory, one holding sweep.json (operating-boundary map, changes per
    R, FCT CDFs of chosen cells, utilisation per application; with --metric,
    the map of any metric of its deltas_mean instead)."""
    from harness.outputs import plots
    from harness.usecases import results

    try:
        written = results.plot(directory, Path(output) if output else None, tuple(formats),
                               cells, metrics)
    except (FileNotFoundError, plots.UnknownCellError, ConfigError) as e:
        fail(e)  # ConfigError: the options, the output (outdir.check_figure_dir), before drawing
    except OSError as e:  # checked before drawing: a race, or a disk filled since
        fail(f"-o: writing the figures failed ({failed_write(e)}); the figures "
             "already written stay", 1)
    for path in written:
        click.echo(str(path))


@click.command()
@click.argument("directory", metavar="SWEEP_DIR",
                type=click.Path(file_okay=False, exists=True))
@click.option("-o", "--output", metavar="DIR",
              help="Where the figure goes: a new directory or one holding only the harness's "
                   "figures (default: SWEEP_DIR/plots).")
@click.option("--format", "formats", multiple=True, default=("png",), show_default=True,
              type=click.Choice(["png", "pdf", "svg"]), help="Figure formats (repeatable).")
def frontier(directory: str, output: str | None, formats: tuple[str, ...]) -> None:
    """Per point of a sweep, each arm's training slowdown against the
    background's small- and large-flow FCT gains (95 % intervals), the Pareto
    set and the best arm with a slowdown decided <= 1 % and a significant gain:
    printed, written as SWEEP_DIR/frontier.parquet and drawn as frontier.png
    (docs/user-guide/frontier.md)."""
    from harness.usecases import results

    try:
        _, lines, written = results.frontier(Path(directory), Path(output) if output else None,
                                             tuple(formats))
    except ConfigError as e:
        fail(e)
    except OSError as e:  # checked before drawing: a race, or a disk filled since
        fail(f"writing the frontier failed ({failed_write(e)}); what was "
              "already written stays", 1)
    for line in lines:
        click.echo(line)
    for path in written:
        click.echo(str(path))


@click.command()
@click.argument("directory", metavar="SWEEP_DIR",
                type=click.Path(file_okay=False, exists=True))
@click.option("-o", "--output", metavar="FILE",
              help="The HTML file (default: SWEEP_DIR/report.html).")
def report(directory: str, output: str | None) -> None:
    """Write one static HTML page of a sweep (open it in any browser, no server):
    the operating-boundary map and the sweep's figures, a drill-down per cell
    (FCT CDFs, iteration-time distribution, utilisation), and the manifest
    (versions, seeds, digests, cost)."""
    from harness.usecases import checks, results

    sweep_dir = Path(directory)
    try:
        out = results.report_target(sweep_dir, Path(output) if output else None, checks.CLI)
    except ConfigError as e:
        fail(e)
    click.echo(f"report: {results.write_report(sweep_dir, out)}")
