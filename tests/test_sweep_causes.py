"""A sweep's attribution (causes.parquet, harness.analysis.cause_changes;
issue 62 deliverable 2 in part): each compared arm's change of the
background's mean FCT split flow by flow into RTO back-off and queueing
and the rest, which sum to it and agree with deltas_mean's change; and
`harness explain SWEEP [--point]` saying it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from harness import cli
from harness.analysis import cause_changes, stats
from harness.analysis.tables import Run


def _flows(fct, wait, timeouts, size_class="small"):
    n = len(fct)
    return pd.DataFrame({"id": np.arange(n), "measured": True, "completed": True,
                         "size_class": size_class, "fct_s": fct, "timeout_wait_s": wait,
                         "timeouts": timeouts, "spurious_timeouts": np.minimum(timeouts, 1),
                         "fast_retransmits": 0})


def test_the_parts_are_measured_and_sum_to_the_change():
    """Pure: per flow pair the FCT change is the wait's change plus the
    rest's; the means (and so the parts) add up exactly; the counts are each
    arm's own."""
    rng = np.random.default_rng(1)
    n = 40
    rest_ref, rest_arm = rng.uniform(1e-3, 2e-3, n), rng.uniform(1e-3, 2e-3, n)
    wait_arm = np.where(rng.uniform(size=n) < 0.3, 0.2, 0.0)    # a 200 ms RTO for some
    ref = Run(flows=_flows(rest_ref, np.zeros(n), np.zeros(n, int)))
    arm = Run(flows=_flows(rest_arm + wait_arm, wait_arm, (wait_arm > 0).astype(int)))
    rows = {r["size_class"]: r for r in cause_changes.fct_causes([ref], [arm])}
    small = rows["small"]
    assert small["pairs"] == n and rows["medium"]["pairs"] == 0
    assert small["fct_change_s"] == pytest.approx(small["rto_change_s"] + small["rest_change_s"])
    assert small["rto_change_s"] == pytest.approx(wait_arm.mean())
    assert small["rest_change_s"] == pytest.approx((rest_arm - rest_ref).mean())
    assert small["reference_timeouts"] == 0 and small["arm_timeouts"] == (wait_arm > 0).sum()
    # the wait is nearly all of a decided change: its share near 1, its interval around it
    assert small["fct_low_s"] > 0
    assert small["rto_share_low"] < small["rto_share"] < small["rto_share_high"]
    assert small["rto_share"] == pytest.approx(wait_arm.mean() / small["fct_change_s"])


def test_a_share_needs_a_decided_change():
    """A change whose interval contains 0 gets a share estimate but no
    interval: a share of a change not told from none says nothing."""
    rng = np.random.default_rng(2)
    whole = rng.normal(0, 1, 50)
    share = stats.share_of_difference(whole / 2, whole, 1, 10)
    assert np.isfinite(share.change) and np.isnan(share.low)
    decided = stats.share_of_difference(whole / 2 + 5 + rng.normal(0, 0.5, 50), whole + 10,
                                        1, 10)
    assert decided.low < decided.change < decided.high
    assert stats.mean_difference(np.array([1.0]), 1, 10).has_too_few


@pytest.fixture(scope="module")
def causes(local_sweep):
    return pd.read_parquet(local_sweep.out / "causes.parquet")


