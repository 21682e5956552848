"""Parameter-server jobs and communication-scheduling policies, on real ns-3
(4 workers and one shard on the 8-host 1 Gbit/s ToR, a 2 MB 20-layer model)."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import small_plan
from harness.traffic import profiles, schedulers
from harness.training import ps
from harness.config.scenario import ConfigError, parse_bytes

W, LINK_BPS = 4, 1e9


def ps_plan(model, *overrides):
    return small_plan("training.enabled=true", 'training.architecture="ps"',
                      f'training.profile="{model}"', f"training.workers={W}",
                      'topology.file="single-tor-1g"', "background.enabled=false", *overrides)


def complete_iterations(r) -> list[int]:
    """Iterations every worker finished and whose pulls all arrived. (A
    worker's row for iteration k says iteration k + 1 started, which needs
    only layer 0's pull: a later layer's pull of k may still be in flight.)"""
    it = r.iterations
    done = it.groupby("iteration")["worker"].nunique()
    pulls = r.transfers[r.transfers["direction"] == "pull"]
    arrived = (pulls["end_ns"] >= 0).groupby(pulls["iteration"]).all()
    return sorted(k for k in done[done == W].index if arrived.get(k, False))


def bytes_per(transfers: pd.DataFrame, direction: str) -> pd.Series:
    t = transfers[transfers["direction"] == direction]
    return t.groupby(["iteration", "worker", "buffer"])["bytes"].sum()


# ---------------------------------------------------------------- no contention


def test_compute_bound_job_matches_the_analytic_model_and_moves_exact_bytes(small_model,
                                                                            run_plan):
    p = ps_plan(small_model, "training.ratio=4", "run.duration=1.5", "run.warmup=0.3",
                "run.cooldown=0.01")
    assert p.job.server_hosts == (W,)  # the first host without a worker
    r = run_plan(p)
    got = r.summary["training"]
    assert got["socket_errors"] == ""
    expected = ps.simulate_ps(p.job.profile, W, LINK_BPS, p.job.tensor_shards, iterations=6)
    assert got["mean_iteration_s"] * 1e3 == pytest.approx(expected.iteration_ms[1:].mean(),
                                                          rel=0.02)

    # every worker pushed every tensor and pulled every tensor's parameters,
    # byte for byte, in every iteration it completed
    done = complete_iterations(r)
    assert len(done) >= 3
    t = r.transfers[r.transfers["iteration"].isin(done)]
    assert (t["end_ns"] >= t["start_ns"]).all()
    sizes = pd.Series(p.job.profile.layer_bytes)
    for direction in ("push", "pull"):
        per = bytes_per(t, direction)
        assert len(per) == len(done) * W * p.job.profile.n_layers
        assert (per.to_numpy() == sizes[per.index.get_level_values("buffer")].to_numpy()).all()
    assert set(r.utilization["app"]) == {"training"}


def test_incast_waits_in_the_shard_downlink_queue(small_model, run_plan):
    """K = 1, W = 4: the ToR's egress towards the shard is where packets wait."""
    p = ps_plan(small_model, "training.ratio=1", "run.duration=0.3", "run.warmup=0.05",
                "run.cooldown=0.01")
    r = run_plan(p)
    q = r.queues
    shard = p.job.server_hosts[0]
    switch = p.topology.n_hosts  # the single ToR follows the hosts
    downlink = q[(q["from_node"] == switch) & (q["to_node"] == shard)]
    band = p.classes.band(p.classes.class_of_tos()[p.job.tos], "")
    busiest = downlink.sort_values("max_backlog_packets").iloc[-1]
    assert busiest["max_backlog_packets"] == q["max_backlog_packets"].max()
    assert busiest["max_backlog_packets"] > 50
    assert busiest["band"] == band
    # the shard's uplink (pulls fan out) queues at the shard host, not at the ToR
    others = q[(q["from_node"] == switch) & (q["to_node"] != shard)]
    assert others["max_backlog_packets"].max() < busiest["max_backlog_packets"]


