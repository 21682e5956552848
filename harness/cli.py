"""The `harness` command: thin wrappers that parse, call, and print.

Every kind of bad input ends the same way: one line `error: FIELD: what is
wrong and what is allowed` on stderr and exit code 2, before ns-3 starts
(click's own usage errors included, see _Cli). Ctrl-C ends with exit code 130.
The use cases and their pre-checks are harness.usecases' (the Python API
calls the same ones); the commands live here (run, docs, list, schema) and
in cli_check.py, cli_sweeps.py, cli_results.py, cli_data.py and
cli_findings.py, registered on the group below.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from harness import training
from harness.cli_common import (ALLOW_SHORT_HELP, EXIT_INTERRUPTED, EXIT_WRITE_FAILED,
                                completions, did_you_mean, fail, failed_write, joined,
                                simulated)
from harness import catalog
from harness.config.scenario import ConfigError
from harness.config.errors import shorten


class _Cli(click.Group):
    """click prints a usage error as four lines (usage, hint, blank, error);
    here it is one line like every other error, with the same exit code 2."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True,
             **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        from harness.io.lock import writing

        try:
            with writing():   # every output's lock let go when the command ends
                code = super().main(args, prog_name, complete_var, False, **extra)
        except click.ClickException as e:
            fail(e.format_message(), e.exit_code)
        except ConfigError as e:  # any bad input a command did not catch itself
            fail(e)         # (a corrupt table, an output path): one line too
        except click.Abort:  # Ctrl-C outside a command's own handling
            fail("interrupted", EXIT_INTERRUPTED)
        except OSError as e:
            if not _printing(e):
                # a write that failed midway (a disk that filled since the
                # checks, no inode left, a file larger than its estimate):
                # the writers leave no half-written output in its place
                fail(f"a write failed ({failed_write(e)}); no half-written output is "
                     "left in its place and what was written before stays: make room there "
                     "(or choose another output) and run it again", EXIT_WRITE_FAILED)
            _silence_stdout()   # what is still buffered would fail again at exit
            fail(f"stdout: writing the output failed ({e.strerror or e}); what was printed "
                  "is incomplete: print to a file or pipe with room (or use -o where the "
                  "command has it)")
        sys.exit(code if isinstance(code, int) else 0)


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


def _print_version(ctx: click.Context, _param, value: bool) -> None:
    """--version: the harness's and the ns-3 engine it runs on."""
    if not value or ctx.resilient_parsing:
        return
    from importlib.metadata import version

    from harness.config.errors import Ns3LoadError
    from harness.usecases import engine_choice

    try:   # (a bad choice: its one line only)
        found, by = engine_choice.current()
    except (ConfigError, Ns3LoadError) as e:
        fail(e)
    click.echo(f"{ctx.find_root().info_name}, version {version('ddnn-harness')}\n"
               f"ns-3 engine: {found.label()} (chosen by {by})")
    ctx.exit()


