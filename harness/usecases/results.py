"""Use cases over finished runs and sweeps: figures (`harness plot`), the
frontier, the HTML report and cached cells. Each checks its inputs and
its output before drawing or writing anything."""

from __future__ import annotations

from pathlib import Path

from harness.usecases.checks import Names, refused


def plot(directory: str, out: Path | None, formats: tuple[str, ...],
         cells: tuple[str, ...] = (), metrics: "tuple[str, ...] | str | None" = ()) -> list[Path]:
    """The figures of a run directory, or of a sweep directory (one holding
    sweep.json; with metrics: the map of each of those metrics of its
    deltas_mean instead, in the order given, each once); the paths written.
    Raises ConfigError (the options, the output: outdir.check_figure_dir)
    before any drawing."""
    from harness.outputs import plots

    directory_path = Path(directory)
    is_sweep = (directory_path / "sweep.json").is_file()
    metrics = tuple(dict.fromkeys((metrics,) if isinstance(metrics, str) else metrics or ()))
    if metrics and not is_sweep:
        raise refused("--metric", f"--metric: applies to sweep directories; {directory} has "
                      "no sweep.json")
    if metrics and cells:
        raise refused("--metric", "--metric: draws maps; --cell chooses the FCT CDFs' "
                      "cells: give one or the other")
    if metrics:
        from harness.outputs.plots.sweep_figures import plot_metric

        return plot_metric(directory_path, metrics, out, tuple(formats))
    if is_sweep:
        return plots.plot_sweep(directory_path, out, tuple(formats), list(cells) or None)
    if cells:
        raise refused("--cell", f"--cell applies to sweep directories; {directory} has no "
                      "sweep.json")
    return plots.plot_run(directory_path, out, tuple(formats))


def frontier(directory: Path, out: Path | None, formats: tuple[str, ...]):
    """Per point of a sweep, each arm's slowdown against its FCT gains: the
    table, its lines to print and the files written (frontier.parquet,
    frontier.png)."""
    from harness.outputs.plots.frontier_figure import frontier_of_sweep

    return frontier_of_sweep(directory, out, tuple(formats))


def report_target(sweep_dir: Path, out: Path | None, names: Names) -> Path:
    """The report's file, checked before anything is written: new, or a
    report the harness wrote (default SWEEP_DIR/report.html)."""
    from harness.io import outdir
    from harness.outputs import report as reports

    reports.check_sweep_dir(sweep_dir)
    return outdir.check_new_file(out if out is not None else sweep_dir / "report.html",
                                 names.out, reports.is_report, reports.estimated_bytes(sweep_dir))


def write_report(sweep_dir: Path, target: Path) -> Path:
    from harness.outputs import report as reports

    return reports.write_report(sweep_dir, target)


def export_cache(sweep_dir: Path, out: Path) -> int:
    """The cells of a finished sweep's smallest scale as cached cells in
    `out` (harness.sweeps.cell_cache); how many."""
    from harness.sweeps import cell_cache

    return cell_cache.export(sweep_dir, out)


def compare(a, b, out):
    """Each metric's change of B against A (harness.analysis.comparing): the
    comparison, and its output file checked before anything is computed
    (None: not written)."""
    from harness.analysis import comparing
    from harness.sweeps.grid import load_grid

    target = comparing.check_output(out)
    return comparing.compare(a, b, load_grid), target


def write_comparison(result, target: Path) -> Path:
    from harness.analysis import comparing

    return comparing.write(result, target)


def export(directory, fmt: str, out) -> Path:
    """A run's or a sweep's tables, as CSV or Parquet, with the data
    dictionary, into `out` (a new directory)."""
    from harness.outputs import export as exporting

    return exporting.export(directory, fmt, out)
