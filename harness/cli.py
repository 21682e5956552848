"""The `harness` command: thin wrappers that parse, call, and print.

Every kind of bad input ends the same way: one line `error: FIELD: what is
wrong and what is allowed` on stderr and exit code 2, before ns-3 starts
(click's own usage errors included, see _Cli). Ctrl-C ends with exit code 130.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import click

from harness import training
from harness.config import catalog
from harness.config.scenario import ConfigError, parse_time
from harness.config.errors import EXIT_BAD_INPUT, shorten, shorten_text
from harness.sweeps import adaptive_text

EXIT_INTERRUPTED = 130
ALLOW_SHORT_HELP = ("Run even where a training job's measurement window is shorter than one "
                    "of its iterations at the no-contention pace (refused otherwise).")


def _within(spec) -> str:
    """A search's tolerance in words: a width, or a factor with log spacing."""
    return f"a factor {spec.tolerance:g}" if spec.spacing == "log" else f"{spec.tolerance:g}"


def _fail(message, code: int = EXIT_BAD_INPUT) -> None:
    # one line, never a flood: a long value some check echoed whole is cut;
    # a ConfigError with others found in the same file: one line each
    for one in (message, *getattr(message, "more", ())):
        click.echo(f"error: {shorten_text(' '.join(str(one).split()))}", err=True)
    sys.exit(code)


def _refuse_short(p, allow_short: bool) -> None:
    """Stop (exit 2) before a run whose window cannot measure one training
    iteration (harness.engine.simulation.short_window), unless --allow-short."""
    from harness.engine.simulation import short_window

    problem = None if allow_short else short_window(p)
    if problem is not None:
        _fail(f"{problem}; --allow-short runs it anyway")


def _refuse_short_cells(cells, allow_short: bool) -> None:
    """The same for a grid's cells, before any runs: the first such cell
    named, and how many more."""
    short = [] if allow_short else [c for c in cells if c.scenario is not None and c.short]
    if short:
        first = short[0]
        field, _, problem = first.short.partition(": ")
        where = ", ".join([*(f"{k} = {v}" for k, v in first.point), *(
            [f"arm {first.arm}"] if first.arm else [])])
        more = f" and {len(short) - 1} more of the {len(cells)} cells" if len(short) > 1 else ""
        _fail(f"{field}: cell {first.id} ({where}){more}: {problem}; --allow-short runs "
              "them anyway")


def _names(names: list[str]) -> str:
    return ", ".join(names)


def _completions(*kinds: str):
    """A click shell_complete callback: the built-in names of `kinds`
    ("scenario", "sweep") starting with what was typed, then files (the
    shells fall back to file names when no name matches). Shell completion
    itself is click's: `_HARNESS_COMPLETE=bash_source harness`
    (docs/user-guide/shell-completion.md)."""
    from click.shell_completion import CompletionItem

    listers = {"scenario": catalog.scenario_names, "sweep": catalog.sweep_names}

    def complete(ctx, param, incomplete: str) -> list:
        items = [CompletionItem(incomplete, type="file")]
        seen: set[str] = set()
        for kind in kinds:
            for name in listers[kind]():
                if name.startswith(incomplete) and name not in seen:
                    seen.add(name)
                    items.append(CompletionItem(name, help=f"built-in {kind}"))
        return items

    return complete