@click.group(cls=_Cli)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=_print_version, help="Show the version and the ns-3 engine, and exit.")
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
@click.argument("scenario", required=False, shell_complete=completions("scenario"))
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
    from harness.config.scenario import load_scenario
    from harness.config.errors import Ns3LoadError
    from harness.usecases import checks, running

    notes: list[str] = []
    try:
        prepared = running.prepare(lambda: load_scenario(scenario, list(overrides), notes),
                                   Path(output) if output else None, allow_short, checks.CLI,
                                   default_out=True)
    except ConfigError as e:
        fail(e)
    p, out = prepared.plan, prepared.out
    sc = p.scenario
    for note in notes:
        click.echo(f"note: {note}", err=True)
    click.echo(f"scenario {shorten(sc.name)} (seed {sc.seed}, digest {sc.digest()}): "
               f"{p.topology.kind} with {p.topology.n_hosts} hosts, {simulated(p)}, "
               f"{len(p.flows)} background flows "
               f"(lambda {p.background_rate:.1f}/s per host, load {p.background_load:.1%})"
               + (f"; scaled down {sc.scale}x (rates and sizes / {sc.scale}, times kept)"
                  if sc.scale > 1 else ""),
               err=True)
    from harness.network import tcp

    click.echo(tcp.timers_line(sc.tcp, p.worst_rtt), err=True)
    if prepared.long_run:
        click.echo(f"note: {prepared.long_run}", err=True)
    try:
        result = running.execute(prepared, progress=progress,
                                 on_phase=(obj or {}).get("on_phase"))
    except Ns3LoadError as e:
        fail(str(e), 3)
    except KeyboardInterrupt:
        fail("interrupted: the run stopped, nothing was written", EXIT_INTERRUPTED)
    try:
        running.write(result, prepared)
    except (OSError, ConfigError) as e:  # checked before the run: a race, or a disk filled since
        fail(f"-o: writing {out} failed after the run ({getattr(e, 'strerror', None) or e}); "
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
({joined(catalog.scenario_names())}); default: default.
`harness list` describes them; `harness check` validates without running.

\b
A run shortened with --set run.duration alone to less than its warm-up +
cool-down scales both with the duration (a note says so)."""


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
            # an iteration counted once, its workers' rows beside it
            count = (f"{tr['distinct_iterations']} iterations ({tr['iterations']} "
                     "worker-iterations)" if "distinct_iterations" in tr
                     else f"{tr['iterations']} worker-iterations")
            click.echo(f"{job}: {count} in the window, mean "
                       f"{tr['mean_iteration_s'] * 1e3:.3f} ms, p50 {tr['p50_iteration_s'] * 1e3:.3f}"
                       f" ms, p99 {tr['p99_iteration_s'] * 1e3:.3f} ms{slowdown}")
        else:
            click.echo(f"{job}: no iteration completed inside the measurement window")
        if tr.get("tcp_delays"):   # what delayed its own connections (over TCP)
            from harness.analysis.metrics import job_tcp_delays_line

            click.echo("  " + job_tcp_delays_line(tr["tcp_delays"], "its"))
    for name, svc in summary.get("services", {}).items():
        click.echo(service_line(name, svc))
    util = summary.get("host_uplink_utilization", {})
    if util:
        click.echo("host uplink utilisation: " + ", ".join(f"{app} {u:.1%}"
                                                          for app, u in util.items()))
    if summary.get("tcp_delays"):
        from harness.analysis.metrics import tcp_delays_line

        click.echo(tcp_delays_line(summary["tcp_delays"]))
    if "ecn_marks" in summary:
        click.echo("ECN marks per band: " + ", ".join(f"{band} {n:,}" for band, n in
                                                       summary["ecn_marks"].items()))
    if "lossless" in summary:
        from harness.analysis import lossless

        click.echo(lossless.console_line(summary["lossless"]))
    click.echo(f"completion {summary['completed_flows']}/{summary['measured_flows']} measured "
               f"flows; {summary['events']:,} events, {manifest['events_per_s']:,.0f} events/s, "
               f"{manifest['sim_s_per_wall_s']:.3f} simulated s per wall s; "
               f"start-up {manifest['startup_s']:.2f} s")


def service_line(name: str, s: dict) -> str:
    """One service's line of `harness run`'s summary, as its kind writes it."""
    from harness.config import registry

    return registry.service_kind(s["kind"]).console_line(name, s)


# --------------------------------------------------------------------------
# docs, list and schema


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
        if hits:   # several pages have that name: say which, not the name back
            fail(f"PAGE: {shorten(page)}: names {len(hits)} pages; give one of "
                 f"{', '.join(h.removesuffix('.md') for h in hits)}")
        fail(f"PAGE: {shorten(page)}: no such page{did_you_mean(name, pages)}; `harness docs` "
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
                fail(f"{name}: not a built-in name{did_you_mean(name, known)}; "
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
                if paragraph.startswith("  "):   # a list's line, as the file has it
                    click.echo(f"      {paragraph}")
                    continue
                click.echo(textwrap.fill(paragraph, width_all, initial_indent="      ",
                                         subsequent_indent="      ",
                                         break_on_hyphens=False))   # names keep whole
        click.echo()


@main.command()
@click.option("--grid", "of_grid", is_flag=True, help="The schema of grid files instead.")
def schema(of_grid: bool) -> None:
    """Print the JSON Schema of scenario files (or grid files): what an editor
    checks a TOML file against (docs/schema/, docs/user-guide/scenarios.md)."""
    import json

    from harness.config.schema import json_schema

    click.echo(json.dumps(json_schema("grid" if of_grid else "scenario"), indent=2))


# the other commands: each module's, registered on the group
from harness import cli_check, cli_data, cli_engine, cli_findings, cli_results, cli_sweeps  # noqa: E402,E501

for _command in (cli_engine.engine, cli_check.check, cli_sweeps.sweep, cli_sweeps.boundary, cli_results.alone,
                 cli_results.profile, cli_results.reference, cli_results.cache, cli_results.plot,
                 cli_results.frontier, cli_results.report, cli_data.compare, cli_data.export,
                 cli_data.explain, cli_findings.findings):
    main.add_command(_command)


if __name__ == "__main__":   # python -m harness.cli: as the harness program starts
    import signal

    from harness.engine import memory

    try:
        memory.exec_with_huge_pages()
    except ConfigError as e:
        fail(e)
    signal.signal(signal.SIGTERM, signal.default_int_handler)   # as harness.launcher
    main()
