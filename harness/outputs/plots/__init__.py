"""Figures from tables only (never from ns-3): one run, a directory or a
Run in memory (run_figures), or one sweep directory (sweep_figures, drawing
the figures of registry: the data in sweep_data, the axes in sweep_axes, the
drawing in boundary_map and sweep_draw), a boundary search (boundary_figure)
and a sweep's frontier (frontier_figure); style is what they all share."""

from harness.outputs.plots.run_figures import (buffer_spans, fct_cdf_frame, iteration_figure,
                                       load_run, measurement_window, pick_iterations,
                                       draw_run, plot_run, save_figure, timeline_frames,
                                       uplink_utilization)
from harness.analysis.tables import Sweep as SweepTables, load_sweep
from harness.outputs.plots.boundary_map import BOUNDARY_COLORS, BOUNDARY_LEGEND, draw_boundary
from harness.outputs.plots.sweep_axes import background_labels
from harness.outputs.plots.sweep_data import (BOUNDARY_CLASSES, UnknownCellError, boundary_table,
                                              cells_cdf_frame, default_cdf_cells,
                                              per_ratio_frame, resolve_cells, utilization_frame)
from harness.outputs.plots.sweep_draw import draw_per_ratio
from harness.outputs.plots.sweep_figures import plot_sweep

__all__ = [
    "buffer_spans", "fct_cdf_frame", "iteration_figure", "load_run", "measurement_window",
    "pick_iterations", "draw_run", "plot_run", "save_figure", "timeline_frames",
    "uplink_utilization",
    "BOUNDARY_CLASSES", "BOUNDARY_COLORS", "BOUNDARY_LEGEND", "SweepTables",
    "UnknownCellError", "background_labels", "boundary_table", "cells_cdf_frame",
    "default_cdf_cells", "draw_boundary", "draw_per_ratio", "load_sweep", "per_ratio_frame",
    "plot_sweep", "resolve_cells", "utilization_frame",
]