class _Cli(click.Group):
    """click prints a usage error as four lines (usage, hint, blank, error);
    here it is one line like every other error, with the same exit code 2."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True,
             **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.ClickException as e:
            _fail(e.format_message(), e.exit_code)
        except ConfigError as e:  # any bad input a command did not catch itself
            _fail(e)         # (a corrupt table, an output path): one line too
        except click.Abort:  # Ctrl-C outside a command's own handling
            _fail("interrupted", EXIT_INTERRUPTED)
        except OSError as e:
            if not _printing(e):
                raise
            _silence_stdout()   # what is still buffered would fail again at exit
            _fail(f"stdout: writing the output failed ({e.strerror or e}); what was printed "
                  "is incomplete: print to a file or pipe with room (or use -o where the "
                  "command has it)")
        sys.exit(code if isinstance(code, int) else 0)


def _check_simulation_environment() -> None:
    """The cache and the compiler a simulation needs, before anything runs
    (harness.engine.ns3.check_environment: ConfigError naming the variable)."""
    from harness.engine import ns3

    ns3.check_environment()


def _printing(error: OSError) -> bool:
    """Whether `error` came from printing (click.echo): stdout on a full
    device (/dev/full, a full disk) or a closed pipe, not a file the command
    writes (those are checked before anything runs, outdir)."""
    tb, last = error.__traceback__, None
    while tb is not None:
        last, tb = tb.tb_frame, tb.tb_next
    return last is not None and last.f_code.co_name == "echo" \
        and last.f_globals.get("__name__") == "click.utils"


def _silence_stdout() -> None:
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (a test's buffer)
        pass


@click.group(cls=_Cli)
@click.version_option(package_name="ddnn-harness")
def main() -> None:
    """ns-3 experiments: can DNN training traffic go at lower priority without
    slowing training, while other tenants' flows finish faster?

    \b
    harness list                      what is built in
    harness check quick --sweep       a grid's cells and cost, nothing run
    harness run --set run.duration=0.3
    harness sweep quick && harness report results/sweeps/quick
    """
    from harness.config import environment

    environment.check()   # every switch, before any command (a bad one: one line, exit 2)


# --------------------------------------------------------------------------
# run


@main.command()
@click.argument("scenario", required=False, shell_complete=_completions("scenario"))
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a scenario field, e.g. --set background.rate=92 (repeatable).")
@click.option("-o", "--output", metavar="DIR",
              help="Run directory: new, empty or an earlier run directory (default: "
                   "results/runs/<name>-<digest> under $DDNN_HARNESS_RESULTS or .).")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar (default: when stderr is a terminal).")
@click.option("--allow-short", is_flag=True, help=ALLOW_SHORT_HELP)
@click.pass_obj
def run(obj: dict | None, scenario: str | None, overrides: tuple[str, ...],
        output: str | None, progress: bool | None, allow_short: bool = False) -> None:
    # obj: from a program that calls main(obj={"on_phase": ...}) (python -m bench)
    from harness.io import outdir
    from harness.config.scenario import load_scenario
    from harness.config.errors import Ns3LoadError
    from harness.engine.simulation import execute, output_bytes, plan, write_run_dir

    notes: list[str] = []
    try:
        _check_simulation_environment()
        p = plan(load_scenario(scenario, list(overrides), notes))
        _refuse_short(p, allow_short)
        sc = p.scenario
        out = outdir.check_run_dir(Path(output) if output else
                                   outdir.default_run_dir(sc.name, sc.digest()),
                                   size=output_bytes(p))
    except ConfigError as e:
        _fail(e)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    click.echo(f"scenario {shorten(sc.name)} (seed {sc.seed}, digest {sc.digest()}): "
               f"{p.topology.kind} with {p.topology.n_hosts} hosts, {_simulated(p)}, "
               f"{len(p.flows)} background flows "
               f"(lambda {p.background_rate:.1f}/s per host, load {p.background_load:.1%})"
               + (f"; scaled down {sc.scale}x (rates and sizes / {sc.scale}, times kept)"
                  if sc.scale > 1 else ""),
               err=True)
    from harness.sweeps.cost import long_run_note

    long_run = long_run_note(p)
    if long_run:
        click.echo(f"note: {long_run}", err=True)
    try:
        result = execute(p, progress=progress, on_phase=(obj or {}).get("on_phase"))
    except Ns3LoadError as e:
        _fail(str(e), 3)
    except KeyboardInterrupt:
        _fail("interrupted: the run stopped, nothing was written", EXIT_INTERRUPTED)
    try:
        write_run_dir(result, out)
    except (OSError, ConfigError) as e:  # checked before the run: a race, or a disk filled since
        _fail(f"-o: writing {out} failed after the run ({getattr(e, 'strerror', None) or e}); "
              "nothing was written", 1)
    _print_summary(result.summary, result.manifest)
    click.echo(f"results: {out}")
    if result.summary["completion_ratio"] < 1.0:
        click.echo(f"WARNING: {incomplete_flows(result.summary)}: lengthen run.cooldown or "
                   "lower the load", err=True)
    if result.summary["socket_errors"]:
        click.echo(f"WARNING: {result.summary['socket_errors']} flows hit socket errors "
                   "(see the error column of flows.parquet)", err=True)


run.help = f"""Run one scenario and write its run directory.

SCENARIO is a scenario file or a built-in name
({_names(catalog.scenario_names())}); default: default.
`harness list` describes them; `harness check` validates without running.

\b
A run shortened with --set run.duration alone to less than its warm-up +
cool-down scales both with the duration (a note says so)."""


# --------------------------------------------------------------------------
# check and list


@main.command()
@click.argument("target", required=False, metavar="SCENARIO|GRID",
                shell_complete=_completions("scenario", "sweep"))
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

    from harness.config.scenario import SCENARIOS_DIR, SWEEPS_DIR, read_toml
    from harness.sweeps.grid import load_grid

    try:
        kind = "grid" if as_sweep else "scenario"
        if not as_sweep and target is not None:
            path = Path(target)
            if path.is_file():  # a grid names its base scenario; a scenario never does
                kind = "grid" if "scenario" in read_toml(path, "file") else "scenario"
            elif not _builtin(SCENARIOS_DIR, target) and _builtin(SWEEPS_DIR, target):
                kind = "grid"
            elif _builtin(SCENARIOS_DIR, target) and _builtin(SWEEPS_DIR, target):
                click.echo(f"note: {target!r} is a scenario and a sweep preset; checking the "
                           f"scenario (the grid: harness check --sweep {target})", err=True)
        if kind == "grid":
            if target is None:
                _fail("--sweep: give the grid to check")
            if overrides:
                _fail("--set: applies to scenarios; a grid sets fields in its [set] table")
            failed = _check_grid(load_grid(target), jobs or os.cpu_count() or 1, as_json,
                                 allow_short)
        else:
            failed = _check_scenario(target, overrides, as_json, allow_short)
    except ConfigError as e:
        _fail(e)
    if failed:
        sys.exit(1)


check.help = f"""Validate a scenario or a grid and print it; run nothing.

