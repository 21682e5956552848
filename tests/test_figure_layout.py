"""Sweep figures lay out at any grid size: every text lies inside the saved
figure and panel titles, tick labels and map cells do not run into each other.

Figures are drawn from hand-made sweep tables (plotting reads tables only) and
written through harness.outputs.plots.save_figure, the path `harness plot` and
`harness report` take; the text is then measured on the figure as saved."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from harness.analysis import stats
from harness.outputs import plots
from harness.outputs.plots import sweep_data as sd, sweep_draw as sw
from harness.outputs.plots.style import drawn_texts

RATIOS = (1, 2, 4, 8)
LOADS = (0.05, 0.1, 0.2, 0.4)
RATES = (23, 460, 1500, 2000)
ARMS = ("same", "low")
LONG_ARMS = ("training-in-the-same-band", "training-in-the-low-band")
LONG_BUFFER = "one_shared_limit_per_port_with_a_long_name"


def sweep_tables(ratios, backgrounds, background_field="background.load", arms=ARMS,
                 buffers=None):
    """(deltas_mean, summary, grid) of a map over R x the background axis,
    two seeds, a change per panel and point drawn at random; `buffers`: a
    third axis (network.buffer_model), one map row per value. With more than
    two points, the first point's cells failed and the last one's reference
    stalled with no large flow: their map cells say n/a and why."""
    rng = np.random.default_rng(7)
    reference, compared = arms
    facet_values = buffers or [None]
    axes = ["training.ratio", background_field, *(["network.buffer_model"] if buffers else []),
            "seed"]
    grid = {"grid": "layout", "axes": axes, "arms": list(arms), "reference": reference}
    points = list(itertools.product(ratios, backgrounds, facet_values))
    summary, means = [], []
    for k, (ratio, background, buffer) in enumerate(points):
        failed = len(points) > 2 and k == 0
        stalled = len(points) > 2 and k == len(points) - 1
        point = {"training.ratio": ratio, background_field: background,
                 **({"network.buffer_model": buffer} if buffers else {})}
        load = background if background_field == "background.load" else background / 4000
        for seed, arm in itertools.product((1, 2), arms):
            status = "failed" if failed else "stalled" if stalled and arm == reference else "ok"
            summary.append({**point, "cell": f"{ratio}-{background}-{buffer}-{seed}-{arm}",
                            "arm": arm, "seed": seed, "status": status,
                            "error": "ns-3 exited with -9" if failed else None,
                            "u_training": 1 / ratio, "u_background": load, "offered_load": load,
                            "mean_iteration_s": 0.1 * ratio * (1.2 if arm == compared else 1),
                            "fct_small_mean_s": 0.001, "fct_large_mean_s": 0.2})
        if failed:
            continue
        for metric, _, _ in sd.BOUNDARY_PANELS:
            change = float(rng.normal(0.1, 0.3))
            if stalled and metric != "fct_small_mean":
                change = np.nan
            judge = stats.training_verdict if metric == "iteration_time" \
                else stats.background_verdict
            verdict, decided = judge(change - 0.05, change + 0.05)
            means.append({**point, "arm": compared, "metric": metric, "change": change,
                          "change_low": change - 0.05, "change_high": change + 0.05,
                          "samples": 100, "seeds": 2, "verdict": verdict, "decided": decided})
    return pd.DataFrame(means), pd.DataFrame(summary), grid


def draw_map(ratios, backgrounds, **kw):
    means, summary, grid = sweep_tables(ratios, backgrounds, **kw)
    table = plots.boundary_table(means, summary, grid)
    return plots.draw_boundary(table, grid, plots.background_labels(summary, grid),
                               "layout: operating boundary (pooled over 2 seeds)")


def saved(fig, tmp_path):
    """fig written as `harness plot` writes it, then drawn for measuring."""
    plots.save_figure(fig, tmp_path, "figure", ("png",))
    canvas = fig.canvas if hasattr(fig.canvas, "get_renderer") else FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def check_layout(fig, renderer):
    """Assert nothing is cut off or drawn over: each text inside the canvas
    (what the PNG holds), and no two panel titles, no two tick labels of one
    axis and no two texts inside one panel (the map's cells) overlapping."""
    canvas = fig.bbox
    for text in drawn_texts(fig):
        box = text.get_window_extent(renderer)
        assert (box.x0 >= canvas.x0 - 1 and box.x1 <= canvas.x1 + 1
                and box.y0 >= canvas.y0 - 1 and box.y1 <= canvas.y1 + 1), \
            f"cut off: {text.get_text()!r} at {box.bounds} outside {canvas.bounds}"
    panels = [ax for ax in fig.axes if ax.get_visible()]
    titles = [ax.title for ax in panels if ax.title.get_text()]
    for a, b in itertools.combinations(titles, 2):
        assert not a.get_window_extent(renderer).overlaps(b.get_window_extent(renderer)), \
            f"titles overlap: {a.get_text()!r} and {b.get_text()!r}"
    for ax in panels:
        groups = [[t for t in ax.xaxis.get_ticklabels() if t.get_text()],
                  [t for t in ax.yaxis.get_ticklabels() if t.get_text()],
                  [t for t in ax.texts if t.get_visible() and t.get_text()]]
        for group in groups:
            for a, b in itertools.combinations(group, 2):
                assert not a.get_window_extent(renderer).overlaps(
                    b.get_window_extent(renderer)), \
                    f"overlap: {a.get_text()!r} and {b.get_text()!r}"


@pytest.mark.parametrize("rows, columns", [(1, 2), (4, 4), (1, 1), (2, 1)])
def test_map_text_fits_at_every_grid_size(rows, columns, tmp_path):
    fig = draw_map(RATIOS[:rows], LOADS[:columns])
    renderer = saved(fig, tmp_path)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == 3 and all(len(ax.texts) == rows * columns for ax in panels)
    if rows * columns > 2:   # the failed and the stalled point: n/a, with why
        texts = [t.get_text().replace("\n", " ") for t in panels[0].texts]
        assert "n/a 4 cells failed" in texts and "n/a reference stalled" in texts
    check_layout(fig, renderer)


@pytest.mark.parametrize("rows, columns", [(1, 2), (4, 4)])
def test_map_with_long_labels(rows, columns, tmp_path):
    """Rate ticks with their loads, long arm names and a third axis with a
    long value: a map row per value of it, its name in each panel's title."""
    fig = draw_map(RATIOS[:rows], RATES[:columns], background_field="background.rate",
                   arms=LONG_ARMS, buffers=["per_band", LONG_BUFFER])
    renderer = saved(fig, tmp_path)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert len(titles) == 6 and sum(LONG_BUFFER in t for t in titles) == 3
    check_layout(fig, renderer)


@pytest.mark.parametrize("points", [2, 8])
def test_comparison_and_utilization_with_long_point_labels(points, tmp_path):
    grid = {"grid": "layout", "axes": ["network.buffer_model", "training.policy", "seed"],
            "arms": list(LONG_ARMS), "reference": LONG_ARMS[0]}
    rows = [{"cell": f"{p}-{arm}-{seed}", "network.buffer_model": f"{LONG_BUFFER}_{p}",
             "training.policy": "mercury", "arm": arm, "seed": seed, "status": "ok",
             "mean_iteration_s": 0.1 + 0.01 * p, "fct_small_mean_s": 0.001,
             "fct_large_mean_s": 0.2, "u_training": 0.4, "u_background": 0.2,
             "offered_load": 0.2}
            for p in range(points) for arm in LONG_ARMS for seed in (1, 2)]
    summary = pd.DataFrame(rows)

    fig = sw.draw_comparison(sd.comparison_frame(summary, grid), grid, "layout: comparison")
    check_layout(fig, saved(fig, tmp_path))

    fig = sw.draw_utilization_apps(plots.utilization_frame(summary, grid), grid,
                                   "layout: host-uplink utilisation per application")
    check_layout(fig, saved(fig, tmp_path))


@pytest.mark.parametrize("rows, columns", [(1, 2), (4, 4)])
def test_per_ratio_text_fits(rows, columns, tmp_path):
    means, summary, grid = sweep_tables(RATIOS[:rows], RATES[:columns],
                                        background_field="background.rate", arms=LONG_ARMS)
    fig = plots.draw_per_ratio(plots.per_ratio_frame(means, grid), grid,
                               plots.background_labels(summary, grid), "layout: change per R")
    check_layout(fig, saved(fig, tmp_path))


LONG_SCENARIO = "two-jobs-spine-with-buffers-shared-per-port-and-a-long-name"


def test_run_figures_with_a_long_scenario_name(tmp_path):
    """A run's figures are one panel each: its title (the scenario's name)
    and the legend beside the panel must fit a narrow figure."""
    from harness.outputs.plots import run_figures as rf

    rng = np.random.default_rng(3)
    cdf = rf.fct_cdf_frame(pd.DataFrame({
        "size_class": ["small", "medium", "large"] * 20, "fct_s": rng.uniform(1e-4, 1, 60),
        "measured": True, "completed": True}))
    fig = rf.draw_fct_cdf(cdf, f"{LONG_SCENARIO}: background FCT, measured flows")
    check_layout(fig, saved(fig, tmp_path))

    times = np.arange(0, 1, 0.1)
    frame = pd.DataFrame([(t, app, cls, 0.3) for t in times
                          for app, cls in (("training", "low"), ("background", "high"))],
                         columns=["t_s", "app", "traffic_class", "utilization"])
    fig = rf.draw_utilization(frame, 0.1, (0.2, 0.8), rf.class_colors(["high", "low"]),
                              f"{LONG_SCENARIO}: host-uplink utilisation")
    check_layout(fig, saved(fig, tmp_path))

    phases = pd.DataFrame({"job": [0, 1], "start_ms": [0.0, 5.0], "end_ms": [4.0, 9.0]})
    fig = rf.draw_job_phases(phases, {0: "resnet50-ring-allreduce", 1: "vgg16-parameter-server"},
                             (0.0, 10.0), f"{LONG_SCENARIO}: communication phases per job "
                             "(12% of communicating time together)")
    check_layout(fig, saved(fig, tmp_path))


# --------------------------------------------------------------------------
# figures drawn for where they are shown


def test_a_stacked_map_reads_at_the_documentation_page_width(tmp_path):
    """columns=1 stacks the panels (a row each): at the docs' page width
    every text is at least style.MIN_TEXT_PX high, nothing overlaps; the
    row map of the same grid is too small there (what a page could not show)."""
    from harness.outputs.plots import style

    means, summary, grid = sweep_tables(RATIOS, LOADS)
    table = plots.boundary_table(means, summary, grid)
    labels = plots.background_labels(summary, grid)
    stacked = plots.draw_boundary(table, grid, labels, "layout: stacked", columns=1)
    check_layout(stacked, saved(stacked, tmp_path))
    assert len([ax for ax in stacked.axes if ax.get_title()]) == 3
    assert style.shown_text_px(stacked, style.DOCS_DPI, style.DOCS_PAGE_PX) >= style.MIN_TEXT_PX
    row = plots.draw_boundary(table, grid, labels, "layout: one row")
    style.fit_text(row)
    assert style.shown_text_px(row, style.DOCS_DPI, style.DOCS_PAGE_PX) < style.MIN_TEXT_PX


def test_one_panel_of_the_map_keeps_its_letter_and_words(tmp_path):
    """only=n: the panel n of the three-panel map, lettered and worded as
    there, each fitting, with its own colour bar (b, c) and no caption."""
    means, summary, grid = sweep_tables(RATIOS, LOADS)
    table = plots.boundary_table(means, summary, grid)
    labels = plots.background_labels(summary, grid)
    for n, letter in enumerate("abc"):
        fig = plots.draw_boundary(table, grid, labels, "layout: a panel", only=n)
        check_layout(fig, saved(fig, tmp_path))
        titled = [ax for ax in fig.axes if ax.get_title()]
        assert len(titled) == 1 and titled[0].get_title().startswith(f"({letter}) ")
        assert len(fig.axes) == (1 if n == 0 else 2)    # the panel, and its colour bar
        assert fig.legends[0].get_title().get_text() == ""


def test_a_comparison_wraps_its_points_to_a_width(tmp_path):
    """width: the points wrap into rows of panels that fit it, every point
    drawn once per metric, text readable at the docs' page width."""
    from harness.outputs.plots import style

    grid = {"grid": "layout", "axes": ["training.policy", "seed"], "arms": list(ARMS),
            "reference": ARMS[0]}
    summary = pd.DataFrame([
        {"cell": f"{p}-{arm}-{seed}", "training.policy": f"policy-{p}", "arm": arm,
         "seed": seed, "status": "ok", "mean_iteration_s": 0.1 + 0.01 * p,
         "fct_small_mean_s": 0.001, "fct_large_mean_s": 0.2}
        for p in range(12) for arm in ARMS for seed in (1, 2)])
    width = style.DOCS_PAGE_PX / style.DOCS_DPI
    fig = sw.draw_comparison(sd.comparison_frame(summary, grid), grid, "layout", width=width)
    check_layout(fig, saved(fig, tmp_path))
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) % len(sd.COMPARISON_PANELS) == 0 and len(panels) > 3
    named = [t.get_text() for ax in panels for t in ax.get_xticklabels() if t.get_text()]
    assert sorted(named) == sorted(f"policy-{p}" for p in range(12))
    assert style.shown_text_px(fig, style.DOCS_DPI, style.DOCS_PAGE_PX) >= style.MIN_TEXT_PX


def test_the_documentation_figures_read_at_its_page_width():
    """Every finding's figure, drawn from its kept tables as `harness
    findings draw` draws it: shown at the docs' page width, its smallest
    text is at least style.MIN_TEXT_PX high."""
    from harness.findings import figures, registry
    from harness.outputs.plots import style

    drawn = 0
    for finding in registry.load_registry().values():
        for figure in finding.figures:
            fig = figures.page_figure(figure)
            px = style.shown_text_px(fig, style.DOCS_DPI, style.DOCS_PAGE_PX)
            assert px >= style.MIN_TEXT_PX, f"{figure.file}: text {px:.1f} px"
            drawn += 1
    assert drawn >= 10