def test_analytic_ps_model_is_bound_by_the_shard_link(small_model):
    profile = profiles.load_profile(small_model)
    shards = ps.assign_shards(profile.layer_bytes, 1)
    fast = dict(profile=profile, n_workers=W, tensor_shards=shards, iterations=4)
    r = ps.simulate_ps(link_bps=LINK_BPS, **fast)
    shard_ms = W * profile.model_bytes * 8 / LINK_BPS * 1e3
    assert r.iteration_ms[1:].min() >= shard_ms
    # co-located: the local worker's share skips the network
    local = ps.simulate_ps(link_bps=LINK_BPS, colocated=(True,), **fast)
    assert local.iteration_ms[1:].mean() < r.iteration_ms[1:].mean()
    # per-chunk aggregation lets pulls overlap pushes
    chunked = ps.simulate_ps(link_bps=LINK_BPS, aggregation_bytes=30_000, **fast)
    assert chunked.iteration_ms[1:].mean() < r.iteration_ms[1:].mean()


# ---------------------------------------------------------------- policies


POLICY_RUNS = {
    "fifo": ['training.policy="fifo"'],
    "priority": ['training.policy="priority"'],
    "bytescheduler": ['training.policy="bytescheduler"'],
    "mercury": ['training.policy="mercury"'],
    "bytescheduler-huge-credit": ['training.policy="bytescheduler"',
                                  'training.scheduler.credit="100MB"'],
}


@pytest.fixture(scope="module")
def network_bound(small_model):
    """Mean iteration time (s) per policy, network-bound (R = 1)."""
    from harness.engine.simulation import execute

    out = {}
    for name, overrides in POLICY_RUNS.items():
        p = ps_plan(small_model, "training.ratio=1", "run.duration=0.8", "run.warmup=0.2",
                    "run.cooldown=0.01", *overrides)
        r = execute(p, progress=False, quiet=True)
        assert r.summary["training"]["socket_errors"] == ""
        out[name] = r.summary["training"]["mean_iteration_s"]
    return out


@pytest.mark.parametrize("policy", ["priority", "bytescheduler", "mercury"])
def test_scheduling_policies_beat_fifo_when_network_bound(network_bound, policy):
    assert network_bound[policy] < 0.95 * network_bound["fifo"]


def test_bytescheduler_with_a_credit_above_the_model_is_fifo(network_bound):
    assert network_bound["bytescheduler-huge-credit"] == pytest.approx(network_bound["fifo"],
                                                                       rel=0.01)


def test_colocated_shards_and_deadline_class(small_model, run_plan):
    """K = 2 shards on workers 0 and 1: their own pushes and pulls are local
    copies; training in low with the deadline-aware class high: transfers
    whose slack ran out travel high; per-chunk aggregation overlaps pulls
    with pushes."""
    p = ps_plan(small_model, "training.ratio=1", "training.servers=2",
                'training.server_placement="colocated"', 'training.priority="low"',
                'training.deadline_class="high"', 'training.policy="mercury"',
                "run.duration=0.3", "run.warmup=0.05", "run.cooldown=0.01")
    assert p.job.server_hosts == (0, 1)
    assert set(p.job.tensor_shards) == {0, 1}
    r = run_plan(p)
    assert r.summary["training"]["socket_errors"] == ""
    t = r.transfers
    local = t[t["local"] == 1]
    assert set(zip(local["worker"], local["shard"])) == {(0, 0), (1, 1)}
    assert (local.loc[local["end_ns"] >= 0, "end_ns"] == local.loc[local["end_ns"] >= 0,
                                                                    "start_ns"]).all()
    assert set(t["traffic_class"]) == {"high", "low"}
    # mercury aggregates per chunk: a tensor's pull starts before its push ends
    push_end = t[t["direction"] == "push"].groupby(["iteration", "buffer"])["end_ns"].max()
    pull_start = t[t["direction"] == "pull"].groupby(["iteration", "buffer"])["start_ns"].min()
    spans = pd.concat([push_end, pull_start], axis=1, keys=["push_end", "pull_start"]).dropna()
    assert (spans["pull_start"] < spans["push_end"]).any()
    done = complete_iterations(r)
    assert done
    per = bytes_per(t[t["iteration"].isin(done)], "pull")
    assert per.sum() == len(done) * W * p.job.profile.model_bytes


