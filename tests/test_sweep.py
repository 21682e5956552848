"""`harness sweep`: grids, the local and Dask executors, failures, kill and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from harness import claims, sweep
from harness.config import ConfigError

def results(out) -> pd.DataFrame:
    """The summary without its wall-clock columns (they are measurements of the host)."""
    df = pd.read_parquet(out / "summary.parquet")
    return df.drop(columns=list(sweep.TIMING_COLUMNS)).sort_values("cell").reset_index(drop=True)


def test_local_sweep_runs_every_cell_and_pairs_the_arms(local_sweep):
    s = local_sweep.tables["summary"]
    assert len(s) == 8 and (s["status"] == "ok").all() and not local_sweep.failed
    assert set(s["arm"]) == {"same", "low"}
    assert (s["iterations"] > 0).all()
    # both arms of a point see the same background flows (common random numbers)
    out = local_sweep.out
    for _, pair in s.groupby(["training.ratio", "background.load"]):
        a, b = (pd.read_parquet(out / "cells" / c / "flows.parquet") for c in pair["cell"])
        assert a[["id", "size", "start_s", "src", "dst"]].equals(b[["id", "size", "start_s",
                                                                      "src", "dst"]])
    d = local_sweep.tables["deltas"]
    assert set(d["arm"]) == {"low"} and len(d) == 4 * len(sweep.metrics.DELTA_METRICS)
    it = d[d["metric"] == "iteration_time"]
    assert ((it["value"] / it["reference"] - 1 - it["change"]).abs() < 1e-12).all()
    m = local_sweep.tables["deltas_mean"]
    assert len(m) == len(d) and (m["n"] <= 1).all()


def test_dask_local_cluster_gives_the_same_results(local_sweep, grid_file, tmp_path):
    report = sweep.run_sweep(sweep.load_grid(grid_file), tmp_path / "dask", jobs=2,
                             executor="dask", progress=False)
    assert not report.failed
    pd.testing.assert_frame_equal(results(tmp_path / "dask"), results(local_sweep.out))
    for cell in report.tables["summary"]["cell"]:
        for name in ("flows.parquet", "iterations.parquet", "transfers.parquet"):
            assert ((tmp_path / "dask" / "cells" / cell / name).read_bytes()
                    == (local_sweep.out / "cells" / cell / name).read_bytes())


def test_dask_cells_over_their_time_limit_are_killed_and_the_worker_goes_on(grid_file,
                                                                           tmp_path):
    # one worker: its cell server forks a child per cell, so the first cell's
    # kill leaves the server running the second
    slow = tmp_path / "slow.toml"
    slow.write_text(grid_file.read_text().replace('timeout = "10min"', 'timeout = "0.5s"')
                    .replace("[0.05, 0.1]", "[0.05]").replace("[2, 1]", "[2]"))
    report = sweep.run_sweep(sweep.load_grid(slow), tmp_path / "out", jobs=1,
                             executor="dask", progress=False)
    s = report.tables["summary"]
    assert len(report.failed) == 2 and s["error"].str.startswith("timeout").all()
    assert not list((tmp_path / "out" / "cells").iterdir())


def test_sigkill_then_resume_finishes_each_cell_once(local_sweep, grid_file, tmp_path):
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "harness.cli", "sweep", str(grid_file), "-j", "1", "-o",
           str(out), "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and not list((out / "cells").glob("[0-9a-f]*")):
        time.sleep(0.2)
    time.sleep(1.0)  # well inside the next cell
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = {p.name for p in (out / "cells").glob("[0-9a-f]*")}
    assert 0 < len(done_before) < 8
    # without --resume the directory is refused
    again = subprocess.run(cmd, capture_output=True, text=True)
    assert again.returncode == 2 and "--resume" in again.stderr
    resumed = subprocess.run([*cmd, "--resume"], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{8 - len(done_before)} cells run, {len(done_before)} already done" in resumed.stderr
    cells = sorted(p.name for p in (out / "cells").iterdir())
    assert len(cells) == 8 and not any(c.startswith(".") for c in cells)
    pd.testing.assert_frame_equal(results(out), results(local_sweep.out))


def test_a_failing_cell_is_recorded_and_the_others_finish(grid_file, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(grid_file.read_text().replace("[0.05, 0.1]", "[0.05, -0.1]")
                   .replace('"training.ratio" = [2, 1]', '"training.ratio" = [2]'))
    r = subprocess.run([sys.executable, "-m", "harness.cli", "sweep", str(bad), "-j", "2",
                        "-o", str(tmp_path / "out"), "--no-progress"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    s = pd.read_parquet(tmp_path / "out" / "summary.parquet")
    failed = s[s["status"] == "failed"]
    assert set(failed["background.load"]) == {-0.1} and len(failed) == 2
    assert failed["error"].str.contains("background.load").all()
    assert (s.loc[s["status"] == "ok", "iterations"] > 0).all() and len(s) == 4
    assert "2 failed" in r.stderr


def test_a_cell_over_its_time_limit_is_killed_and_recorded(grid_file, tmp_path):
    slow = tmp_path / "slow.toml"
    slow.write_text(grid_file.read_text().replace('timeout = "10min"', 'timeout = "0.5s"')
                    .replace("[0.05, 0.1]", "[0.05]").replace("[2, 1]", "[2]"))
    report = sweep.run_sweep(sweep.load_grid(slow), tmp_path / "out", jobs=2, progress=False)
    s = report.tables["summary"]
    assert len(report.failed) == 2 and s["error"].str.startswith("timeout").all()
    assert not list((tmp_path / "out" / "cells").iterdir())


@pytest.mark.parametrize("change, field", [
    (('"training.ratio" = [2, 1]', '"training.ratioo" = [2, 1]'), "axes.training.ratioo"),
    (('"training.ratio" = [2, 1]', '"training.ratio" = []'), "axes.training.ratio"),
    (('"training.ratio" = [2, 1]', '"training.ratio" = [2, "fast"]'), "axes.training.ratio"),
    (('"training.ratio" = [2, 1]', '"training.ratio" = 2'), "axes.training.ratio"),
    (('"training.ratio" = [2, 1]', '"training.ratio" = [2, 2]'), "axes.training.ratio"),
    (('reference = "same"', 'reference = "high"'), "arms.reference"),
    (('name = "tiny"', 'name = "tiny"\ncolour = "red"'), "colour"),
    (('"run.duration" = 0.25', '"run.duraton" = 0.25'), "set.run.duraton"),
    (('scenario = "default"', 'scenario = "nowhere"'), "scenario"),
])
def test_grid_errors_name_the_field_before_anything_runs(grid_file, tmp_path, change, field):
    bad = tmp_path / "bad.toml"
    bad.write_text(grid_file.read_text().replace(*change))
    with pytest.raises(ConfigError) as err:
        sweep.load_grid(bad)
    assert err.value.field == field, str(err.value)


def test_changed_grid_is_detected_on_resume(local_sweep, grid_file, tmp_path):
    changed = tmp_path / "changed.toml"
    changed.write_text(grid_file.read_text().replace("[0.05, 0.1]", "[0.05, 0.2]"))
    with pytest.raises(sweep.SweepError, match="grid changed"):
        sweep.prepare_dir(local_sweep.out, sweep.load_grid(changed),
                          sweep.expand(sweep.load_grid(changed)), resume=True)


@pytest.mark.parametrize("preset, cells", [("quick", 32), ("thesis", 96)])
def test_presets_expand_to_the_reference_grid(preset, cells):
    grid = sweep.load_grid(preset)
    expanded = sweep.expand(grid)
    assert len(expanded) == cells and all(c.scenario is not None for c in expanded)
    assert grid.axis_fields[0] == "training.ratio" and grid.reference == "same"
    ratios = {c.scenario.training.ratio for c in expanded}
    assert ratios == {16, 8, 4, 2}


def test_cells_start_longest_predicted_first(grid_file, tmp_path, monkeypatch):
    from harness import executors

    cells = sweep.expand(sweep.load_grid(grid_file))
    by_point = {}
    for c in cells:
        by_point.setdefault(c.point, set()).add(c.predicted_bytes)
    assert all(len(v) == 1 for v in by_point.values())      # both arms alike
    b = {(dict(p)["training.ratio"], dict(p)["background.load"]): v.pop()
         for p, v in by_point.items()}
    # more background load, and a more network-bound job: more bytes to simulate
    assert b[2, 0.1] > b[2, 0.05] > 0 and b[1, 0.1] > b[1, 0.05]
    assert b[1, 0.05] > b[2, 0.05]
    started = []
    monkeypatch.setattr(executors, "run_local",
                        lambda tasks, jobs, on_done: started.extend(t.cell for t in tasks))
    sweep.run_sweep(sweep.load_grid(grid_file), tmp_path / "out", progress=False)
    predicted = [c.predicted_bytes for c in started]
    assert len(started) == len(cells) and predicted == sorted(predicted, reverse=True)


# ---------------------------------------------------------------- points with their own arms

OWN_ARMS = """
name = "own-arms"
scenario = "default"
timeout = "10min"
[set]
"run.duration" = 0.3
"run.warmup" = 0.05
"run.cooldown" = 0.01
"training.enabled" = true
"training.profile" = "{model}"
"training.workers" = 3
"training.architecture" = "ps"
"training.ratio" = 2
"network.band_limit_packets" = 100
"background.enabled" = false
[axes]
seed = [1, 2]

