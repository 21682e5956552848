"""TicTac, its random-order baseline, the pull barrier (TensorFlow's
synchronous PS) and the straggler metric (spread of worker iteration end
times), on real ns-3: 4 workers and one shard on the 8-host 1 Gbit/s ToR,
a 1 MB 20-layer model, no background."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import small_plan
from harness.analysis import metrics
from harness.traffic import profiles
from harness.training import ps

W = 4


@pytest.fixture(scope="module")
def model(make_profile):
    return make_profile(layers=20)


def order_plan(model, policy: str, *overrides: str):
    return small_plan("training.enabled=true", 'training.architecture="ps"',
                      f'training.profile="{model}"', f"training.workers={W}",
                      'topology.file="single-tor-1g"', "network.band_limit_packets=100",
                      "background.enabled=false", "training.ratio=2",
                      "training.pull_barrier=true", f'training.policy="{policy}"',
                      "run.duration=0.7", "run.warmup=0.1", "run.cooldown=0.01", *overrides)


RUNS = {"fifo": (), "random": (), "tictac": (),
        "tictac-serial": ("training.scheduler.one_at_a_time=true",)}


@pytest.fixture(scope="module")
def runs(model):
    from harness.engine.simulation import execute

    out = {}
    for name, extra in RUNS.items():
        r = execute(order_plan(model, name.split("-")[0], *extra), progress=False, quiet=True)
        assert r.summary["training"]["socket_errors"] == ""
        assert r.summary["training"]["iterations"] >= 3 * W
        out[name] = r
    return out


def pull_orders(r) -> dict[tuple[int, int], list[int]]:
    """(worker, iteration) -> tensors in the order their pulls were committed
    (the transfers table lists chunks in commit order)."""
    t = r.transfers[r.transfers["direction"] == "pull"]
    return {key: list(dict.fromkeys(g["buffer"])) for key, g in
            t.groupby(["worker", "iteration"], sort=True)}


def complete(r) -> list[int]:
    done = r.iterations.groupby("iteration")["worker"].nunique()
    return sorted(done[done == W].index)


def test_pull_barrier_holds_every_pull_until_the_last_push_of_the_iteration(runs):
    for name, r in runs.items():
        t = r.transfers
        for it in complete(r)[1:]:
            rows = t[t["iteration"] == it]
            last_push = rows.loc[rows["direction"] == "push", "end_ns"].max()
            first_pull = rows.loc[rows["direction"] == "pull", "start_ns"].min()
            assert first_pull >= last_push, (name, it)


def test_tictac_pulls_front_layers_first_and_random_draws_an_order_per_worker(runs):
    layers = list(range(20))
    for key, order in pull_orders(runs["tictac"]).items():
        if len(order) == len(layers):
            assert order == layers, key
    random = {k: o for k, o in pull_orders(runs["random"]).items() if len(o) == len(layers)}
    assert all(sorted(o) == layers for o in random.values())
    orders = [tuple(o) for o in random.values()]
    assert len(set(orders)) == len(orders)  # every worker and iteration its own order
    fifo = {k: o for k, o in pull_orders(runs["fifo"]).items() if len(o) == len(layers)}
    assert all(o == layers[::-1] for o in fifo.values())  # the order pushes ended in


def test_tictac_pipelines_its_order_and_one_at_a_time_serialises_it(runs):
    def overlaps(r) -> int:
        t = r.transfers[(r.transfers["direction"] == "pull") & (r.transfers["end_ns"] >= 0)]
        n = 0
        for _, g in t.groupby(["worker", "iteration"]):
            g = g.sort_values("start_ns")
            n += int((g["start_ns"].to_numpy()[1:] < g["end_ns"].to_numpy()[:-1]).sum())
        return n

    assert overlaps(runs["tictac"]) > 0
    assert overlaps(runs["tictac-serial"]) == 0
    # serialising costs time: the next transfer waits for the previous to arrive
    mean = {k: r.summary["training"]["mean_iteration_s"] for k, r in runs.items()}
    assert mean["tictac"] < mean["tictac-serial"]


def test_under_the_pull_barrier_tictac_is_faster_and_has_fewer_stragglers(runs):
    """TicTac's claim in its regime: the forward pass starts as soon as layer
    0 arrives, and every worker gets the same order."""
    mean = {k: r.summary["training"]["mean_iteration_s"] for k, r in runs.items()}
    assert mean["tictac"] < 0.95 * mean["fifo"]
    assert mean["tictac"] < mean["random"]
    spread = {k: r.summary["training"]["mean_end_spread_s"] for k, r in runs.items()}
    assert spread["tictac"] < spread["random"]
    # the per-iteration spread is on every worker's row of the iterations table
    it = runs["random"].iterations
    per = metrics.end_spread(it).set_index("iteration")["end_spread_s"]
    assert np.allclose(it["end_spread_s"].dropna(), it["iteration"].map(per).dropna())


def test_random_order_is_reproducible(model):
    from harness.engine.simulation import execute

    a, b = (execute(order_plan(model, "random", "run.duration=0.25"), progress=False,
                    quiet=True) for _ in range(2))
    assert a.transfers.equals(b.transfers)
    c = execute(order_plan(model, "random", "run.duration=0.25", "seed=2"), progress=False,
                quiet=True)
    assert pull_orders(c) != pull_orders(a)


def test_end_spread_covers_iterations_every_worker_completed():
    it = pd.DataFrame({"worker": [0, 1, 2, 0, 1, 2, 0, 1],
                       "iteration": [0, 0, 0, 1, 1, 1, 2, 2],
                       "end_ns": [100, 130, 110, 300, 300, 360, 500, 520],
                       "measured": [False, False, False, True, True, True, True, True]})
    s = metrics.end_spread(it)
    assert list(s["iteration"]) == [0, 1]          # iteration 2: worker 2 missing
    assert list(s["end_spread_s"] * 1e9) == pytest.approx([30, 60])
    assert list(s["measured"]) == [False, True]
    assert metrics.spread_summary(it)["mean_end_spread_s"] == pytest.approx(60e-9)
    assert metrics.with_end_spread(it)["end_spread_s"].isna().sum() == 2


def test_analytic_pull_barrier_front_order_beats_the_aggregation_order(model):
    profile = profiles.load_profile(model)
    shards = ps.assign_shards(profile.layer_bytes, 1)
    args = dict(profile=profile, n_workers=W, link_bps=1e9, tensor_shards=shards, iterations=5)
    free = ps.simulate_ps(**args).iteration_ms[1:].mean()
    fifo = ps.simulate_ps(pull_barrier=True, **args).iteration_ms[1:].mean()
    front = ps.simulate_ps(pull_barrier=True, pull_order="front", **args)
    assert fifo > free                      # pulls no longer overlap pushes
    assert front.iteration_ms[1:].mean() < fifo
    with pytest.raises(ValueError, match="pull_order"):
        ps.simulate_ps(pull_order="random", **args)
