"""Figures of a sweep directory: the data behind them, and the files written."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from harness.analysis import stats
from harness.outputs import plots
from harness.cli import main

AXES = ["training.ratio", "background.load"]   # the tiny grid's axes (tests/conftest.py)


@pytest.fixture(scope="module")
def tables(local_sweep):
    return plots.load_sweep(local_sweep.out)


def test_boundary_table_has_one_row_per_point(tables):
    table = plots.boundary_table(tables.deltas_mean, tables.summary, tables.grid)
    assert len(table) == 4
    assert set(zip(table["training.ratio"], table["background.load"])) == \
        {(r, b) for r in (2, 1) for b in (0.05, 0.1)}
    assert set(table["arm"]) == {"low"}
    dm = tables.deltas_mean.set_index([*AXES, "metric"])
    for row in table.itertuples(index=False):
        key = (row[1], row[2])
        it = dm.loc[(*key, "iteration_time")]
        assert row.iteration_change == pytest.approx(it["change"], nan_ok=True)
        assert (row.iteration_low, row.iteration_high) == \
            (pytest.approx(it["change_low"], nan_ok=True),
             pytest.approx(it["change_high"], nan_ok=True))
        assert row.small_fct_change == pytest.approx(dm.loc[(*key, "fct_small_mean"), "change"],
                                                     nan_ok=True)
        assert row.iteration_verdict == it["verdict"]
        assert row.color == row.iteration_verdict.split("/")[0]
        # one seed, and still an interval (over flows and iterations) where
        # there are enough pairs for one; below, the estimate without one
        assert row.iteration_low <= row.iteration_change <= row.iteration_high
        small = dm.loc[(*key, "fct_small_mean")]
        if small["samples"] >= stats.MIN_FLOW_PAIRS["mean"]:
            assert row.small_fct_low <= row.small_fct_change <= row.small_fct_high
        else:
            assert small["verdict"] == row.small_fct_verdict == stats.TOO_FEW
            assert math.isnan(row.small_fct_low) and math.isfinite(row.small_fct_change)
    # the axes' measured loads are the reference arm's
    same = tables.summary[tables.summary["arm"] == "same"].set_index(AXES)
    first = table.iloc[0]
    key = (first["training.ratio"], first["background.load"])
    assert first["u_training"] == pytest.approx(same.loc[key, "u_training"])
    assert first["u_background"] == pytest.approx(same.loc[key, "u_background"])
    assert first["offered_load"] == pytest.approx(key[1])


def _hand_made(intervals: dict[int, tuple[float, float, float] | None]
               ) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """A sweep over R (one background load), seeds 1..3: deltas_mean rows with
    the given (change, low, high) of the iteration time; R given None has its
    cells failed."""
    from harness.analysis import stats

    grid = {"grid": "hand", "axes": ["training.ratio", "background.load", "seed"],
            "arms": ["same", "low"], "reference": "same"}
    summary, rows = [], []
    for ratio, iv in intervals.items():
        for seed in (1, 2, 3):
            for arm in ("same", "low"):
                summary.append({"cell": f"{ratio}-{seed}-{arm}", "arm": arm,
                                "training.ratio": ratio, "background.load": 0.3, "seed": seed,
                                "status": "ok" if iv else "failed",
                                "u_training": 1 / ratio if iv else np.nan,
                                "u_background": 0.3 if iv else np.nan,
                                "offered_load": 0.3 if iv else np.nan})
        if iv is None:
            continue
        for metric in ("iteration_time", "fct_small_mean", "fct_large_mean"):
            judge = stats.training_verdict if metric == "iteration_time" \
                else stats.background_verdict
            verdict, decided = judge(iv[1], iv[2])
            rows.append({"training.ratio": ratio, "background.load": 0.3, "arm": "low",
                         "metric": metric, "n": 3, "mean": iv[0], "ci95_low": iv[1],
                         "ci95_high": iv[2], "change": iv[0], "change_low": iv[1],
                         "change_high": iv[2], "samples": 100, "seeds": 3,
                         "verdict": verdict, "decided": decided})
    return pd.DataFrame(rows), pd.DataFrame(summary), grid


def test_map_colours_are_verdicts_of_the_intervals():
    assert (stats.GREEN_MAX, stats.YELLOW_MAX) == (0.01, 0.30)
    cases = {1: (-0.2, -0.25, -0.15), 2: (0.005, -0.01, 0.01), 3: (0.02, 0.0101, 0.05),
             4: (0.2, 0.1, 0.30), 5: (0.5, 0.3001, 0.7), 6: None, 7: (0.02, 0.0, 0.04),
             8: (math.inf, math.inf, math.inf)}
    means, summary, grid = _hand_made(cases)
    table = plots.boundary_table(means, summary, grid).set_index("training.ratio")
    # undecided (7: green/yellow) takes its estimate's class: +2 % is yellow
    assert table["color"].to_dict() == {1: "green", 2: "green", 3: "yellow", 4: "yellow",
                                        5: "red", 6: "n/a", 7: "yellow", 8: "red"}
    decided = table["iteration_decided"].to_dict()
    assert decided == {1: True, 2: True, 3: True, 4: True, 5: True, 6: False, 7: False,
                       8: True}
    assert table.loc[7, "iteration_verdict"] == "green/yellow"   # drawn hatched
    # the failed point keeps its row: no value, both arms failed on every seed
    assert np.isnan(table.loc[6, "iteration_change"]) and table.loc[6, "failed"] == 6
    assert table.loc[1, "u_training"] == pytest.approx(1.0)
    fig = plots.draw_boundary(table.reset_index(), grid, {0.3: "30 %"}, "map")
    texts = [t.get_text() for t in fig.axes[0].texts]
    # the failed point's n/a says why: all 3 seeds x 2 arms failed
    assert "+2.0 %\n[+0.00, +4.0]" in texts and "stalled" in texts and \
        "n/a\n6 cells failed" in texts
    assert table.loc[6, "iteration_reason"] == "6 cells failed"
    assert table.loc[1, "iteration_reason"] == ""   # a value needs no reason
    hatched = [p for p in fig.axes[0].patches if p.get_hatch()]
    assert len(hatched) == 1     # R=7 only


def test_map_and_per_ratio_figures_show_every_point(tables):
    grid, summary = tables.grid, tables.summary
    labels = plots.background_labels(summary, grid)
    assert labels == {0.05: "5.0 %", 0.1: "10 %"}

    table = plots.boundary_table(tables.deltas_mean, summary, grid)
    fig = plots.draw_boundary(table, grid, labels, "map")
    assert len(fig.axes) == 5      # verdict, small FCT, large FCT + their colour bars
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == \
        ["R=2 (≈50 %)", "R=1 (≈100 %)"]    # bottom to top: rising training load
    for ax in fig.axes[:3]:   # one cell per point (and a hatch over undecided ones)
        assert len([p for p in ax.patches if p.get_fill()]) == 4
    legend = {t.get_text() for t in fig.legends[0].get_texts()}
    assert {plots.BOUNDARY_LEGEND[c] for c in plots.BOUNDARY_CLASSES} | \
        {"undecided at 95 %"} == legend

    frame = plots.per_ratio_frame(tables.deltas_mean, grid)
    fig = plots.draw_per_ratio(frame, grid, labels, "per R")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["R=2 (U_training ≈ 50 %)",
                                                 "R=1 (U_training ≈ 100 %)"]
    for ax in panels:   # a line per metric, a point per background load
        assert len(ax.containers) == 3
        assert all(len(c.lines[0].get_xdata()) == 2 for c in ax.containers)


def test_plot_sweep_writes_every_figure(local_sweep, tmp_path):
    out = tmp_path / "figs"
    written = plots.plot_sweep(local_sweep.out, out)
    assert {p.name for p in written} == {
        f"{stem}.{fmt}" for stem in ("operating-boundary", "per-ratio", "fct-cdf-cells",
                                     "utilization-apps") for fmt in ("png", "pdf")}
    assert all(p.parent == out and p.stat().st_size > 0 for p in written)
    assert not [p for p in out.iterdir() if p.name.startswith(".")]   # no temporaries


def test_cdf_cells_default_to_the_hardest_point(tables):
    chosen = plots.default_cdf_cells(tables.summary, tables.grid)
    rows = tables.summary.set_index("cell").loc[chosen]
    assert list(rows["arm"]) == ["same", "low"]
    assert (rows["training.ratio"] == 1).all() and (rows["background.load"] == 0.1).all()
    frame = plots.cells_cdf_frame(tables.dir, tables.summary, chosen, tables.grid["axes"])
    assert set(frame["label"]) == {"same", "low"}   # same point: the arm tells them apart

    other = tables.summary.iloc[0]
    picked = plots.resolve_cells(tables.summary, [other["cell"][:10], chosen[0]])
    assert picked == [other["cell"], chosen[0]]
    with pytest.raises(plots.UnknownCellError, match="no cells match 'nope'"):
        plots.resolve_cells(tables.summary, ["nope"])


def test_utilization_per_point_and_arm(tables):
    frame = plots.utilization_frame(tables.summary, tables.grid)
    assert len(frame) == 8 and (frame["n"] == 1).all()
    merged = frame.merge(tables.summary, on=[*AXES, "arm"], suffixes=("", "_cell"))
    assert np.allclose(merged["u_training"], merged["u_training_cell"])
    assert np.allclose(merged["u_background"], merged["u_background_cell"])


def test_a_sweep_without_arms_has_no_boundary_map(local_sweep, tmp_path):
    # the tiny sweep as if run without arms: only the "same" cells, no deltas
    src, out = local_sweep.out, tmp_path / "plain"
    out.mkdir()
    grid = json.loads((src / "sweep.json").read_text())
    grid.update(arms=[], reference=None,
                cells=[{**c, "arm": None} for c in grid["cells"] if c["arm"] == "same"])
    (out / "sweep.json").write_text(json.dumps(grid))
    summary = pd.read_parquet(src / "summary.parquet")
    summary = summary[summary["arm"] == "same"].assign(arm=None)
    summary.to_parquet(out / "summary.parquet", index=False)
    (out / "cells").symlink_to(src / "cells")

    written = plots.plot_sweep(out, formats=("png",))
    assert {p.name for p in written} == {"fct-cdf-cells.png", "utilization-apps.png"}
    assert all(p.parent == out / "plots" for p in written)


def test_not_a_sweep_directory(tmp_path):
    (tmp_path / "sweep.json").write_text("{}")
    with pytest.raises(FileNotFoundError,
                       match=r"not a sweep directory: missing summary\.parquet"):
        plots.plot_sweep(tmp_path)
    assert not (tmp_path / "plots").exists()


def test_plot_command_dispatches_on_sweep_json(local_sweep, tmp_path):
    runner = CliRunner()
    cell = local_sweep.tables["summary"]["cell"].iloc[0]
    result = runner.invoke(main, ["plot", str(local_sweep.out), "-o", str(tmp_path / "s"),
                                  "--format", "png", "--cell", cell[:8]])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == [
        "fct-cdf-cells.png", "operating-boundary.png", "per-ratio.png", "utilization-apps.png"]

    result = runner.invoke(main, ["plot", str(local_sweep.out), "--cell", "nope"])
    assert result.exit_code == 2 and "no cells match 'nope'" in result.output

    run_dir = local_sweep.out / "cells" / cell      # a cell is a run directory
    result = runner.invoke(main, ["plot", str(run_dir), "--cell", cell])
    assert result.exit_code == 2 and "--cell applies to sweep directories" in result.output
    result = runner.invoke(main, ["plot", str(run_dir), "-o", str(tmp_path / "r"),
                                  "--format", "png"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "r" / "fct-cdf.png").is_file()


def test_a_policy_grid_gets_a_comparison_instead_of_a_map():
    """A grid over training.policy (no R or background axis): bars per policy
    and arm, from the ok cells; a ratio x load grid gets none."""
    from harness.outputs.plots import sweep_data as sd, sweep_draw as sw

    grid = {"axes": ["training.policy", "seed"], "arms": ["same", "low"], "reference": "same"}
    rows = []
    for policy, base in (("fifo", 0.14), ("mercury", 0.12)):
        for arm, factor in (("same", 1.0), ("low", 1.5)):
            for seed in (1, 2):
                rows.append({"training.policy": policy, "arm": arm, "seed": seed, "status": "ok",
                             "mean_iteration_s": base * factor, "fct_small_mean_s": 0.001,
                             "fct_large_mean_s": 0.2})
    rows.append({**rows[0], "status": "failed", "mean_iteration_s": 99.0})
    frame = sd.comparison_frame(pd.DataFrame(rows), grid)
    assert len(frame) == 8 * len(sd.COMPARISON_PANELS)  # the failed cell left out
    it = frame[frame["metric"] == sd.COMPARISON_PANELS[0][1]]
    assert it.groupby(["point", "arm"])["value_ms"].mean().to_dict() == pytest.approx(
        {("fifo", "low"): 210.0, ("fifo", "same"): 140.0,
         ("mercury", "low"): 180.0, ("mercury", "same"): 120.0})
    fig = sw.draw_comparison(frame, grid, "t")
    assert len(fig.axes) == len(sd.COMPARISON_PANELS)
    assert sd.comparison_frame(pd.DataFrame(rows), {"axes": ["training.ratio", "seed"]}).empty
