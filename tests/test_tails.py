"""Issue 46 on the real simulator (tiny: 4 hosts at 1 Gbit/s, < 1 s simulated):
the tails' intervals and "too few samples", bootstraps that depend only on
their cells (byte-identical in two grids sharing cells), `harness compare`,
`harness export` and `harness plot --metric`."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import harness
from harness import cli, cli_sweeps
from harness.analysis import metrics, stats
from harness.analysis.tables import read_run
from harness.outputs import export as exporting

# a training job next to web-search background at load 0.3: ~15 small-flow
# pairs per point (a mean's bootstrap, not a p99's) and a few iterations
GRID = """
name = "{name}"
scenario = "default"
timeout = "10min"
[set]
"run.duration" = 0.4
"run.warmup" = 0.05
"run.cooldown" = 0.05
"training.enabled" = true
"training.profile" = "{model}"
"training.workers" = 4
{fixed}
[axes]
{axis}
"background.load" = [0.3]
[arms]
reference = "same"
same = {{ "training.priority" = "same" }}
low = {{ "training.priority" = "low" }}
"""


@pytest.fixture(scope="module")
def two_grids(tmp_path_factory, make_profile):
    """Grid A (R = 2 set) and grid B (R an axis, [2, 1]): A's cells are B's
    first point's, but their point keys differ ((0.3,) against (2, 0.3))."""
    from harness.sweeps import sweeping
    from harness.sweeps.grid import load_grid

    model = make_profile(10, 1_000_000, 5.0)
    d = tmp_path_factory.mktemp("tails")
    outs = []
    for name, fixed, axis in (("tails-a", '"training.ratio" = 2', ""),
                              ("tails-b", "", '"training.ratio" = [2, 1]')):
        path = d / f"{name}.toml"
        path.write_text(GRID.format(name=name, model=model, fixed=fixed, axis=axis))
        out = d / name
        sweeping.run_sweep(load_grid(path), out, jobs=2, progress=False)
        outs.append(out)
    return outs


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, make_profile):
    """A fast job (~0.6 ms iterations at R = 2: 500+ measured) at R = 1 and
    R = 2, the same background flows and seed: paired."""
    model = make_profile(4, 10_000, 0.2)
    d = tmp_path_factory.mktemp("tail-runs")
    base = {"training.enabled": True, "training.profile": str(model), "training.workers": 4,
            "background.load": 0.1, "run.duration": 0.7, "run.warmup": 0.05,
            "run.cooldown": 0.05}
    harness.run(None, {**base, "training.ratio": 1}, out=d / "a")
    harness.run(None, {**base, "training.ratio": 2}, out=d / "b")
    return d / "a", d / "b"


def test_same_cells_give_byte_identical_intervals_in_any_grid(two_grids):
    a, b = two_grids
    cells_a = set(pd.read_parquet(a / "summary.parquet")["cell"])
    cells_b = set(pd.read_parquet(b / "summary.parquet")["cell"])
    assert cells_a and cells_a < cells_b          # B holds A's cells and more
    mean_a = pd.read_parquet(a / "deltas_mean.parquet")
    mean_b = pd.read_parquet(b / "deltas_mean.parquet")
    shared = mean_b[mean_b["training.ratio"] == 2].reset_index(drop=True)
    columns = ["arm", "metric", "change", "change_low", "change_high", "samples", "verdict"]
    assert len(shared) == len(mean_a) == len(metrics.DELTA_METRICS)
    for col in ("change", "change_low", "change_high"):
        assert mean_a[col].to_numpy().tobytes() == shared[col].to_numpy().tobytes(), col
    pd.testing.assert_frame_equal(mean_a[columns], shared[columns], check_exact=True)
    # a bootstrap ran (a mean FCT's interval), so the seed mattered
    boot = mean_a[mean_a["metric"].isin(["fct_small_mean", "fct_all_mean"])]
    assert np.isfinite(boot["change_low"]).any(), boot


def test_tails_have_an_estimate_and_a_verdict_never_nan(two_grids):
    table = pd.read_parquet(two_grids[1] / "deltas_mean.parquet")
    assert {m for _, m in metrics.DELTA_METRICS} <= set(table["metric"])
    by = table.set_index(["training.ratio", "arm", "metric"])
    for (ratio, arm), _ in table.groupby(["training.ratio", "arm"]):
        pairs = [("iteration_time", f"iteration_time_{q}") for q in stats.ITERATION_TAILS]
        pairs += [(f"fct_{c}_mean", f"fct_{c}_{q}") for c in stats.FCT_CLASSES
                  for q in ("p99", "p999")]
        for mean, tail in pairs:
            m, t = by.loc[(ratio, arm, mean)], by.loc[(ratio, arm, tail)]
            if math.isfinite(m["change"]):        # where the mean has a change, so has the tail
                assert math.isfinite(t["change"]), (ratio, arm, tail)
                need = stats.min_pairs_of(tail)
                assert t["samples"] < need       # a tiny run: never enough for a tail
                assert t["verdict"] == stats.TOO_FEW and not t["decided"]
                assert math.isnan(t["change_low"]) and math.isnan(t["change_high"])
            else:
                assert t["verdict"] == stats.NOT_APPLICABLE


def test_the_sweeps_console_summary_shows_the_tails(two_grids, capsys):
    table = pd.read_parquet(two_grids[1] / "deltas_mean.parquet")
    cli_sweeps._print_deltas(table, ["training.ratio", "background.load"])
    out = capsys.readouterr().out
    tails = [line for line in out.splitlines() if line.startswith("    tails: ")]
    assert len(tails) == 2                        # one per point and compared arm
    assert all("iteration p99" in t and "small FCT p99" in t for t in tails)
    assert "of 368 pairs)" in out                 # too few samples, with the rule's number