def test_autobyte_explores_its_candidates_and_layer_classes_pick_bands(small_model, run_plan):
    p = ps_plan(small_model, "training.ratio=1", 'training.policy="autobyte"',
                "training.scheduler.interval=2",
                'training.scheduler.candidates=[[100000, 100000], [400000, 800000]]',
                'training.priority="low"', 'training.layer_classes.high="0-4"',
                "run.duration=0.5", "run.warmup=0.05", "run.cooldown=0.01")
    r = run_plan(p)
    states = list(r.scheduler["state"])
    assert states[0] == "partition=100000;credit=100000"
    assert "partition=400000;credit=800000" in states
    # tensors 0-4 travel high (both ways), the rest low
    t = r.transfers
    assert set(t.loc[t["buffer"] <= 4, "traffic_class"]) == {"high"}
    assert set(t.loc[t["buffer"] > 4, "traffic_class"]) == {"low"}
    q = r.queues
    assert q.loc[q["traffic_class"] == "high", "enqueued_packets"].sum() > 0


# ---------------------------------------------------------------- checks before running


@pytest.mark.parametrize("overrides, field", [
    (['training.policy="bytescheduler"', "training.scheduler.partition=0"],
     "training.scheduler.partition"),
    (['training.policy="bytescheduler"', "training.scheduler.partition=200000",
      "training.scheduler.credit=100000"], "training.scheduler.credit"),
    (['training.policy="mercury"', 'training.scheduler.chunk="0KB"'], "training.scheduler.chunk"),
    (['training.policy="mercury"', "training.scheduler.credit=1000"],
     "training.scheduler.credit"),
    (['training.policy="autobyte"', "training.scheduler.candidates=[[1000, 10]]"],
     "training.scheduler.candidates[0]"),
    (['training.policy="p3"', "training.scheduler.credit=1"], "training.scheduler.credit"),
    (['training.policy="bytescheduler"', 'training.scheduler.partition="lots"'],
     "training.scheduler.partition"),
    (['training.policy="lifo"'], "training.policy"),
    (["training.servers=5"], "training.servers"),
    (["training.servers=5", 'training.server_placement="colocated"'], "training.servers"),
    (['training.deadline_class="urgent"'], "training.deadline_class"),
    (["training.fusion_buffer=1000000"], "training.fusion_buffer"),
])
def test_invalid_ps_settings_name_the_field(small_model, overrides, field):
    with pytest.raises(ConfigError) as err:
        ps_plan(small_model, *overrides)
    assert err.value.field == field


def test_more_shards_than_tensors_is_an_error(make_profile):
    tiny = make_profile(layers=4, model_bytes=100_000, compute_ms=1.0)
    with pytest.raises(ConfigError) as err:
        ps_plan(tiny, "training.workers=2", "training.servers=5")
    assert err.value.field == "training.servers"


def test_ring_jobs_refuse_ps_only_policies_and_settings():
    for overrides, field in ((['training.policy="mercury"'], "training.policy"),
                             (["training.servers=2"], "training.servers")):
        with pytest.raises(ConfigError) as err:
            small_plan("training.enabled=true", *overrides)
        assert err.value.field == field
        assert "ps" in str(err.value)


def test_shards_are_balanced_by_size():
    sizes = (100, 90, 10, 10, 10, 50, 40, 5)
    shards = ps.assign_shards(sizes, 3)
    load = [sum(s for s, k in zip(sizes, shards) if k == shard) for shard in range(3)]
    assert max(load) - min(load) <= max(sizes)
    assert ps.assign_shards(sizes, 1) == (0,) * len(sizes)


def test_policy_table_is_complete():
    for name, pol in schedulers.POLICIES.items():
        values = schedulers.resolve(name, {})
        for side in ("push", "pull"):
            type_id, attrs = schedulers.attributes(name, values, side, LINK_BPS)
            assert type_id.startswith("ns3::") and type_id.endswith("Scheduler")
            assert all("=" in a for a in attrs)
    assert set(schedulers.RING_POLICIES) == {"fifo", "priority", "bytescheduler", "p3"}
    assert parse_bytes("160KB", "x") == 160_000 and parse_bytes("1MiB", "x") == 2**20


def test_same_seed_same_transfers(small_model, run_plan):
    p = ps_plan(small_model, "training.ratio=1", 'training.policy="prophet"',
                "background.enabled=true", "background.load=0.2",
                "run.duration=0.12", "run.warmup=0.02", "run.cooldown=0.01")
    a, b = run_plan(p), run_plan(p)
    pd.testing.assert_frame_equal(a.transfers, b.transfers)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    assert len(a.transfers) > 0 and len(a.flows) > 0