def test_a_sweep_s_causes_account_for_its_fct_change(local_sweep, causes):
    """From the real sweep: a row per point, compared arm and size class;
    its parts sum to its change, and its change relative to the
    reference's mean is deltas_mean's mean-FCT change (the same pairs)."""
    means = local_sweep.tables["deltas_mean"]
    points = means[["training.ratio", "background.load", "arm"]].drop_duplicates()
    assert len(causes) == len(points) * len(cause_changes.CAUSE_CLASSES)
    paired = causes[causes["pairs"] > 0]
    assert len(paired) >= len(points)   # every point measured small flows
    assert np.allclose(paired["fct_change_s"], paired["rto_change_s"] + paired["rest_change_s"])
    for r in paired.to_dict("records"):
        row = means[(means["metric"] == f"fct_{r['size_class']}_mean")
                    & (means["arm"] == r["arm"]) & (means["training.ratio"] == r["training.ratio"])
                    & (means["background.load"] == r["background.load"])]
        assert r["fct_change_s"] / r["reference_fct_s"] == pytest.approx(
            row["change"].iloc[0], rel=1e-9)
        assert r["reference"] == "same" and r["arm"] == "low"

    # the map's cause layer: the two parts, over the reference's mean, add up to it
    layer = cause_changes.cause_metrics(causes, ["training.ratio", "background.load"])
    assert set(layer["metric"]) == {f"fct_{c}_{p}" for c in cause_changes.CAUSE_CLASSES
                                    for p in cause_changes.CAUSE_PARTS}
    for r in paired.to_dict("records"):
        at = layer[(layer["training.ratio"] == r["training.ratio"])
                   & (layer["background.load"] == r["background.load"])]
        parts = at.set_index("metric")["change"]
        cls = r["size_class"]
        mean = means[(means["metric"] == f"fct_{cls}_mean")
                     & (means["training.ratio"] == r["training.ratio"])
                     & (means["background.load"] == r["background.load"])]["change"].iloc[0]
        assert parts[f"fct_{cls}_rto"] + parts[f"fct_{cls}_rest"] == pytest.approx(mean)


def test_training_s_change_is_split_into_computing_back_off_and_the_rest(local_sweep):
    """From the real sweep: per point and compared arm, the iteration
    time's change (deltas_mean's, the same time blocks) split into its
    parts, which add up to it; the cells' iterations carry the parts;
    explain and the map's cause layer say them."""
    training = pd.read_parquet(local_sweep.out / "training_causes.parquet")
    means = local_sweep.tables["deltas_mean"]
    changes = means[means["metric"] == "iteration_time"]
    assert len(training) == len(changes) > 0
    for r in training.to_dict("records"):
        row = changes[(changes["training.ratio"] == r["training.ratio"])
                      & (changes["background.load"] == r["background.load"])]
        assert r["change"] == pytest.approx(row["change"].iloc[0], rel=1e-9)
        assert r["compute_change"] + r["rto_change"] + r["rest_change"] == pytest.approx(
            r["change"], abs=1e-12)
        # the same profile in both arms: computing did not change
        assert r["compute_change"] == pytest.approx(0, abs=1e-6)
        assert r["reference_compute_s"] == pytest.approx(r["arm_compute_s"], rel=1e-6)
    cell = local_sweep.tables["summary"]["cell"].iloc[0]
    it = pd.read_parquet(local_sweep.out / "cells" / cell / "iterations.parquet")
    assert np.allclose(it["compute_s"] + it["network_wait_s"], it["iteration_s"])
    assert ((it["rto_wait_s"] >= 0) & (it["rto_wait_s"] <= it["network_wait_s"] + 1e-12)).all()
    said = CliRunner().invoke(cli.main, ["explain", str(local_sweep.out)])
    first = training.iloc[0]
    assert (f"of which computing {100 * first['compute_change']:+.1f} %"
            in said.stdout), said.stdout
    layer = cause_changes.iteration_cause_metrics(training, ["training.ratio",
                                                             "background.load"])
    assert set(layer["metric"]) == set(stats.ITERATION_PART_METRICS)


def test_explain_says_per_point_what_the_change_is_made_of(local_sweep, causes):
    r = CliRunner().invoke(cli.main, ["explain", str(local_sweep.out)])
    assert r.exit_code == 0, r.output
    heads = [line for line in r.stdout.splitlines() if not line.startswith(" ")]
    assert len(heads) == len(causes[["training.ratio", "background.load", "arm"]]
                             .drop_duplicates())
    assert all("low vs same" in h for h in heads)
    assert r.stdout.count("  training: ") == len(heads)
    small = causes[(causes["size_class"] == "small") & (causes["pairs"] > 0)]
    assert r.stdout.count("small flows, ") == len(small)
    first = small.iloc[0]
    assert f"{first['fct_change_s'] * 1e3:+,.3g} ms" in r.stdout

    one = CliRunner().invoke(cli.main, ["explain", str(local_sweep.out), "--point",
                                        "training.ratio=2", "--point", "background.load=0.1"])
    assert one.exit_code == 0, one.output
    assert [line for line in one.stdout.splitlines() if not line.startswith(" ")] == [
        "ratio = 2, load = 0.1, low vs same (1 seed pooled):"]


