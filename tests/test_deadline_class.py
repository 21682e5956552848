"""The deadline-aware class of a ring job, on real ns-3 (4 workers on the
8-host 1 Gbit/s ToR, a 2 MB 20-layer model, no background): training in
`low`, a fused buffer moves to `high` when its slack (the compute until the
forward pass needs its lowest layer, minus its allreduce at line rate) runs
out while it waits for the ring or is being allreduced."""

from __future__ import annotations

import pytest

from conftest import small_plan
from harness.config.scenario import ConfigError

W, LINK_BPS = 4, 1e9


def ring_plan(model, *overrides):
    return small_plan("training.enabled=true", f'training.profile="{model}"',
                      f"training.workers={W}", 'topology.file="single-tor-1g"',
                      "background.enabled=false", 'training.priority="low"',
                      "training.ratio=1", "run.duration=0.4", "run.warmup=0.05",
                      "run.cooldown=0.01", *overrides)


def slack_ms(p, buffer) -> float:
    """Compute between the buffer's close and the forward pass needing its
    lowest layer, less its allreduce at line rate (the C++ job's rule)."""
    prof = p.job.profile
    low = buffer.priority
    until = sum(prof.fp_ms[i] + prof.bp_ms[i] for i in range(low))
    allreduce = 2 * (W - 1) / W * buffer.bytes * 8 / LINK_BPS * 1e3
    return until - allreduce


@pytest.fixture(scope="module")
def runs(make_profile):
    from harness.engine.simulation import execute
    model = make_profile(20, 2_000_000, 10.0, name="small-model")
    out = {}
    for name, extra in (("off", ()), ("on", ('training.deadline_class="high"',))):
        p = ring_plan(model, *extra)
        out[name] = (p, execute(p, progress=False, quiet=True))
    return out


def test_buffers_without_slack_travel_high_and_the_others_when_it_runs_out(runs):
    p, r = runs["on"]
    assert r.summary["training"]["socket_errors"] == ""
    assert p.job.deadline_tos >= 0
    t = r.transfers
    assert set(t["traffic_class"]) == {"high", "low"}
    by_buffer = {b.index: b for b in p.job.buffers}
    urgent = [i for i, b in by_buffer.items() if slack_ms(p, b) <= 0]
    assert urgent, "the plan has no buffer without slack: the test needs one"
    # no slack at all: raised when ready on every worker, every partition high
    assert set(t.loc[t["buffer"].isin(urgent), "traffic_class"]) == {"high"}

    # The others: ready on every worker when the last worker's backward of
    # the buffer's lowest layer ends; raised at ready + slack. A partition
    # handed to its socket before then travels low, after then high (1 us
    # apart from it: the C++ and Python sums round differently).
    c = r.compute[r.compute["phase"] == "bp"]
    ready = c.groupby(["iteration", "layer"])["end_ns"].max()
    before = after = 0
    for (iteration, buffer), rows in t.groupby(["iteration", "buffer"]):
        if buffer in urgent:
            continue
        raise_at = ready[(iteration, by_buffer[buffer].priority)] + \
            slack_ms(p, by_buffer[buffer]) * 1e6
        early = rows[rows["start_ns"] < raise_at - 1e3]
        late = rows[rows["start_ns"] > raise_at + 1e3]
        assert set(early["traffic_class"]) <= {"low"}, (iteration, buffer)
        assert set(late["traffic_class"]) <= {"high"}, (iteration, buffer)
        before += len(early)
        after += len(late)
    assert before and after, "the run raised nothing or everything: the test needs both"
    # the high band carried training on the wire (no background runs)
    q = r.queues
    assert q.loc[q["traffic_class"] == "high", "enqueued_packets"].sum() > 0


def test_without_the_class_everything_stays_low_and_bytes_are_the_same(runs):
    _, off = runs["off"]
    _, on = runs["on"]
    assert set(off.transfers["traffic_class"]) == {"low"}
    assert on.summary["training"]["socket_errors"] == ""

    # the class moves packets between bands, not bytes: every iteration both
    # runs completed carries the same bytes per worker
    def per_iteration(r):
        t = r.transfers
        whole = t.groupby("iteration")["end_ns"].min() >= 0
        t = t[t["iteration"].isin(whole[whole].index)]
        return t.groupby(["iteration", "worker"])["bytes"].sum()

    a, b = per_iteration(off), per_iteration(on)
    common = a.index.intersection(b.index)
    assert len(common) >= 2 * W
    assert (a[common] == b[common]).all()
    assert a[common].nunique() == 1


def test_a_sharded_job_refuses_the_class(small_model):
    with pytest.raises(ConfigError) as err:
        small_plan("training.enabled=true", 'training.architecture="sharded"',
                   f'training.profile="{small_model}"', 'training.deadline_class="high"')
    assert err.value.field == "training.deadline_class"


def test_an_unknown_class_is_refused_for_a_ring(small_model):
    with pytest.raises(ConfigError) as err:
        ring_plan(small_model, 'training.deadline_class="urgent"')
    assert err.value.field == "training.deadline_class"
