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
@click.argument("directory", metavar="RUN")
def explain(directory: str) -> None:
    """What delayed a run's background flows besides queueing, per size class,
    as its senders' TCP counted it in ns-3: the flows that timed out, their
    retransmission timeouts (and the share that were spurious: the segment
    had arrived), the share of their completion time that passed without
    progress before a timeout, and fast retransmits; then each service of
    requests' client-side timeouts (docs/model/metrics.md). A sweep's
    attribution (arm against reference) is not built yet."""
    from harness.analysis import causes, comparing
    from harness.analysis.metrics import TCP_DELAYS
    from harness.analysis.tables import read_run
    from harness.config.errors import ConfigError

    kind = comparing.directory_kind(directory, "RUN")
    if kind != comparing.RUN:
        raise ConfigError("RUN", f"{directory} is a sweep directory; explain reads one run "
                          "directory (a cell's: SWEEP/cells/<id>); a sweep's attribution, arm "
                          "against reference, is not built yet")
    run = read_run(Path(directory), ("flows", "services"))
    flows = run.flows
    if flows is None or not all(c in flows for c in TCP_DELAYS):
        raise ConfigError("RUN", f"{directory} has no TCP delay counts in its flows table "
                          f"({', '.join(TCP_DELAYS)}): it was run before they were counted; "
                          "run it again")
    for line in causes.lines(causes.flow_delays(flows)):
        click.echo(line)
    services = run.services
    if services is not None and all(c in services for c in causes.CLIENT_DELAYS):
        for line in causes.service_lines(causes.service_delays(services)):
            click.echo(line)