@pytest.mark.parametrize("argv, says", [
    (["--point", "training.ratio=3"], "training.ratio=3 is not a point of the sweep; its "
                                      "values: 1, 2"),
    (["--point", "speed=1"], "unknown axis 'speed'; the sweep's axes: training.ratio, "
                             "background.load"),
    (["--point", "ratio"], "'ratio' is not FIELD=VALUE"),
])
def test_explain_refuses_a_point_the_sweep_has_not(local_sweep, argv, says):
    r = CliRunner().invoke(cli.main, ["explain", str(local_sweep.out), *argv])
    assert r.exit_code == 2 and "--point" in r.stderr and says in r.stderr, r.output


def test_explain_names_a_sweep_without_causes(local_sweep, tmp_path):
    """A sweep whose tables predate the attribution: one line saying how to
    rewrite them, nothing written."""
    import shutil

    old = tmp_path / "old"
    shutil.copytree(local_sweep.out, old, ignore=shutil.ignore_patterns("cells", "logs"))
    (old / "causes.parquet").unlink()
    # training's attribution alone (a grid without background flows, say) is explained
    r = CliRunner().invoke(cli.main, ["explain", str(old)])
    assert r.exit_code == 0 and "of which computing" in r.stdout and " flows, " not in r.stdout
    for name in ("training_causes", "service_causes"):
        (old / f"{name}.parquet").unlink(missing_ok=True)
    before = sorted(p.name for p in old.iterdir())
    r = CliRunner().invoke(cli.main, ["explain", str(old)])
    assert r.exit_code == 2 and "has no causes.parquet" in r.stderr and "--resume" in r.stderr
    assert sorted(p.name for p in old.iterdir()) == before


CONGESTED = """
name = "congested"
scenario = "default"
timeout = "10min"
[set]
"run.duration" = 1
"network.band_limit_packets" = 20
[axes]
"background.load" = [0.6]
[arms]
reference = "same"
same = {{ "training.priority" = "same" }}
low = {{ "training.priority" = "low" }}
"""