A scenario ({_names(catalog.scenario_names())}, or a file) is summed up: what
would run (network, window, background, training) and its cost estimate;
--json prints the whole resolved scenario. A grid
({_names(catalog.sweep_names())}, or a file) is printed as its cells (invalid
ones with their error) with the sweep's cost estimate. Exit code 2: bad
input; 1: some cells are invalid (the sweep would record them failed and run
the others)."""


def _builtin(directory: Path, name: str) -> bool:
    return (directory / f"{name}.toml").is_file() or (directory / name).is_file()


def _check_scenario(target: str | None, overrides: tuple[str, ...], as_json: bool,
                    allow_short: bool = False) -> bool:
    from harness.config.scenario import load_scenario
    from harness.engine.simulation import plan
    from harness.sweeps.cost import Cost, predicted_bytes

    notes: list[str] = []
    p = plan(load_scenario(target, list(overrides), notes))
    for note in notes:
        click.echo(f"note: {note}", err=True)
    _refuse_short(p, allow_short)
    if as_json:
        click.echo(json.dumps(p.resolved(), indent=2, default=str))
    sc = p.scenario
    click.echo(f"scenario {shorten(sc.name)} is valid (digest {sc.digest()}): "
               f"{p.topology.kind} with "
               f"{p.topology.n_hosts} hosts, {_simulated(p)}, "
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

    from harness.sweeps.cost import SWEEP_START_S, Cost
    from harness.sweeps.grid import expand

    cells = expand(grid)
    _refuse_short_cells(cells, allow_short)
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

    from harness.sweeps.cost import SWEEP_START_S, Cost
    from harness.sweeps.searching import plan_search, search_points
    from harness.analysis.tables import SEED_AXIS

    spec = grid.search
    plan = plan_search(grid)
    cells = plan.end_cells
    rows = [{"cell": c.id, "arm": c.arm, **dict(c.point),
             "MB": round(c.predicted_bytes / 1e6, 1) if c.scenario else None,
             "status": "ok" if c.scenario else f"invalid: {c.error}"} for c in cells]
    err = as_json
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
    points = search_points(grid)
    fields = [f for f, _ in grid.axes if f != SEED_AXIS]
    thresholds = ", ".join(f"{100 * t:g} %" for t in spec.thresholds)
    first = len(dict(grid.axes)[SEED_AXIS])
    click.echo(f"grid {shorten(grid.name)}: a boundary search (harness boundary), run nothing "
               f"now: for each of {len(points)} point{'s' if len(points) != 1 else ''}"
               + (f" ({', '.join(fields)})" if fields else "")
               + f" and each threshold ({thresholds}), where the training slowdown of "
               f"{spec.arm} vs {grid.reference} crosses it along {spec.field} in "
               f"[{spec.lo:g}, {spec.hi:g}], to within {_within(spec)}", err=err)
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


@main.command()
@click.argument("scenario", shell_complete=_completions("scenario"))
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a scenario field (repeatable), as for `harness run`.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Also write the table as CSV here: a new file, or one this command "
                   "wrote (replaced).")
def alone(scenario: str, overrides: tuple[str, ...], output: str | None) -> None:
    """Each job's slowdown against the same job alone ([[training]]): SCENARIO
    runs once with every job, then once per job with the others disabled (same
    placement, ports, seed and background); prints together / alone / slowdown."""
    from harness.sweeps import alone as jobs_alone
    from harness.io import outdir

    try:  # the output is checked before anything runs; only an earlier table is replaced
        _check_simulation_environment()
        out = outdir.check_new_file(Path(output), "-o", jobs_alone.is_alone_table, 64 * 1024) \
            if output else None
        table = jobs_alone.slowdowns(scenario, list(overrides))
    except ConfigError as e:
        _fail(e)
    if out is not None:   # before printing: a full stdout leaves the table written
        try:
            outdir.write_file(out, table.to_csv(index=False))
        except OSError as e:  # checked before the runs: a race, or a disk filled since
            _fail(f"-o: writing {out} failed after the runs ({e.strerror or e}); nothing "
                  "was written", 1)
    click.echo(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


@main.command(name="docs")
@click.argument("page", required=False)
def docs_command(page: str | None) -> None:
    """Where the documentation is: its folder, or the file of PAGE (a path
    under docs/ with or without `docs/` and `.md`, e.g. performance/sweep-cost,
    or a file name: sweep-cost, quick-map.png). An installed wheel carries the
    pages (Markdown, read in place or in any viewer); in a checkout they are
    its docs/. The site (`mkdocs serve`) fills in the generated parts."""
    from harness.config.paths import DOCS_DIR

    if page is None:
        click.echo(DOCS_DIR)
        return
    files = sorted(p.relative_to(DOCS_DIR).as_posix() for p in DOCS_DIR.rglob("*")
                   if p.is_file() and p.suffix in (".md", ".png", ".json")
                   and p.relative_to(DOCS_DIR).parts[0] != "hooks")
    name = page.split("#")[0].removeprefix("docs/").strip("/")
    hits = [f for f in files if name in (f, f.removesuffix(".md"))]
    if not hits:  # a file name alone, when only one page has it
        hits = [f for f in files if name in (f.rsplit("/", 1)[-1],
                                             f.rsplit("/", 1)[-1].removesuffix(".md"))]
    if len(hits) != 1:
        pages = [f.removesuffix(".md") for f in files]
        pages += sorted({f.rsplit("/", 1)[-1] for f in pages})
        why = f"names {len(hits)} pages ({', '.join(hits)})" if hits else "no such page"
        _fail(f"PAGE: {shorten(page)}: {why}{_did_you_mean(name, pages)}; `harness docs` "
              f"prints the folder ({DOCS_DIR})")
    click.echo(DOCS_DIR / hits[0])


@main.command(name="list")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option("--long", "whole", is_flag=True,
              help="Each description whole (every paragraph of its file's comment), not "
                   "cut to one line.")
def list_builtins(names: tuple[str, ...], whole: bool) -> None:
    """What is built in: scenarios, sweep presets, topologies, background
    workloads, model profiles, scheduling policies and other choices.
    With NAMEs: only those, each described whole."""
    import textwrap

    sections = catalog.sections(whole=whole or bool(names))
    if names:
        known = {e.name for s in sections for e in s.entries}
        for name in names:
            if name not in known:
                _fail(f"{name}: not a built-in name{_did_you_mean(name, known)}; "
                      "`harness list` lists them")
    import shutil

    width_all = max(60, min(100, shutil.get_terminal_size((100, 24)).columns))
    for section in sections:
        entries = [e for e in section.entries if not names or e.name in names]
        if names and not entries:
            continue
        click.echo(f"{section.title} ({section.how}):")
        width = max((len(e.name) for e in entries), default=0)
        if not entries:
            click.echo("  (none)")
        for entry in entries:
            if not (whole or names):
                click.echo(f"  {entry.name:<{width}}  {entry.description}")
                continue
            click.echo(f"  {entry.name}")
            for paragraph in entry.description.split("\n"):
                click.echo(textwrap.fill(paragraph, width_all, initial_indent="      ",
                                         subsequent_indent="      "))
        click.echo()


def _did_you_mean(word: str, choices) -> str:
    from harness.config.schema.base import did_you_mean

    return did_you_mean(word, choices)


@main.command()
@click.option("--grid", "of_grid", is_flag=True, help="The schema of grid files instead.")
def schema(of_grid: bool) -> None:
    """Print the JSON Schema of scenario files (or grid files): what an editor
    checks a TOML file against (docs/schema/, docs/user-guide/scenarios.md)."""
    import json

    from harness.config.schema import json_schema

    click.echo(json.dumps(json_schema("grid" if of_grid else "scenario"), indent=2))


# --------------------------------------------------------------------------
# profile


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
              help="Validate an existing profile CSV instead of generating one (it only "
                   "reads: no other option goes with it).")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the profile CSV here: a new file, or one this command wrote "
                   "(default: print it).")
def profile(n_layers: int, model_bytes: float, compute_ms: float | None, ratio: float | None,
            workers: int, link_rate: str, check_file: str | None, output: str | None) -> None:
    """Generate a resnet50-like profile for any L, M and T or R,
    or check a profile CSV (layer, bytes, fp_ms, bp_ms)."""
    import math

    from harness.io import outdir
    from harness.traffic import profiles
    from harness.config.scenario import parse_rate

    if check_file:
        _check_reads_only()
    try:
        # the output first: only a profile the harness wrote is replaced
        out = outdir.check_new_file(Path(output), "-o", profiles.is_generated) \
            if output and not check_file else None
        if check_file:
            prof = profiles.load_profile(check_file)
        else:
            if (compute_ms is None) == (ratio is None):
                _fail("give exactly one of --compute-ms and --ratio")
            for name, value in (("--model-bytes", model_bytes), ("--compute-ms", compute_ms),
                                ("--ratio", ratio)):
                if value is not None and not math.isfinite(value):
                    _fail(f"{name}: must be a finite number (got {value})")
                if value is not None and not value > 0:
                    _fail(f"{name}: must be > 0 (got {value:g})")
            # the profile's bounds (profiles.check_limits), named as options and
            # checked before a layer is made
            if not 2 <= n_layers <= profiles.MAX_LAYERS:
                _fail(f"--layers: must be 2 to {profiles.MAX_LAYERS:,} (got {n_layers:,})")
            if not (model_bytes.is_integer() and model_bytes <= profiles.MAX_MODEL_BYTES):
                _fail(f"--model-bytes: must be a whole number of bytes, at most "
                      f"{profiles.MAX_MODEL_BYTES:,} (ns-3 counts bytes as int64; got "
                      f"{model_bytes:g})")
            if 2 * int(model_bytes) < 9 * n_layers:   # resnet50_like's smallest layer: 2M / 9L
                _fail(f"--model-bytes: {model_bytes:g} B is too small for {n_layers} layers; "
                      f"at least {math.ceil(9 * n_layers / 2):,} (or fewer --layers)")
            if ratio is not None and workers < 2:
                _fail(f"--workers: the ring needs at least 2 workers (got {workers})")
            if ratio is not None:
                compute_ms = profiles.compute_ms_for_ratio(
                    ratio, model_bytes, workers, parse_rate(link_rate, "--link-rate"))
            try:
                prof = profiles.resnet50_like(n_layers, model_bytes, compute_ms)
            except profiles.ProfileError as e:   # a layer's compute past ns-3's clock
                _fail(f"{'--ratio' if ratio is not None else '--compute-ms'}: {e}")
        if out is not None:
            outdir.check_space(out, len(profiles.profile_csv(prof).encode()), "-o", "the profile")
    except (profiles.ProfileError, ValueError) as e:
        _fail(e)
    buffers = profiles.fuse(prof)
    click.echo(f"profile {prof.name}: {prof.n_layers} layers, {prof.model_bytes:,} B, "
               f"compute {prof.compute_ms:.3f} ms, largest layer {prof.largest_layer:,} B, "
               f"{len(buffers)} fusion buffers of <= {profiles.fusion_buffer_bytes(prof):,} B",
               err=True)
    if check_file:
        return
    if out is not None:
        click.echo(f"wrote {profiles.save_profile(prof, out)}", err=True)
    else:
        click.echo(prof.to_frame().to_csv(index=False), nl=False)


def _check_reads_only() -> None:
    """`harness profile --check` only reads: an option that generates or
    writes (-o, --layers, ...) given beside it is refused, not ignored."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    given = [p.opts[0] for p in ctx.command.params if p.name != "check_file"
             and ctx.get_parameter_source(p.name) == ParameterSource.COMMANDLINE]
    if given:
        _fail(f"{given[0]}: --check only reads a profile (nothing is generated or written); "
              f"leave {', '.join(given)} out, or drop --check to generate one")


