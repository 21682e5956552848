"""What training's iterations are made of (issue 62 deliverables 1 and 2 in
part): each worker's iteration split into computing and waiting on the
network, the wait's part in TCP back-off (metrics.with_iteration_parts,
from the compute table and the job's connections' back-off spans counted
in ns-3), the sweep's paired split of the iteration time's change
(cause_changes.iteration_causes), and where packets were lost
(metrics.losses)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness.analysis import cause_changes, metrics, run_changes, stats
from harness.analysis.tables import Run

MS = 1_000_000   # ns


def _iterations(rows):
    """(worker, iteration, start_ms, end_ms) rows as an iterations table."""
    t = pd.DataFrame(rows, columns=["worker", "iteration", "start_ns", "end_ns"])
    t[["start_ns", "end_ns"]] *= MS
    return t.assign(iteration_s=(t["end_ns"] - t["start_ns"]) / 1e9, measured=True)


def _compute(rows):
    t = pd.DataFrame(rows, columns=["worker", "iteration", "start_ns", "end_ns"])
    t[["start_ns", "end_ns"]] *= MS
    return t.assign(layer=0, phase="fp")


def test_an_iteration_is_its_compute_and_its_wait_and_the_back_off_only_while_waiting():
    """Worker 0 computes 0-4 and 6-8 ms of a 0-10 ms iteration; a back-off
    of one connection spans 3-7 ms and another's 6.5-9 ms (overlapping
    spans count once): of its 4 ms wait (4-6, 8-10 ms) 2 ms were in
    back-off (4-6), 1 ms more (8-9). Worker 1's iteration has no compute
    row: all wait."""
    iterations = _iterations([(0, 0, 0, 10), (1, 0, 0, 10)])
    compute = _compute([(0, 0, 0, 4), (0, 0, 6, 8)])
    spans = metrics.backoff_spans(f"{3 * MS},{7 * MS}\n{int(6.5 * MS)},{9 * MS}\n")
    out = metrics.with_iteration_parts(iterations, compute, spans).set_index("worker")
    assert out.loc[0, "compute_s"] == pytest.approx(6e-3)
    assert out.loc[0, "network_wait_s"] == pytest.approx(4e-3)
    assert out.loc[0, "rto_wait_s"] == pytest.approx(3e-3)
    assert out.loc[1, "compute_s"] == 0 and out.loc[1, "network_wait_s"] == pytest.approx(10e-3)
    assert out.loc[1, "rto_wait_s"] == pytest.approx(6e-3)    # 3-9 ms, the spans' union
    # no back-off spans measured (a job over RDMA): the part is unknown, not 0
    assert out.pipe(lambda _: metrics.with_iteration_parts(iterations, compute, None))[
        "rto_wait_s"].isna().all()
    # no timeouts at all: none of the wait was in back-off
    none = metrics.with_iteration_parts(iterations, compute, metrics.backoff_spans(""))
    assert (none["rto_wait_s"] == 0).all()


def _units(rng, n, compute_ms, rest_ms, rto_ms, offset=0):
    """A run's iterations, one worker: n of compute + rest + rto ms each."""
    start, rows, parts = 0.0, [], []
    for k in range(n):
        rto = rto_ms if rng.uniform() < 0.3 else 0.0
        length = compute_ms + rest_ms * rng.uniform(0.8, 1.2) + rto
        rows.append((0, k, start, start + length))
        parts.append((compute_ms / 1e3, (length - compute_ms) / 1e3, rto / 1e3))
        start += length
    it = _iterations(rows)
    it[["compute_s", "network_wait_s", "rto_wait_s"]] = parts
    return Run(iterations=it)


def test_the_iteration_s_parts_add_up_to_its_change_with_intervals():
    """Pure: per time block the parts are summed as the iteration time is;
    their changes over the reference's mean add up to block_ratio_change's
    change exactly, each has its interval, and the back-off's share is
    given where the change is decided."""
    rng = np.random.default_rng(3)
    ref = [_units(rng, 60, 10, 4, 0.0)]
    arm = [_units(rng, 50, 10, 5, 20.0)]
    row = cause_changes.iteration_causes(ref, arm)
    whole = run_changes.iteration_change(ref, arm)
    assert row["change"] == pytest.approx(whole.change)
    assert (row["compute_change"] + row["rto_change"] + row["rest_change"]
            == pytest.approx(row["change"]))
    assert row["compute_change"] == pytest.approx(0, abs=1e-12)
    assert row["rto_low"] < row["rto_change"] < row["rto_high"] and row["rto_low"] > 0
    assert row["rto_share_low"] < row["rto_share"] < row["rto_share_high"]
    assert row["rto_share"] == pytest.approx(row["rto_change"] / row["change"])
    assert row["reference_rto_wait_s"] == 0 and row["arm_rto_wait_s"] > 0
    line = cause_changes.iteration_cause_line(row)
    assert f"in TCP back-off {100 * row['rto_change']:+.1f} %" in line
    # runs without the parts (before they were measured): no row, not a wrong one
    old = [Run(iterations=r.iterations.drop(columns=["rto_wait_s"])) for r in ref]
    assert cause_changes.iteration_causes(old, arm) is None