def test_a_congested_sweep_s_timeouts_are_attributed(grid_file, tmp_path):
    """60 % load into 20-packet bands, training beside it: the RTO back-off
    the attribution gives each class is the cells' own flows tables' paired
    wait, and the timeouts each arm counted are theirs."""
    from harness.sweeps import sweeping
    from harness.sweeps.grid import load_grid

    model = grid_file.parent / "m1.csv"    # the tiny grid's small model
    training = (f'"training.enabled" = true\n"training.profile" = "{model}"\n'
                '"training.workers" = 4\n"training.ratio" = 2\n')
    grid = tmp_path / "congested.toml"
    grid.write_text(CONGESTED.format().replace("[axes]", training + "[axes]"))
    out = sweeping.run_sweep(load_grid(grid), tmp_path / "out", jobs=2, progress=False).out
    summary = pd.read_parquet(out / "summary.parquet")
    flows = {r.arm: pd.read_parquet(out / "cells" / r.cell / "flows.parquet")
             for r in summary.itertuples()}
    causes = pd.read_parquet(out / "causes.parquet").set_index("size_class")
    measured = {arm: f[f["measured"]] for arm, f in flows.items()}
    assert causes.loc["all", "reference_timeouts"] == measured["same"]["timeouts"].sum() > 20
    assert causes.loc["all", "arm_timeouts"] == measured["low"]["timeouts"].sum()
    done = {arm: f[f["completed"]].set_index("id") for arm, f in measured.items()}
    common = done["same"].index.intersection(done["low"].index)
    wait = (done["low"].loc[common, "timeout_wait_s"]
            - done["same"].loc[common, "timeout_wait_s"]).mean()
    assert causes.loc["all", "pairs"] == len(common)
    assert causes.loc["all", "rto_change_s"] == pytest.approx(wait)
    # training's own connections, counted in ns-3 on the job's ports
    jobs = summary.set_index("arm")
    assert (jobs["training_tcp_timeouts"] >= 0).all() and jobs["training_tcp_timeouts"].sum() > 0
    r = CliRunner().invoke(cli.main, ["explain", str(out)])
    assert r.exit_code == 0, r.output
    assert (f"Timeouts {causes.loc['all', 'reference_timeouts']:,} -> "
            f"{causes.loc['all', 'arm_timeouts']:,}") in r.stdout
    assert (f"training's connections: timeouts {int(jobs.loc['same', 'training_tcp_timeouts']):,}"
            f" -> {int(jobs.loc['low', 'training_tcp_timeouts']):,}") in r.stdout
    # the bands' starvation, each arm's, from the cells' queues tables
    starved = {arm: pd.read_parquet(out / "cells" / r.cell / "queues.parquet")
               .groupby("band")["starved_s"].sum() for arm, r in
               zip(summary["arm"], summary.itertuples())}
    low = max(starved["low"].index, key=lambda b: starved["low"][b])
    assert starved["low"][low] > 0
    assert jobs.loc["low", f"starved_s_band_{low}"] == pytest.approx(starved["low"][low])
    assert (f"band {low} {starved['same'].get(low, 0) * 1e3:,.1f} -> "
            f"{starved['low'][low] * 1e3:,.1f} ms") in r.stdout
    # the losses by place and reason, each arm's, from the cells' queues tables
    queues = {arm: pd.read_parquet(out / "cells" / r.cell / "queues.parquet") for arm, r in
              zip(summary["arm"], summary.itertuples())}
    lost = {arm: q[q["place"] == "uplink"].groupby("band")["dropped_packets"].sum()
            for arm, q in queues.items()}
    band = max(lost["low"].index, key=lambda b: lost["low"][b])
    assert lost["low"][band] > 0
    assert jobs.loc["low", f"dropped_band_{band}_uplink"] == lost["low"][band]
    assert (f"band {band} at the host uplinks {lost['same'].get(band, 0):,} -> "
            f"{lost['low'][band]:,}") in r.stdout
    assert all((q["buffer_dropped_packets"] + q["headroom_dropped_packets"]
                <= q["dropped_packets"]).all() for q in queues.values())
    # the cause layer as a map: `harness plot --metric`
    plot = CliRunner().invoke(cli.main, ["plot", str(out), "--metric", "fct_all_rto",
                                         "-o", str(tmp_path / "plots")])
    assert plot.exit_code == 0, plot.output
    assert (tmp_path / "plots" / "map-fct_all_rto.png").stat().st_size > 10_000


def test_an_idle_network_delays_no_training_connection(grid_file, tmp_path):
    """The job's connections at 1 % background load: counted, and nothing
    to count (no loss, so no timeout and no recovery)."""
    import harness

    run = harness.run(None, {"run.duration": 0.3, "run.warmup": 0.05, "run.cooldown": 0.05,
                             "background.load": 0.01, "training.enabled": True,
                             "training.profile": str(grid_file.parent / "m1.csv"),
                             "training.workers": 4, "training.ratio": 2},
                      out=tmp_path / "idle")
    delays = run.summary["training"]["tcp_delays"]
    assert delays == {"timeouts": 0, "timeout_wait_s": 0.0, "fast_retransmits": 0}
    assert run.summary["training"]["iterations"] > 0


def test_the_api_s_explain_is_the_command_s(local_sweep):
    import harness
    from harness.config.errors import ConfigError

    r = CliRunner().invoke(cli.main, ["explain", str(local_sweep.out), "--point",
                                      "training.ratio=1"])
    assert harness.explain(local_sweep.out, ["training.ratio=1"]) == r.stdout.splitlines()
    with pytest.raises(ConfigError, match="directory"):
        harness.explain(None)
