"""The knob frontier (harness.analysis.frontier, harness frontier): from hand-made
deltas_mean tables, no ns-3: slowdowns and gains, the Pareto set and whether
the intervals decide its dominance, the best arm or why there is none, the
text, the figure's layout, and the command's outputs."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from click.testing import CliRunner

from harness import cli
from harness.analysis import frontier
from harness.analysis import stats
from harness.outputs.plots import frontier_figure
from tests.test_figure_layout import check_layout, saved

POINT = {"label": "p"}


def arm_rows(arm: str, slowdown, small, large, point=POINT, seeds=3) -> list[dict]:
    """deltas_mean rows of one arm: each metric a (change, low, high) triple
    of *changes* (an FCT gain of 30 % is a change of -0.3); None: no row."""
    rows = []
    for metric, triple in (("iteration_time", slowdown), ("fct_small_mean", small),
                           ("fct_large_mean", large)):
        if triple is None:
            continue
        change, low, high = triple
        verdict, decided = stats.judge(metric, stats.Interval(change, low, high, 100, seeds))
        rows.append({**point, "arm": arm, "metric": metric, "n": seeds, "mean": change,
                     "ci95_low": low, "ci95_high": high, "change": change, "change_low": low,
                     "change_high": high, "samples": 100, "seeds": seeds, "verdict": verdict,
                     "decided": decided, "seeds_to_decide": math.nan})
    return rows


def table_of(*arms, reference="same", keys=("label",)) -> pd.DataFrame:
    means = pd.DataFrame([r for a in arms for r in arm_rows(*a)])
    return frontier.frontier_table(means, list(keys), reference)


def row(table: pd.DataFrame, arm: str, label: str = "p") -> pd.Series:
    return table[(table["arm"] == arm) & (table["label"] == label)].iloc[0]


GREEN_GAIN = ("low", (0.002, -0.003, 0.007), (-0.30, -0.40, -0.20), (-0.20, -0.30, -0.10))
COSTLY_MORE_GAIN = ("drr", (0.05, 0.03, 0.07), (-0.45, -0.50, -0.40), (-0.25, -0.30, -0.20))
DOMINATED = ("first5", (0.06, 0.05, 0.08), (-0.10, -0.12, -0.08), (-0.05, -0.08, -0.02))


def test_slowdown_and_gains_with_their_intervals_and_the_reference_at_zero():
    t = table_of(GREEN_GAIN)
    low = row(t, "low")
    assert low["slowdown"] == pytest.approx(0.002)
    assert (low["slowdown_low"], low["slowdown_high"]) == pytest.approx((-0.003, 0.007))
    # a gain is minus the change: the interval's ends swap
    assert (low["small_gain"], low["small_gain_low"], low["small_gain_high"]) == \
        pytest.approx((0.30, 0.20, 0.40))
    assert low["slowdown_verdict"] == "green" and low["slowdown_decided"]
    assert low["small_significant"] and low["large_significant"]
    same = row(t, "same")
    assert same["is_reference"] and same["slowdown"] == 0 and same["small_gain"] == 0
    assert list(t["arm"]) == ["same", "low"]


def test_pareto_set_on_the_estimates_and_who_dominates():
    t = table_of(GREEN_GAIN, COSTLY_MORE_GAIN, DOMINATED)
    # the reference is on it: no arm is as fast (every slowdown estimate is > 0)
    assert set(t.loc[t["pareto_small"], "arm"]) == {"same", "low", "drr"}
    first5 = row(t, "first5")
    assert not first5["pareto_small"]
    assert set(first5["dominated_by_small"].split(", ")) == {"low", "drr"}
    # low's intervals lie wholly on the better side of first5's: decided
    assert first5["dominance_decided_small"]
    assert row(t, "low")["dominated_by_small"] == ""


def test_dominance_on_estimates_only_is_marked_undecided():
    a = ("a", (-0.001, -0.02, 0.02), (-0.30, -0.45, -0.15), (-0.1, -0.2, 0.0))
    b = ("b", (0.001, -0.02, 0.02), (-0.25, -0.40, -0.10), (-0.1, -0.2, 0.0))
    t = table_of(a, b)
    assert row(t, "a")["pareto_small"] and not row(t, "b")["pareto_small"]
    assert row(t, "b")["dominated_by_small"] == "a"
    assert not row(t, "b")["dominance_decided_small"]   # the intervals overlap
    # a (slowdown -0.1 %, gain +30 %) dominates the reference on the estimates,
    # but its intervals straddle 0: undecided
    assert row(t, "same")["dominated_by_small"] == "a"
    assert not row(t, "same")["dominance_decided_small"]


def test_dominance_decided_over_the_reference():
    faster = ("faster", (-0.05, -0.07, -0.03), (-0.2, -0.3, -0.1), (-0.1, -0.2, -0.05))
    t = table_of(faster)
    same = row(t, "same")
    assert not same["pareto_small"] and same["dominance_decided_small"]
    assert not same["pareto_large"] and same["dominance_decided_large"]


def test_best_arm_is_decided_green_with_a_significant_gain():
    t = table_of(GREEN_GAIN, COSTLY_MORE_GAIN, DOMINATED)
    assert list(t.loc[t["best"], "arm"]) == ["low"]
    assert row(t, "low")["eligible"] and row(t, "low")["why_not"] == ""
    assert "not decided" not in row(t, "drr")["why_not"]
    assert "above 1 %" in row(t, "drr")["why_not"]
    (name, verdict), = frontier.point_verdicts(t, ["label"])
    assert name == "p" and verdict.startswith("best: low, slowdown +0.2 % [-0.3, +0.7]")
    assert "small-flow FCT gain +30.0 % [+20.0, +40.0]" in verdict


def test_the_larger_small_flow_gain_wins_among_the_eligible():
    other = ("first17", (0.0, -0.005, 0.005), (-0.35, -0.45, -0.25), (-0.05, -0.15, 0.05))
    t = table_of(GREEN_GAIN, other)
    assert list(t.loc[t["best"], "arm"]) == ["first17"]
    assert row(t, "low")["eligible"]


def test_no_best_arm_says_why_for_each():
    undecided = ("low", (0.01, -0.01, 0.03), (-0.3, -0.4, -0.2), (-0.2, -0.3, -0.1))
    no_gain = ("drr", (0.0, -0.005, 0.005), (-0.05, -0.2, 0.1), (0.02, -0.1, 0.12))
    slower = ("dctcp", (0.0, -0.005, 0.005), (-0.5, -0.6, -0.4), (0.3, 0.2, 0.4))
    no_interval = ("first5", (0.0, math.nan, math.nan), (-0.3, -0.4, -0.2), (-0.1, -0.2, -0.05))
    stalled = ("first35", (math.inf, math.inf, math.inf), (-0.9, -0.95, -0.85), None)
    t = table_of(undecided, no_gain, slower, no_interval, stalled)
    assert not t["best"].any()
    why = dict(zip(t["arm"], t["why_not"]))
    assert why["low"] == "slowdown +1.0 % [-1.0, +3.0] not decided <= 1 %"
    assert why["drr"].startswith("no significant background gain (small +5.0 % [-10.0, +20.0]")
    assert why["dctcp"] == "large flows significantly slower"
    assert "too few iterations" in why["first5"]
    assert why["first35"] == "training stalled"
    # a stalled arm has no place in the plane; an arm without a class's flows
    # none in that class's panel
    first35 = row(t, "first35")
    assert not first35["pareto_small"] and first35["dominated_by_small"] == ""
    (_, verdict), = frontier.point_verdicts(t, ["label"])
    assert verdict.startswith("none: no arm has a slowdown decided <= 1 % with a significant "
                              "background gain; low: slowdown +1.0 %")


def test_points_are_judged_apart_with_their_own_reference():
    free = {"label": "free", "training.ratio": 16}
    costly = {"label": "costly", "training.ratio": 4}
    means = pd.DataFrame([
        *arm_rows("low", GREEN_GAIN[1], GREEN_GAIN[2], GREEN_GAIN[3], free),
        *arm_rows("low", (0.5, 0.3, 0.7), (-0.2, -0.3, -0.1), (-0.1, -0.2, -0.05), costly),
        *arm_rows("drr", (0.0, -0.005, 0.005), (-0.1, -0.15, -0.05), (0.0, -0.1, 0.1), costly)])
    keys = frontier.point_keys_of(means)
    assert keys == ["label", "training.ratio"]
    refs = {frontier.point_key(["free", 16]): "same", frontier.point_key(["costly", 4.0]): "fifo"}
    t = frontier.frontier_table(means, keys, refs)
    assert list(t["arm"]) == ["same", "low", "fifo", "low", "drr"]
    assert row(t, "low", "free")["best"] and row(t, "drr", "costly")["best"]
    assert not row(t, "low", "costly")["eligible"]
    lines = frontier.table_lines(t, keys)
    assert lines[0] == "free" and any(line.startswith("costly") for line in lines)
    assert any("*best" in line and "drr" in line for line in lines)


def test_empty_table_keeps_its_columns():
    t = frontier.frontier_table(pd.DataFrame(columns=["label", "arm", "metric", "change"]),
                                ["label"])
    assert t.empty and "pareto_small" in t.columns
    assert frontier.point_verdicts(t, ["label"]) == [] and frontier.table_lines(t, ["label"]) == []


@pytest.mark.parametrize("points", [1, 2])
def test_the_figure_labels_the_pareto_set_and_nothing_is_cut_or_overlaps(points, tmp_path):
    arms = [GREEN_GAIN, COSTLY_MORE_GAIN, DOMINATED,
            ("first17-with-a-long-name", (0.001, -0.002, 0.004), (-0.29, -0.39, -0.19),
             (-0.21, -0.31, -0.11)),
            ("dctcp-low", (0.0, math.nan, math.nan), (-0.6, -0.7, -0.5), (0.1, 0.05, 0.2)),
            ("stalled", (math.inf, math.inf, math.inf), (-0.5, -0.6, -0.4), None)]
    labels = [f"R{16 // (k + 1)}-lambda{46 * (k + 1)}-a-long-point-label" for k in range(points)]
    means = pd.DataFrame([r for label in labels for a in arms
                          for r in arm_rows(*a, point={"label": label})])
    t = frontier.frontier_table(means, ["label"], "same")
    fig = frontier_figure.draw_frontier(t, ["label"], frontier_figure.frontier_title("g", t))
    check_layout(fig, saved(fig, tmp_path))
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == 2 * points
    for ax, cls in zip(panels, ["small", "large"] * points):
        named = {text.get_text() for text in ax.texts}
        assert named == set(t.loc[t["pareto_" + cls] & (t["label"] == labels[0]), "arm"])
        assert any(abs(line.get_xdata()[0] - 100 * stats.GREEN_MAX) < 1e-9
                   for line in ax.get_lines() if len(line.get_xdata()) == 2)
    assert "not drawn: stalled" in panels[0].get_title()


def write_sweep(d, means: pd.DataFrame, reference: str = "same") -> None:
    d.mkdir(parents=True)
    (d / "sweep.json").write_text(json.dumps({"grid": "g", "axes": ["label", "seed"],
                                              "arms": ["same", "low"],
                                              "reference": reference, "cells": []}))
    pd.DataFrame({"cell": ["x"], "arm": ["same"], "status": ["ok"]}).to_parquet(
        d / "summary.parquet")
    means.to_parquet(d / "deltas_mean.parquet")


def test_the_command_prints_and_writes_the_table_and_the_figure(tmp_path):
    means = pd.DataFrame([r for a in (GREEN_GAIN, COSTLY_MORE_GAIN) for r in arm_rows(*a)])
    write_sweep(tmp_path / "s", means)
    result = CliRunner().invoke(cli.main, ["frontier", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "best: low" in result.stdout
    table = pd.read_parquet(tmp_path / "s" / "frontier.parquet")
    assert list(table["arm"]) == ["same", "low", "drr"] and table["best"].tolist() == \
        [False, True, False]
    assert (tmp_path / "s" / "plots" / "frontier.png").stat().st_size > 10_000
    # again, into the same plots directory: the harness's own figure is replaced
    again = CliRunner().invoke(cli.main, ["frontier", str(tmp_path / "s"), "--format", "svg"])
    assert again.exit_code == 0, again.output
    assert (tmp_path / "s" / "plots" / "frontier.svg").is_file()


TINY_GRID = """name = "tiny-frontier"
scenario = "thesis"
timeout = "20min"
points = [{ label = "R2-lambda92", "training.ratio" = 2, "background.rate" = 92 }]
[set]
scale = 40
"run.duration" = 0.25
"run.warmup" = 0.05
"run.cooldown" = 0.05
"run.min_iterations" = 3
[axes]
seed = [1, 2]
[arms]
reference = "same"
same = { "training.priority" = "same" }
low = { "training.priority" = "low" }
first5 = { "training.priority" = "low", "training.layer_classes" = { high = "0-4" } }
"""


@pytest.mark.slow
def test_a_tiny_real_frontier_sweep_gives_a_consistent_table_and_figure(tmp_path):
    """The thesis cell R = 2, lambda = 92 at scale 40, 3 iterations a cell, two
    seeds: same against low and first5 in real ns-3, then `harness frontier`."""
    from harness.sweeps import sweeping
    from harness.sweeps.grid import load_grid

    grid = tmp_path / "tiny.toml"
    grid.write_text(TINY_GRID)
    out = tmp_path / "s"
    report = sweeping.run_sweep(load_grid(grid), out, jobs=2, progress=False)
    assert not report.failed
    result = CliRunner().invoke(cli.main, ["frontier", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "plots" / "frontier.png").stat().st_size > 10_000
    t = pd.read_parquet(out / "frontier.parquet")
    assert list(t["arm"]) == ["same", "low", "first5"] and t["label"].eq("R2-lambda92").all()
    assert (t["seeds"] == 2).all()
    means = pd.read_parquet(out / "deltas_mean.parquet")
    for _, r in t[~t["is_reference"]].iterrows():
        m = means[means["arm"] == r["arm"]].set_index("metric")
        assert r["slowdown"] == pytest.approx(m.loc["iteration_time", "change"])
        assert r["small_gain"] == pytest.approx(-m.loc["fct_small_mean", "change"])
        assert r["large_gain"] == pytest.approx(-m.loc["fct_large_mean", "change"],
                                                nan_ok=True)
    # the Pareto set is the table's: no member dominated by another row on the
    # estimates, every other row dominated by a member
    for cls, _ in frontier.GAIN_CLASSES:
        rows = [r for _, r in t.iterrows() if math.isfinite(r["slowdown"])
                and math.isfinite(r[f"{cls}_gain"])]
        front = [r for r in rows if r[f"pareto_{cls}"]]
        assert front
        for r in rows:
            beaten = [o["arm"] for o in rows if o["arm"] != r["arm"]
                      and frontier.dominates(o, r, cls)]
            assert bool(r[f"pareto_{cls}"]) == (not beaten)
            assert sorted(filter(None, r[f"dominated_by_{cls}"].split(", "))) == sorted(beaten)
    assert t["best"].sum() <= 1
    assert ("best: " in result.stdout) == bool(t["best"].any())
    assert "none: " in result.stdout or "best: " in result.stdout


def test_references_per_point_from_a_sweep_with_per_point_arms():
    grid = {"reference": None, "cells": [
        {"id": "a", "arm": "random", "point": {"label": "tictac", "seed": 1},
         "reference": "random"},
        {"id": "b", "arm": "fifo", "point": {"label": "p3", "seed": 1}, "reference": "fifo"}]}
    refs = frontier.references_of(grid, ["label"])
    assert refs == {frontier.point_key(["tictac"]): "random",
                    frontier.point_key(["p3"]): "fifo"}
    assert frontier.references_of({"reference": "same", "cells": [{"id": "a"}]},
                                  ["label"]) == "same"
    means = pd.DataFrame([*arm_rows("tictac", *GREEN_GAIN[1:], point={"label": "tictac"}),
                          *arm_rows("p3", *DOMINATED[1:], point={"label": "p3"})])
    t = frontier.frontier_table(means, ["label"], refs)
    assert list(zip(t["label"], t["arm"], t["is_reference"])) == [
        ("tictac", "random", True), ("tictac", "tictac", False), ("p3", "fifo", True),
        ("p3", "p3", False)]