def test_a_part_s_share_needs_blocks_and_a_decided_change():
    one = np.ones(3)
    few = stats.block_part_share(one, one * 2, one * 5, one * 6, one, one, 1)
    assert np.isfinite(few.change) and np.isnan(few.low)
    assert stats.block_part_change(one, one * 2, one * 5, one, one, 1).has_too_few


def test_losses_are_placed_and_split_by_reason():
    """Drops at a host's uplink and a switch's port to a host, by reason:
    the shared buffer's refusals, the PFC headroom's, the band's limit
    (the rest)."""
    queues = pd.DataFrame({
        "link": [0, 0, 5, 7, 1], "from_node": [0, 4, 4, 5, 1], "to_node": [4, 0, 5, 4, 4],
        "band": [1, 1, 2, 2, 2], "traffic_class": ["bg", "bg", "training", "training", "t"],
        "dropped_packets": [10, 7, 0, 3, 0], "buffer_dropped_packets": [4, 7, 0, 0, 0],
        "headroom_dropped_packets": [0, 0, 0, 1, 0], "enqueued_packets": [90, 50, 40, 60, 5]})
    table = metrics.losses(metrics.with_places(queues, n_hosts=4)).set_index(["place", "band"])
    # every place and band that carried packets, 0 where none was lost
    assert list(table.index) == [("uplink", 1), ("uplink", 2), ("downlink", 1), ("fabric", 2)]
    assert table.loc[("uplink", 2), "dropped_packets"] == 0
    assert table.loc[("uplink", 2), "egresses"] == 0
    up = table.loc[("uplink", 1)]
    assert (up["buffer_dropped_packets"], up["limit_dropped_packets"]) == (4, 6)
    fabric = table.loc[("fabric", 2)]
    assert (fabric["headroom_dropped_packets"], fabric["limit_dropped_packets"]) == (1, 2)
    assert fabric["link"] == 7 and fabric["egresses"] == 1
    assert metrics.losses(queues).empty      # a table without places (an old run)


@pytest.mark.parametrize("architecture", ["ring", "ps"])
def test_alone_an_iteration_computes_the_profile_and_waits_without_back_off(
        small_model, run_plan, tmp_path, architecture):
    """The real simulator, no background: every measured iteration's
    compute time is the profile's (rescaled to R), its wait the rest of
    it, none of it in back-off; `harness explain RUN` says so."""
    from click.testing import CliRunner

    from harness import cli
    from harness.config.scenario import load_scenario
    from harness.engine.planning import plan

    p = plan(load_scenario(None, [
        "background.enabled=false", "training.enabled=true", f'training.profile="{small_model}"',
        "training.workers=3", "training.ratio=1", f'training.architecture="{architecture}"',
        "run.duration=0.3", "run.warmup=0.05", "run.cooldown=0.05"]))
    r = run_plan(p)
    measured = r.iterations[r.iterations["measured"]]
    assert len(measured) >= 4
    expected = p.all_jobs[0].profile.compute_ms / 1e3
    assert np.allclose(measured["compute_s"], expected, rtol=1e-6, atol=2e-9 * 40)
    assert np.allclose(measured["compute_s"] + measured["network_wait_s"],
                       measured["iteration_s"])
    assert (measured["network_wait_s"] > 0).all()     # R = 1: it waits on the network
    assert (measured["rto_wait_s"] == 0).all()
    training = r.summary["training"]
    assert training["mean_compute_s"] == pytest.approx(expected, rel=1e-6)
    out = tmp_path / "run"
    r.save(out)
    said = CliRunner().invoke(cli.main, ["explain", str(out)])
    assert said.exit_code == 0, said.output
    assert (f"computing {expected * 1e3:,.3g} ms ({100 * expected / training['mean_iteration_s']:.0f}"
            " %)") in said.stdout
    assert "its slowest transfer of " in said.stdout