[[points]]
label = "tictac"
"training.pull_barrier" = true
reference = "random"
arms.random = {{ "training.policy" = "random" }}
arms.tictac = {{ "training.policy" = "tictac" }}

[[points]]
label = "p3"
"training.servers" = 1
reference = "fifo"
arms.fifo = {{ "training.policy" = "fifo" }}
arms.p3 = {{ "training.policy" = "p3" }}
"""


@pytest.fixture(scope="module")
def own_arms_file(tmp_path_factory):
    from harness import profiles

    d = tmp_path_factory.mktemp("own-arms")
    profiles.save_profile(profiles.resnet50_like(10, 1_000_000, 5.0), d / "m.csv")
    path = d / "own.toml"
    path.write_text(OWN_ARMS.format(model=d / "m.csv"))
    return path


def test_points_with_their_own_arms_compare_each_with_its_own_reference(own_arms_file, tmp_path):
    from harness.plots import sweep_figures

    grid = sweep.load_grid(own_arms_file)
    cells = sweep.expand(grid)
    assert {(dict(c.point)["label"], c.arm, c.reference) for c in cells} == {
        ("tictac", "random", "random"), ("tictac", "tictac", "random"),
        ("p3", "fifo", "fifo"), ("p3", "p3", "fifo")}
    assert all(c.scenario.training.pull_barrier == (dict(c.point)["label"] == "tictac")
               for c in cells)
    report = sweep.run_sweep(grid, tmp_path / "out", jobs=2, progress=False)
    assert not report.failed
    d = report.tables["deltas"]
    assert set(zip(d["label"], d["arm"])) == {("tictac", "tictac"), ("p3", "p3")}
    s = report.tables["summary"].set_index(["label", "arm", "seed"])
    it = d[d["metric"] == "iteration_time"].set_index(["label", "arm", "seed"])
    for (label, arm, seed), row in it.iterrows():
        ref = {"tictac": "random", "p3": "fifo"}[label]
        assert row["reference"] == s.loc[(label, ref, seed), "mean_iteration_s"]
        assert row["value"] == s.loc[(label, arm, seed), "mean_iteration_s"]
    m = report.tables["deltas_mean"]
    m = m[m["metric"].isin(["iteration_time", "end_spread"])].set_index(["label", "metric"])
    assert (m["seeds"] == 2).all() and m["change_low"].notna().all()
    assert m.loc[("tictac", "iteration_time"), "change"] < 0   # tictac beats random order
    record = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert {c["reference"] for c in record["cells"]} == {"random", "fifo"}
    frame = sweep_figures.comparison_frame(report.tables["summary"], record)
    # labelled points with their own arms: a bar per "label: arm", hue = role
    assert set(frame["point"]) == {"tictac: random", "tictac: tictac", "p3: fifo", "p3: p3"}
    roles = frame.drop_duplicates("point").set_index("point")["arm"]
    assert roles["tictac: random"] == roles["p3: fifo"] == "reference"
    assert roles["tictac: tictac"] == roles["p3: p3"] == "compared"
    # the claims table: each point's arm against the point's own reference
    table = claims.claims_table(tmp_path / "out").set_index(["label", "arm"])
    assert dict(zip(table.index, table["baseline"])) == {("tictac", "tictac"): "random",
                                                          ("p3", "p3"): "fifo"}
    for label, arm in (("tictac", "tictac"), ("p3", "p3")):
        assert table.loc[(label, arm), "change"] == pytest.approx(
            m.loc[(label, "iteration_time"), "change"], nan_ok=True)
    assert "| tictac | tictac vs random | all |" in claims.markdown(table.reset_index())


def test_claims_phases_split_the_window_at_every_change(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({
        "run": {"warmup": 0.5, "duration": 4.0, "cooldown": 0.5},
        "link_changes": [{"link": 0, "at_ns": 2_000_000_000, "rate_bps": 1e9},
                         {"link": 1, "at_ns": 2_000_000_000, "rate_bps": 1e9}],
        "background": {"steps": [[1.0, 50.0], [3.8, 0.0]]}}))
    got = claims.phases(claims.Run("x", "a", 1, run))
    assert got == [(0.5, 1.0), (1.0, 2.0), (2.0, 3.5)]


@pytest.mark.parametrize("change, field", [
    (('reference = "random"', 'reference = "fifo"'), "points[0].reference"),
    (('reference = "random"\n', ''), "points[0].reference"),
    (('label = "p3"', 'label = "tictac"'), "points[1].label"),
    (('label = "p3"\n', ''), "points[1].label"),
    (('arms.p3 = {{ "training.policy" = "p3" }}', 'arms.p3 = {{ "training.servers" = 2 }}'),
     "points[1].arms.p3.training.servers"),
    (('arms.p3 = {{ "training.policy" = "p3" }}', 'arms.p3 = {{ "training.polcy" = "p3" }}'),
     "points[1].arms.p3.training.polcy"),
    (('arms.p3 = {{ "training.policy" = "p3" }}', 'arms.p3 = 3'), "points[1].arms.p3"),
    (('label = "p3"', 'label = 3'), "points[1].label"),
])
def test_own_arms_errors_name_the_field(own_arms_file, tmp_path, change, field):
    bad = tmp_path / "bad.toml"
    text = own_arms_file.read_text()
    old, new = (c.replace("{{", "{").replace("}}", "}") for c in change)
    assert old in text
    bad.write_text(text.replace(old, new))
    with pytest.raises(ConfigError) as err:
        sweep.load_grid(bad)
    assert err.value.field == field, str(err.value)


def test_seed_claims_grid_sets_every_system_against_its_baseline():
    from harness.run import plan

    grid = sweep.load_grid("seed-claims")
    cells = sweep.expand(grid)
    assert all(c.scenario is not None for c in cells), [c.error for c in cells if c.error]
    by_label: dict[str, list] = {}
    for c in cells:
        by_label.setdefault(dict(c.point)["label"], []).append(c)
    assert {"bytescheduler", "p3", "prophet", "tictac", "mercury", "autobyte",
            "ring-priority"} <= set(by_label)
    for label, group in by_label.items():
        assert {dict(c.point)["seed"] for c in group} == {1, 2, 3}, label
        arms = {c.arm for c in group}
        assert group[0].reference in arms and len(arms) >= 2, label
        # the arms of a seed replay the same background flows and run as long
        first = [plan(c.scenario) for c in group if dict(c.point)["seed"] == 1]
        assert all(p.flows.equals(first[0].flows) for p in first[1:]), label
        assert len({p.run.duration for p in first}) == 1, label
