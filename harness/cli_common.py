"""What the `harness` commands share: the one-line error (`fail`), shell
completion of built-in names, the options of a sweep's or a search's cell
runner and the --resume command they print after Ctrl-C. The commands
(harness.cli and the cli_*.py beside it) parse and print; the use cases and
their pre-checks are harness.usecases'."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from harness import catalog
from harness.config.errors import EXIT_BAD_INPUT, shorten_text

EXIT_INTERRUPTED = 130
EXIT_WRITE_FAILED = 1   # a write that failed midway (the input was fine)
ALLOW_SHORT_HELP = ("Run even where a training job's measurement window is shorter than one "
                    "of its iterations at the no-contention pace (refused otherwise).")


def within(spec) -> str:
    """A search's tolerance in words: a width, or a factor with log spacing."""
    return f"a factor {spec.tolerance:g}" if spec.spacing == "log" else f"{spec.tolerance:g}"


def fail(message, code: int = EXIT_BAD_INPUT) -> None:
    # one line, never a flood: a long value some check echoed whole is cut;
    # a ConfigError with others found in the same file: one line each
    for one in (message, *getattr(message, "more", ())):
        click.echo(f"error: {shorten_text(' '.join(str(one).split()))}", err=True)
    sys.exit(code)


def failed_write(error: OSError) -> str:
    """An OSError of a write in words: "No space left on device: PATH" (the
    path where the error names one)."""
    reason = error.strerror or str(error)
    return f"{reason}: {shorten_text(str(error.filename), 200)}" if error.filename else reason


def joined(names: list[str]) -> str:
    return ", ".join(names)


def completions(*kinds: str):
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


def did_you_mean(word: str, choices) -> str:
    from harness.config.schema import base

    return base.did_you_mean(word, choices)


def simulated(p) -> str:
    if p.run.min_iterations and p.ideal_iteration_s:
        return (f"until {p.run.min_iterations} iterations are measured (~{p.expected_duration:.3g}"
                f" s at the job's no-contention pace, at most {p.run.duration:g} s) simulated")
    return f"{p.run.duration:g} s simulated"


def resume_command(name: str, grid_file: str, out: Path) -> str:
    """The command that continues this sweep or search after Ctrl-C:
    `harness NAME GRID -o OUT --resume` and every other option the user gave
    (-j, --executor, --scheduler, --max-seeds, --budget, --cached, --map,
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
        # its first long name (--cached, not its old name --reference)
        value = ctx.params[param.name]
        flag = next((o for o in param.opts if o.startswith("--")), param.opts[0])
        if param.is_flag and param.secondary_opts:   # --progress/--no-progress
            words.append(flag if value else max(param.secondary_opts, key=len))
        elif param.is_flag:
            words += [flag] if value else []
        else:
            for one in (value if param.multiple else (value,)):
                words += [flag, shlex.quote(str(one))]
    return " ".join(words)


def cell_runner_options(command):
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
