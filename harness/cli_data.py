"""`harness compare` and `harness export`: commands over finished runs and
sweeps (harness.usecases.results), registered on
the `harness` group by harness.cli. Bad input raises ConfigError, which the
group prints as one line `error: ...` with exit code 2."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option("-o", "--output", metavar="FILE",
              help="Also write the table to FILE, a new .csv or .parquet file (checked before "
                   "anything is computed; an existing file is never written over).")
def compare(a: str, b: str, output: str | None) -> None:
    """Each metric's change of B against A, with its 95 % interval and verdict:
    two run directories, or two sweep directories matched point by point by
    their axis values and arm. Paired where the runs replayed the same
    background flows and seed (equal background settings and seed), else
    each side resampled on its own; tails (p99, p999) say "too few samples"
    where the sample cannot support an interval."""
    from harness.analysis import comparing
    from harness.usecases import results

    result, target = results.compare(Path(a), Path(b), output)
    for line in comparing.lines(result, a, b):
        click.echo(line)
    if target is not None:
        click.echo(f"table: {results.write_comparison(result, target)}")


@click.command()
@click.argument("directory", metavar="DIR")
@click.option("--format", "fmt", default="csv", show_default=True, metavar="csv|parquet",
              help="The tables' format: csv or parquet.")
@click.option("-o", "--output", metavar="OUT", required=True,
              help="A new directory for the tables and data-dictionary.csv.")
def export(directory: str, fmt: str, output: str) -> None:
    """Write a run's tables (summary, flows, iterations, transfers, compute,
    queues, utilization) or a sweep's (summary, deltas, deltas_mean,
    scale_check) into OUT, a new directory, as CSV or Parquet, with
    data-dictionary.csv: every column's table, name, type, unit and meaning."""
    from harness.outputs import export as exporting
    from harness.usecases import results

    out = results.export(Path(directory), fmt, Path(output))
    click.echo(f"tables and {exporting.DICTIONARY}: {out}")


@click.command()
@click.argument("directory", metavar="RUN|SWEEP")
@click.option("--point", "points", multiple=True, metavar="FIELD=VALUE",
              help="A sweep's point to explain, an axis each (repeatable: --point "
                   "training.ratio=2 --point background.rate=184); default: every point.")
def explain(directory: str, points: tuple[str, ...]) -> None:
    """What delayed the traffic besides queueing, as ns-3 counted it.

    A run: per size class, the background flows that timed out, their
    retransmission timeouts (and the share that were spurious: the segment
    had arrived), the share of their completion time without progress
    before a timeout, and fast retransmits; training's iterations
    (computing, waiting on the network, in TCP back-off), its slowest
    transfer and its connections' timeouts; each service of requests'
    client-side timeouts; each band's starvation; the drops per place,
    band and reason.

    A sweep: per point and compared arm, training's verdict and what its
    iteration-time change is made of (computing, TCP back-off, the rest of
    the wait: training_causes.parquet), its connections' timeouts, the
    bands' starvation and losses, and what the background's mean FCT
    change (causes.parquet) and each service's request latency change
    (service_causes.parquet) are made of, pair by pair: RTO back-off and
    queueing and the rest, each with its 95 % interval, the back-off's
    share of the change, and the timeouts in each arm
    (docs/model/metrics.md)."""
    from harness.usecases import explaining

    for line in explaining.explain_lines(Path(directory), points):
        click.echo(line)