def _resume_command(name: str, grid_file: str, out: Path) -> str:
    """The command that continues this sweep or search after Ctrl-C:
    `harness NAME GRID -o OUT --resume` and every other option the user gave
    (-j, --executor, --scheduler, --max-seeds, --budget, --reference, --map,
    --progress, ...), with the value it was given; options left at their
    defaults stay out, so they keep their defaults."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    words = ["harness", name, shlex.quote(grid_file), "-o", shlex.quote(str(out)), "--resume"]
    for param in ctx.command.params:
        if not isinstance(param, click.Option) or param.name in ("output", "resume"):
            continue
        if ctx.get_parameter_source(param.name) in (ParameterSource.DEFAULT, None):
            continue
        value, flag = ctx.params[param.name], max(param.opts, key=len)
        if param.is_flag and param.secondary_opts:   # --progress/--no-progress
            words.append(flag if value else max(param.secondary_opts, key=len))
        elif param.is_flag:
            words += [flag] if value else []
        else:
            for one in (value if param.multiple else (value,)):
                words += [flag, shlex.quote(str(one))]
    return " ".join(words)


def _cell_runner_options(command):
    """-j, --executor and --scheduler: how the cells of a sweep or a search run."""
    for option in reversed((
            click.option("-j", "--jobs", type=click.IntRange(1), default=None,
                         help="Cells run at once (default: CPU count)."),
            click.option("--executor", type=click.Choice(["local", "dask"]), default="local",
                         show_default=True, help="Forked local processes, or a Dask cluster."),
            click.option("--scheduler", metavar="ADDRESS",
                         help="Dask scheduler address (default with --executor dask: a "
                              "LocalCluster)."))):
        command = option(command)
    return command


# --------------------------------------------------------------------------
# sweep


@main.command()
@click.argument("grid_file", metavar="GRID", shell_complete=_completions("sweep"))
@_cell_runner_options
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
@click.option("--reference", "reference_dir", metavar="DIR", default=None,
              help="Reference results (made with `harness reference`, or the name of one "
                   "kept with the harness, e.g. validate) for the cells of the grid's "
                   "smallest scale: those cells are taken from DIR, not run.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar (default: when stderr is a terminal).")
@click.option("--allow-short", is_flag=True, help=ALLOW_SHORT_HELP)
def sweep(grid_file: str, jobs: int | None, executor: str, scheduler: str | None, resume: bool,
          retry_failed: bool, output: str | None, max_seeds: int | None, budget: str | None,
          reference_dir: str | None, progress: bool | None, allow_short: bool = False) -> None:
    import os

    from harness.io import outdir
    from harness.sweeps import sweepdir
    from harness.sweeps import sweeping
    from harness.sweeps.grid import check_adaptive, expand, load_grid
    from harness.analysis.tables import SEED_AXIS

    try:
        _check_simulation_environment()
        grid = load_grid(grid_file)
        if grid.search is not None:
            _fail(f"search: {grid_file} is a boundary search; run it with "
                  f"harness boundary {grid_file}")
        out = outdir.check_sweep_dir(Path(output) if output else sweepdir.default_dir(grid))
        if max_seeds:
            check_adaptive(dict(grid.axes), grid.reference, "--max-seeds")
        budget_s = None if budget is None else _time_option(budget, "--budget")
        cells = expand(grid)
        _refuse_short_cells(cells, allow_short)
        sweepdir.check_dir(out, grid, cells, resume)
        outdir.check_space(out, sweepdir.output_bytes_left(out, cells), "-o", "the sweep")
        if executor == "dask" and scheduler is not None:
            from harness.sweeps import executors

            executors.check_scheduler(scheduler)
        reference = None
        if reference_dir:
            from harness.sweeps import reference as references

            reference = references.resolve(reference_dir)
            taken = len(references.check(reference, grid, cells))
            click.echo(f"sweep {shorten(grid.name)}: {taken} cells from the reference results in "
                       f"{reference}", err=True)
    except (ConfigError, sweepdir.SweepError) as e:
        _fail(e)
    jobs = jobs or os.cpu_count() or 1
    points = len({json.dumps(c.point, default=str) for c in cells})
    arms = len({c.arm for c in cells})
    click.echo(f"sweep {shorten(grid.name)}: {len(cells)} cells ({points} points incl. seeds, "
               f"{arms} arms), {jobs} at a time on {executor}; {out}", err=True)
    resume_cmd = _resume_command("sweep", grid_file, out)
    try:
        report = sweeping.run_sweep(grid, out, jobs, executor, scheduler, resume, retry_failed,
                                  progress, cells, max_seeds, budget_s, reference)
    except (sweepdir.SweepError, ConfigError) as e:
        _fail(e)
    except sweeping.SweepInterrupted as e:
        r = e.report
        click.echo(f"interrupted: {r.ran} cells run now ({r.failed_now} failed), "
                   f"{r.unfinished} unfinished (stopped, not failed); tables of the finished "
                   f"cells written to {out}", err=True)
        _fail(f"interrupted; continue with: {resume_cmd}", EXIT_INTERRUPTED)
    except KeyboardInterrupt:
        hint = f"; continue with: {resume_cmd}" if (out / "sweep.json").is_file() else ""
        _fail(f"interrupted before any cell ran{hint}", EXIT_INTERRUPTED)
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

GRID is a grid file or a sweep preset ({_names(catalog.sweep_names())}).
`harness check --sweep GRID` lists its cells and cost without running them.
Ctrl-C stops the running cells (they stay unfinished, not failed), writes
the tables of the finished ones and prints the --resume command."""