def test_plot_draws_the_map_of_any_metric(two_grids, tmp_path):
    r = CliRunner().invoke(cli.main, ["plot", str(two_grids[1]), "--metric", "fct_small_p99",
                                      "-o", str(tmp_path / "figs"), "--format", "png"])
    assert r.exit_code == 0, r.output
    png = tmp_path / "figs" / "map-fct_small_p99.png"
    assert png.read_bytes().startswith(b"\x89PNG") and r.output.strip() == str(png)


def test_compare_runs_decides_the_iteration_tail(two_runs, tmp_path):
    a, b = two_runs
    table = harness.compare(a, b, out=tmp_path / "changes.csv")
    rows = table.set_index("metric")
    assert rows["paired"].all()                   # same background flows and seed
    p99 = rows.loc["iteration_time_p99"]
    assert p99["samples"] >= stats.MIN_PAIRS["p99"]
    assert p99["change_low"] < p99["change"] < p99["change_high"]
    # the change is that of the two runs' own p99s (of every measured
    # iteration, each averaged over its workers), decided only where its
    # interval excludes 0: a few stalled iterations carry a p99 of ~500
    times = [read_run(d, ("iterations",)).iterations for d in (a, b)]
    q = [t[t["measured"]].groupby("iteration")["iteration_s"].mean().quantile(0.99)
         for t in times]
    assert p99["change"] == pytest.approx(q[1] / q[0] - 1)
    assert p99["decided"] == (p99["change_low"] > 0 or p99["change_high"] < 0)
    p999 = rows.loc["iteration_time_p999"]
    assert p999["samples"] < stats.MIN_PAIRS["p999"] and p999["verdict"] == stats.TOO_FEW
    assert math.isfinite(p999["change"])
    written = pd.read_csv(tmp_path / "changes.csv")
    assert list(written["metric"]) == list(table["metric"])
    # the same directories, the same table
    again = harness.compare(a, b)
    pd.testing.assert_frame_equal(table, again, check_exact=True)


def test_compare_runs_of_other_flows_is_unpaired(two_runs, two_grids):
    cell = next((two_grids[0] / "cells").iterdir())      # background load 0.3, not 0.1
    table = harness.compare(two_runs[0], cell)
    assert not table["paired"].any()
    assert set(table["verdict"]) <= {*stats.TRAINING_CLASSES, stats.TOO_FEW, stats.FASTER,
                                     stats.SLOWER, stats.NOT_SIGNIFICANT, stats.NOT_APPLICABLE,
                                     stats.SMALLER, stats.LARGER} | {
        f"{x}/{y}" for x in stats.TRAINING_CLASSES for y in stats.TRAINING_CLASSES}


def test_compare_sweeps_matches_points_by_their_settings(two_grids):
    a, b = two_grids
    r = CliRunner().invoke(cli.main, ["compare", str(a), str(b)])
    assert r.exit_code == 0, r.output
    assert "2 point(s) of one sweep have no partner" in r.output   # B's R = 1
    table = harness.compare(a, b)
    assert set(table["arm"]) == {"same", "low"} and table["paired"].all()
    # A sets R = 2, B varies it: matched by the value A sets
    assert set(table["background.load"]) == {0.3} and set(table["training.ratio"]) == {2}
    finite = table[np.isfinite(table["change"])]
    assert len(finite) and (finite["change"] == 0).all()     # the same cells: no change


def test_export_writes_every_table_with_its_dictionary(two_runs, two_grids, tmp_path):
    out = harness.export(two_runs[0], tmp_path / "run-csv", format="csv")
    files = {p.name for p in out.iterdir()}
    assert {"summary.csv", "flows.csv", "iterations.csv", exporting.DICTIONARY} <= files
    dictionary = pd.read_csv(out / exporting.DICTIONARY, keep_default_na=False)
    for name in files - {exporting.DICTIONARY}:
        table = pd.read_csv(out / name)
        described = dictionary[dictionary["table"] == name.removesuffix(".csv")]
        assert list(described["column"]) == list(table.columns), name
    assert (dictionary["meaning"] != "(not described)").all(), \
        dictionary[dictionary["meaning"] == "(not described)"]
    assert dictionary.set_index(["table", "column"]).loc[("flows", "fct_s"), "unit"] == "s"
    flows = pd.read_parquet(two_runs[0] / "flows.parquet")
    assert len(pd.read_csv(out / "flows.csv")) == len(flows)

    sweep_out = harness.export(two_grids[1], tmp_path / "sweep-parquet", format="parquet")
    for name in ("summary", "deltas", "deltas_mean"):
        pd.testing.assert_frame_equal(pd.read_parquet(sweep_out / f"{name}.parquet"),
                                      pd.read_parquet(two_grids[1] / f"{name}.parquet"))
    sweep_dictionary = pd.read_csv(sweep_out / exporting.DICTIONARY, keep_default_na=False)
    assert (sweep_dictionary["meaning"] != "(not described)").all()
    # an existing OUT is refused, untouched
    before = {p.name: p.read_bytes() for p in sweep_out.iterdir()}
    with pytest.raises(harness.ConfigError, match="exists"):
        harness.export(two_grids[1], sweep_out, format="csv")
    assert {p.name: p.read_bytes() for p in sweep_out.iterdir()} == before
