"""`harness engine show|use|build`: which ns-3 the harness runs on, choosing
one, building one (harness.usecases.engine_choice). Registered on the group
by harness.cli."""

from __future__ import annotations

import click

from harness.cli_common import fail
from harness.config.errors import ConfigError, Ns3LoadError


@click.group()
def engine() -> None:
    """The ns-3 the harness runs on: the ns3 wheel (default) or your own
    ns-3.44 build (faster: no logging compiled in).

    \b
    harness engine build ~/ns-3.44 -o ~/ns3-optimized   # a few minutes
    harness engine use ~/ns3-optimized                  # or DDNN_HARNESS_NS3_BUILD=DIR
    harness engine show
    """


@engine.command()
def show() -> None:
    """Print the engine in use and what chose it."""
    from harness.usecases import engine_choice

    try:
        found, by = engine_choice.current()
    except (ConfigError, Ns3LoadError) as e:
        fail(e)
    click.echo(f"{found.label()} (chosen by {by})")


@engine.command()
@click.argument("directory", metavar="DIR|wheel")
def use(directory: str) -> None:
    """Run on the ns-3.44 build in DIR from now on (`wheel`: back to the
    default). DDNN_HARNESS_NS3_BUILD, where set, still wins."""
    from harness.usecases import engine_choice

    try:
        found = engine_choice.use(directory)
    except (ConfigError, Ns3LoadError) as e:
        fail(e)
    click.echo(f"harness: now running on {found.label()}")


@engine.command()
@click.argument("src", metavar="SRC")
@click.option("-o", "--output", metavar="DIR",
              help="Build folder: new or empty, or one this command made (default: "
                   "SRC/build-<profile>).")
@click.option("--profile", type=click.Choice(["optimized", "release"]), default="optimized",
              show_default=True, help="ns-3's build profile (both without logging and asserts; "
                                      "optimized adds -march=native).")
@click.option("-j", "--jobs", type=click.IntRange(1), default=None,
              help="Compilers at once (default: CPU count).")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar (default: when stderr is a terminal).")
def build(src: str, output: str | None, profile: str, jobs: int | None,
          progress: bool | None) -> None:
    """Build ns-3.44 from its source in SRC with exactly the modules the
    harness needs, and print the setting that uses it."""
    import sys

    from harness.usecases import engine_choice

    try:
        found = engine_choice.build(src, output, profile, jobs,
                                    sys.stderr.isatty() if progress is None else progress)
    except ConfigError as e:
        fail(e)
    except Ns3LoadError as e:
        fail(e, 3)
    click.echo(f"harness: built {found.label()}\nuse it with:\n"
               f"  export DDNN_HARNESS_NS3_BUILD={found.root}\n"
               f"or keep the choice:\n  harness engine use {found.root}")