@main.command()
@click.argument("grid_file", metavar="GRID", shell_complete=_completions("sweep"))
@_cell_runner_options
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
def boundary(grid_file: str, jobs: int | None, executor: str, scheduler: str | None,
             resume: bool, retry_failed: bool, output: str | None, map_dir: str | None,
             progress: bool | None) -> None:
    import os

    from harness.io import outdir
    from harness.sweeps import searching, sweepdir
    from harness.outputs.plots.boundary_figure import check_map
    from harness.analysis.tables import SEED_AXIS

    try:
        _check_simulation_environment()
        grid = load_grid_for_search(grid_file)
        searching.check_search(grid)     # every cell a probe may ask for
        out = outdir.check_sweep_dir(Path(output) if output else sweepdir.default_dir(grid))
        sweepdir.check_dir(out, grid, [], resume)
        searching.check_resume(out, grid, resume)
        plan = searching.plan_search(grid)
        outdir.check_space(out, sum(c.output_bytes for c in plan.end_cells) * 2, "-o",
                           "the search")
        fields = [f for f, _ in grid.axes if f != SEED_AXIS]
        if map_dir is not None:
            check_map(Path(map_dir), fields, grid.search.field, grid.search.arm)
        if executor == "dask" and scheduler is not None:
            from harness.sweeps import executors

            executors.check_scheduler(scheduler)
    except (ConfigError, sweepdir.SweepError) as e:
        _fail(e)
    jobs = jobs or os.cpu_count() or 1
    spec = grid.search
    n, t = len(searching.search_points(grid)), len(spec.thresholds)
    click.echo(f"boundary {shorten(grid.name)}: {n} point{'s' if n != 1 else ''} x {t} "
               f"threshold{'s' if t != 1 else ''}, {spec.field} in [{spec.lo:g}, {spec.hi:g}] "
               f"to within {_within(spec)}; {jobs} at a time on {executor}; {out}", err=True)
    resume_cmd = _resume_command("boundary", grid_file, out)
    try:
        report = searching.run_boundary(grid, out, jobs, executor, scheduler, resume,
                                        retry_failed, progress,
                                        map_dir=Path(map_dir) if map_dir else None,
                                        checked=True)
    except (sweepdir.SweepError, ConfigError) as e:
        _fail(e)
    except KeyboardInterrupt:
        hint = f"; continue with: {resume_cmd}" if (out / "sweep.json").is_file() else ""
        _fail(f"interrupted: the finished cells are kept{hint}", EXIT_INTERRUPTED)
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


