"""The findings' figures, drawn from their kept tables (harness.findings.registry)
into the documentation: a map, a comparison per point and arm, a knob
frontier or a boundary search over its map. Each carries its provenance in
its title line and in the PNG's text chunks (preset, buffer_model, scale,
seeds, commit, date), which `harness findings check` compares with the
kept tables'."""

from __future__ import annotations

from pathlib import Path

from harness.findings import registry
from harness.outputs.words import seeds_text


def figure_metadata(record: dict) -> dict[str, str]:
    """The PNG text chunks of a figure drawn from a kept sweep."""
    return {k: str(record.get(k, "")) for k in
            ("preset", "buffer_model", "scale", "seeds", "commit", "date")} | {
        "preset": str(record.get("grid", ""))}


def draw(figure: registry.Figure, docs_dir: Path) -> Path:
    """Draw one of a finding's figures from its kept sweep into docs_dir."""
    from harness.io import outdir
    from harness.outputs.plots import style

    fig = page_figure(figure)
    meta = figure_metadata(registry.provenance(registry.kept_sweep(figure.sweep)))
    target = docs_dir / figure.file
    return outdir.write_from(target, lambda tmp: fig.savefig(
        tmp, format="png", dpi=style.DOCS_DPI, bbox_inches="tight", pad_inches=0.05,
        metadata=meta))


def page_figure(figure: registry.Figure):
    """One of a finding's figures from its kept sweep, drawn for the
    documentation's page (style.DOCS_PAGE_PX wide at style.DOCS_DPI: a map's
    panels stacked, a comparison's points wrapped into rows), its text
    fitted."""
    from harness.outputs.plots import style
    from harness.outputs.plots.style import fit_text
    from harness.outputs.plots.boundary_map import draw_boundary
    from harness.outputs.plots.sweep_axes import background_labels
    from harness.outputs.plots.sweep_data import (BOUNDARY_PANELS, boundary_table,
                                                  comparison_frame, metric_panels)
    from harness.outputs.plots.sweep_draw import draw_comparison

    sweep, loaded = registry.load_kept(figure.sweep)
    if loaded is None:
        raise FileNotFoundError(f"no kept tables for {figure.sweep!r}")
    record = registry.provenance(sweep)
    what = {"map": "operating boundary", "comparison": "per point and arm",
            "frontier": "training slowdown vs background gain per arm",
            "boundary": "where the training slowdown crosses its thresholds"}[figure.kind]
    title = (f"{record.get('grid')}: {what} (scale {record.get('scale')}, "
             f"buffer {record.get('buffer_model')}, {seeds_text(record)} a point; "
             f"{record.get('date')}, {record.get('commit')})")
    if figure.kind == "map":
        # the three-panel map, or one metric's (`harness plot --metric`'s: a service's tail)
        panels = (BOUNDARY_PANELS if figure.metric == "iteration_time"
                  else metric_panels(figure.metric))
        table = boundary_table(loaded.deltas_mean, loaded.summary, loaded.grid, panels)
        # stacked: each panel at the page's width (style.DOCS_PAGE_PX)
        fig = draw_boundary(table, loaded.grid, background_labels(loaded.summary, loaded.grid),
                            title, panels, columns=1)
    elif figure.kind == "boundary":
        fig = _boundary_figure(sweep, figure, title)
    elif figure.kind == "frontier":
        from harness.analysis import frontier
        from harness.outputs.plots.frontier_figure import draw_frontier

        fig = draw_frontier(*frontier.sweep_frontier(loaded.deltas_mean, loaded.grid),
                            title, columns=1)
    else:
        fig = draw_comparison(comparison_frame(loaded.summary, loaded.grid), loaded.grid, title,
                              width=style.DOCS_PAGE_PX / style.DOCS_DPI)
    return fit_text(fig)


def _boundary_figure(sweep, figure: registry.Figure, title: str):
    """A kept search's crossings (and probes), over its kept map's training
    verdicts where the figure names one (`over`), at the page's width."""
    from harness.analysis.tables import SEED_AXIS, read_table
    from harness.outputs.plots import style
    from harness.outputs.plots.boundary_figure import draw_boundary_curves, map_cells
    from harness.sweeps.grid import load_grid

    grid = load_grid(sweep.kept_dir / "grid.toml")
    spec = grid.search
    fields = [f for f, _ in grid.axes if f != SEED_AXIS]
    cells = None
    if figure.over is not None:
        over = registry.kept_sweep(figure.over).kept_dir
        if (over / "deltas_mean.parquet").is_file():
            cells = map_cells(over, fields, spec.field, spec.arm)
    return draw_boundary_curves(read_table(sweep.kept_dir / "boundary.parquet"), fields,
                                spec.field, spec.lo, spec.hi, title, cells,
                                read_table(sweep.kept_dir / "probes.parquet"),
                                log=spec.spacing == "log",
                                width=style.DOCS_PAGE_PX / style.DOCS_DPI)


def png_metadata(path: Path) -> dict[str, str]:
    """A PNG's text chunks (what figure_metadata wrote)."""
    from PIL import Image

    with Image.open(path) as image:
        return {k: str(v) for k, v in (getattr(image, "text", None) or {}).items()}