def load_grid_for_search(grid_file: str):
    """A grid with a [search] table (a grid without one is a sweep)."""
    from harness.sweeps.grid import load_grid

    grid = load_grid(grid_file)
    if grid.search is None:
        raise ConfigError("search", f"missing: {grid_file} has no [search] table (a sweep: "
                          f"harness sweep {grid_file}); e.g. [search] field = "
                          '"background.rate", lo = 23, hi = 184, tolerance = 10')
    return grid


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


def _time_option(text: str, field: str) -> float:
    """A time given on the command line: "2h", "30min", "90s" or a bare number
    of seconds ("60")."""
    try:
        value = float(text)
    except ValueError:
        return parse_time(text, field)
    return parse_time(value, field)


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


def incomplete_flows(summary: dict) -> str:
    """'3 of 6,979 measured flows did not complete (99.96 % completed)': the
    percentage has the digits it needs to read below 100 % when it is."""
    n, done = summary["measured_flows"], summary["completed_flows"]
    return (f"{n - done:,} of {n:,} measured flow{'s' if n != 1 else ''} did not complete "
            f"({percent(done, n)} completed)")


def percent(part: int, whole: int) -> str:
    """part / whole as a percentage, never rounded up to 100 % (or down to 0 %)."""
    if not whole:
        return "100 %"
    value = 100 * part / whole
    for digits in range(1, 10):
        text = f"{value:.{digits}f}"
        if (part == whole or float(text) < 100) and (part == 0 or float(text) > 0):
            return f"{text} %"
    return f"{value!r} %"


def _simulated(p) -> str:
    if p.run.min_iterations and p.ideal_iteration_s:
        return (f"until {p.run.min_iterations} iterations are measured (~{p.expected_duration:.3g}"
                f" s at the job's no-contention pace, at most {p.run.duration:g} s) simulated")
    return f"{p.run.duration:g} s simulated"


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


@main.command()
@click.argument("directory", metavar="SWEEP", type=click.Path(file_okay=False, exists=True))
@click.option("-o", "--output", metavar="DIR", required=True,
              help="A new directory for the reference results.")
def reference(directory: str, output: str) -> None:
    """Keep the cells of a finished sweep's smallest scale (its reference
    fidelity) as compact tables in DIR: per cell its summary, config and
    manifest, the iterations and the flow columns the paired intervals need.
    `harness sweep GRID --reference DIR` then takes those cells from DIR and
    runs only the others."""
    from harness.sweeps import reference as references

    try:
        n = references.export(Path(directory), Path(output))
    except ConfigError as e:
        _fail(e)
    click.echo(f"{n} reference cells -> {output}")


# --------------------------------------------------------------------------
# plot and report


@main.command()
@click.argument("directory", type=click.Path(file_okay=False, exists=True))
@click.option("-o", "--output", type=click.Path(file_okay=False),
              help="Where the figures go: a new directory or one holding only the harness's "
                   "figures (default: DIRECTORY/plots).")
@click.option("--format", "formats", multiple=True, default=("png", "pdf"), show_default=True,
              type=click.Choice(["png", "pdf", "svg"]), help="Figure formats (repeatable).")
@click.option("--cell", "cells", multiple=True, metavar="ID",
              help="Sweep directories: a cell (id or unique prefix) for the FCT CDFs "
                   "(repeatable; default: both arms of the highest-load, lowest-R point).")
@click.option("--metric", metavar="NAME",
              help="Sweep directories: only the map of this metric of deltas_mean "
                   "(e.g. fct_small_p99, iteration_time_p99), as map-NAME.")
def plot(directory: str, output: str | None, formats: tuple[str, ...],
         cells: tuple[str, ...], metric: str | None = None) -> None:
    """Figures of a run directory (training timeline, FCT CDFs, utilisation) or of
    a sweep directory, one holding sweep.json (operating-boundary map, changes per
    R, FCT CDFs of chosen cells, utilisation per application; with --metric,
    the map of any metric of its deltas_mean instead)."""
    from harness.outputs import plots

    directory_path = Path(directory)
    out = Path(output) if output else None
    try:
        if metric is not None and not (directory_path / "sweep.json").is_file():
            _fail(f"--metric: applies to sweep directories; {directory} has no sweep.json")
        if metric is not None and cells:
            _fail("--metric: draws one map; --cell chooses the FCT CDFs' cells: give one "
                  "or the other")
        if metric is not None:
            from harness.outputs.plots.sweep_figures import plot_metric

            written = plot_metric(directory_path, metric, out, tuple(formats))
        elif (directory_path / "sweep.json").is_file():
            written = plots.plot_sweep(directory_path, out, tuple(formats), list(cells) or None)
        elif cells:
            _fail(f"--cell applies to sweep directories; {directory} has no sweep.json")
        else:
            written = plots.plot_run(directory_path, out, tuple(formats))
    except (FileNotFoundError, plots.UnknownCellError, ConfigError) as e:
        _fail(e)  # ConfigError: the output (outdir.check_figure_dir), before any drawing
    except OSError as e:  # checked before drawing: a race, or a disk filled since
        _fail(f"-o: writing the figures failed ({e.strerror or e}: {e.filename}); the figures "
              "already written stay", 1)
    for path in written:
        click.echo(str(path))


@main.command()
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
    from harness.outputs.plots.frontier_figure import frontier_of_sweep

    try:
        _, lines, written = frontier_of_sweep(Path(directory), Path(output) if output else None,
                                              tuple(formats))
    except ConfigError as e:
        _fail(e)
    except OSError as e:  # checked before drawing: a race, or a disk filled since
        _fail(f"writing the frontier failed ({e.strerror or e}: {e.filename}); what was "
              "already written stays", 1)
    for line in lines:
        click.echo(line)
    for path in written:
        click.echo(str(path))


@main.command()
@click.argument("directory", metavar="SWEEP_DIR",
                type=click.Path(file_okay=False, exists=True))
@click.option("-o", "--output", metavar="FILE",
              help="The HTML file (default: SWEEP_DIR/report.html).")
def report(directory: str, output: str | None) -> None:
    """Write one static HTML page of a sweep (open it in any browser, no server):
    the operating-boundary map and the sweep's figures, a drill-down per cell
    (FCT CDFs, iteration-time distribution, utilisation), and the manifest
    (versions, seeds, digests, cost)."""
    from harness.io import outdir
    from harness.outputs import report as reports

    sweep_dir = Path(directory)
    try:
        reports.check_sweep_dir(sweep_dir)
        out = outdir.check_new_file(Path(output) if output else sweep_dir / "report.html",
                                    "-o", reports.is_report, reports.estimated_bytes(sweep_dir))
    except ConfigError as e:
        _fail(e)
    click.echo(f"report: {reports.write_report(sweep_dir, out)}")


# compare and export: harness/cli_data.py
from harness import cli_data  # noqa: E402

main.add_command(cli_data.compare)
main.add_command(cli_data.export)


# --------------------------------------------------------------------------


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
    # one line per training job: with several ([[training]]), each by its name
    for tr in summary.get("jobs") or ([summary["training"]] if summary.get("training") else []):
        name = f" {tr['name']}" if summary.get("jobs") else ""
        job = (f"training{name} ({tr.get('architecture', training.DEFAULT_ARCHITECTURE)}, "
               f"{tr.get('policy', 'fifo')})")
        if tr["iterations"]:
            slowdown = (f", {tr['slowdown_vs_ideal']:.2f}x its no-contention iteration"
                        if tr.get("slowdown_vs_ideal") else "")
            click.echo(f"{job}: {tr['iterations']} iterations in the window, mean "
                       f"{tr['mean_iteration_s'] * 1e3:.3f} ms, p50 {tr['p50_iteration_s'] * 1e3:.3f}"
                       f" ms, p99 {tr['p99_iteration_s'] * 1e3:.3f} ms{slowdown}")
        else:
            click.echo(f"{job}: no iteration completed inside the measurement window")
    util = summary.get("host_uplink_utilization", {})
    if util:
        click.echo("host uplink utilisation: " + ", ".join(f"{app} {u:.1%}"
                                                          for app, u in util.items()))
    if "ecn_marks" in summary:
        click.echo("ECN marks per band: " + ", ".join(f"{band} {n:,}" for band, n in
                                                       summary["ecn_marks"].items()))
    click.echo(f"completion {summary['completed_flows']}/{summary['measured_flows']} measured "
               f"flows; {summary['events']:,} events, {manifest['events_per_s']:,.0f} events/s, "
               f"{manifest['sim_s_per_wall_s']:.3f} simulated s per wall s; "
               f"start-up {manifest['startup_s']:.2f} s")


from harness.cli_findings import findings as _findings  # noqa: E402  (the findings group)

main.add_command(_findings)


if __name__ == "__main__":
    from harness import launcher

    launcher.main()
