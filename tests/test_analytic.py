"""Tests for the ring's no-contention model, harness.training.ring.simulate, and
the ring-allreduce time it is built on (pure logic, no ns-3).

Expected numbers are derived by hand in the comments, not copied from the code.
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.training.common import AnalyticResult, allreduce_ms
from harness.training.ring import simulate
from harness.traffic.fusion import fuse
from harness.traffic.profiles import Profile, compute_ms_for_ratio, resnet50_like

M = 100_000_000
GBPS10 = 10e9
# link of 8 Mbit/s: 1000 bytes take exactly 1 ms
LINK_1KB_PER_MS = 8e6


def _ideal_ms(size, n, link):
    return 2 * (1 - 1 / n) * size * 8 / link * 1e3


# ------------------------------------------------------------------ allreduce time


def test_allreduce_time_ideal_when_divisible():
    assert allreduce_ms(M, 8, GBPS10) == pytest.approx(140.0)
    assert allreduce_ms(8000, 8, LINK_1KB_PER_MS) == pytest.approx(_ideal_ms(8000, 8, LINK_1KB_PER_MS))


def test_allreduce_time_partitions_and_overheads():
    # 1001 bytes over 2 workers: partitions 501 and 500; 2 steps of 501 B at 1 B/us
    assert allreduce_ms(1001, 2, LINK_1KB_PER_MS) == pytest.approx(2 * 0.501)
    # payload efficiency 0.5 doubles the transfer part; step latency adds 2(N-1) times
    assert allreduce_ms(1000, 2, LINK_1KB_PER_MS, payload_efficiency=0.5) == pytest.approx(2.0)
    assert allreduce_ms(1000, 4, LINK_1KB_PER_MS, step_latency_s=1e-3) == pytest.approx(
        6 * (0.25 + 1.0)
    )


# ------------------------------------------------------------------ hand-computed jobs


def test_compute_bound_two_layers_by_hand():
    # P = (1000, 1000) B, fusion buffer 1001 -> two buffers; N = 2, 1 B/us:
    # each allreduce = 2 steps * 500 B = 1 ms.  F = (10, 10), B = (20, 20) ms.
    # iter 0: fp0 0-10, fp1 10-20, bp1 20-40 -> AR(L1) 40-41, bp0 40-60 -> AR(L0) 60-61.
    # iter 1 starts at max(60, sync L0 = 61) = 61; fp1 at max(71, 41) = 71 -> no wait.
    # So every iteration = compute (60) + last buffer's allreduce (1) = 61 ms.
    p = Profile("two", (1000, 1000), (10.0, 10.0), (20.0, 20.0))
    for queue in ("fifo", "priority"):
        for barrier in (False, True):
            r = simulate(p, 2, LINK_1KB_PER_MS, iterations=5, queue=queue, barrier=barrier)
            expected = p.compute_ms + _ideal_ms(1000, 2, LINK_1KB_PER_MS)
            assert expected == pytest.approx(61.0)
            np.testing.assert_allclose(r.iteration_ms, expected)


def test_network_bound_two_layers_by_hand():
    # P = (1000, 10000): AR(L1) = 10 ms, AR(L0) = 1 ms (N=2, 1 B/us). F = B = (1, 1).
    # iter 0: fp 0-2, bp1 2-3 -> AR(L1) 3-13; bp0 3-4 -> AR(L0) 13-14.
    # iter 1: fp0 starts 14; fp1 at max(15, 13) = 15; bp1 16-17 -> AR 17-27; AR(L0) 27-28.
    # -> iteration time 14 ms, every iteration.
    p = Profile("nb", (1000, 10000), (1.0, 1.0), (1.0, 1.0))
    r = simulate(p, 2, LINK_1KB_PER_MS, iterations=4)
    np.testing.assert_allclose(r.iteration_ms, [14.0] * 4)
    tl = r.timeline
    it1 = tl[tl.iteration == 1]
    assert it1.start_ms.tolist() == pytest.approx([17.0, 27.0])
    assert it1.end_ms.tolist() == pytest.approx([27.0, 28.0])
    assert it1.ready_ms.tolist() == pytest.approx([17.0, 18.0])


def test_three_layers_priority_vs_fifo_by_hand():
    # P = 10000 B each, fusion buffer 10001 -> three buffers, AR = 10 ms each (N=2).
    # F = B = 1 ms each.  iter 0: fp 0-3; bp2 3-4 (AR L2 4-14), bp1 -> ready 5,
    # bp0 -> ready 6.
    # fifo: L1 14-24, L0 24-34 -> iter 1 at 34; iter 1: fp 34-37 (no waits),
    #   AR L2 38-48, L1 48-58, L0 58-68 -> iter 2 at 68: 34 ms per iteration.
    # priority: at 14 picks L0 14-24, then L1 24-34 -> iter 1 at 24;
    #   fp0 24-25, fp1 waits for L1 until 34, 34-35, fp2 35-36, bp2 36-37 -> AR 37-47,
    #   bp1 -> 38, bp0 -> 39; at 47 L0 47-57, L1 57-67 -> iter 2 at 57 (33 ms);
    #   iter 2: fp0 57-58, fp1 67-68, fp2 68-69, bp 69-72, AR L2 70-80, L0 80-90
    #   -> iter 3 at 90 (33 ms), and so on.
    # priority + barrier: iter k+1 waits for everything, like fifo -> 34 ms.
    p = Profile("three", (10000,) * 3, (1.0,) * 3, (1.0,) * 3)
    fifo = simulate(p, 2, LINK_1KB_PER_MS, iterations=4, queue="fifo")
    prio = simulate(p, 2, LINK_1KB_PER_MS, iterations=4, queue="priority")
    prio_b = simulate(p, 2, LINK_1KB_PER_MS, iterations=4, queue="priority", barrier=True)
    fifo_b = simulate(p, 2, LINK_1KB_PER_MS, iterations=4, queue="fifo", barrier=True)
    np.testing.assert_allclose(fifo.iteration_ms, [34.0] * 4)
    np.testing.assert_allclose(prio.iteration_ms, [24.0, 33.0, 33.0, 33.0])
    np.testing.assert_allclose(prio_b.iteration_ms, [34.0] * 4)
    np.testing.assert_allclose(fifo_b.iteration_ms, [34.0] * 4)
    np.testing.assert_allclose(prio.iteration_start_ms, [0.0, 24.0, 57.0, 90.0, 123.0])
    # the order on the link in iteration 0
    t0 = prio.timeline[prio.timeline.iteration == 0]
    assert t0.layers.tolist() == ["2", "0", "1"]
    t0f = fifo.timeline[fifo.timeline.iteration == 0]
    assert t0f.layers.tolist() == ["2", "1", "0"]
    # fp1 in iteration 1 (priority) waited for layer 1's sync at 34
    c = prio.compute
    row = c[(c.iteration == 1) & (c.layer == 1) & (c.phase == "fp")]
    assert row.start_ms.item() == pytest.approx(34.0)


# ------------------------------------------------------------------ resnet50-like


def _job(R, L=50):
    T = compute_ms_for_ratio(R, M, 8, GBPS10)
    return resnet50_like(L, M, T)


def test_compute_bound_resnet_close_to_compute_plus_last_buffer():
    # R = 64: allreduces are tiny next to backward times, so every buffer except
    # the last is synchronised long before it is needed; the iteration is the
    # compute plus the last buffer's allreduce (if the link is idle when it closes).
    p = _job(64)
    bufs = fuse(p)
    r = simulate(p, 8, GBPS10, iterations=5)
    last = bufs[-1]
    # check the precondition: the previous buffer finished before the last closed
    tl = r.timeline[r.timeline.iteration == 1]
    assert tl.end_ms.iloc[-2] <= tl.ready_ms.iloc[-1]
    expected = p.compute_ms + _ideal_ms(last.bytes, 8, GBPS10)
    # last.bytes is not divisible by 8 -> partition rounding adds < 1 byte per step
    np.testing.assert_allclose(r.iteration_ms, expected, rtol=1e-6)


def test_network_bound_priority_and_barrier_ordering():
    p = _job(0.5)
    runs = {
        (q, b): simulate(p, 8, GBPS10, iterations=10, queue=q, barrier=b)
        for q in ("fifo", "priority")
        for b in (False, True)
    }
    res = {k: r.iteration_ms.mean() for k, r in runs.items()}
    eps = 1e-9
    assert res[("priority", False)] <= res[("fifo", False)] + eps
    assert res[("priority", True)] >= res[("priority", False)] - eps
    assert res[("fifo", True)] >= res[("fifo", False)] - eps
    # Link-time bound: every buffer of iterations 1..8 closes after iteration 1
    # starts and is synchronised before iteration 10 starts (forward of the last
    # layer of iteration 9 waited for all of them), so the link carried 8 models.
    net = sum(_ideal_ms(b.bytes, 8, GBPS10) for b in fuse(p))
    for r in runs.values():
        assert r.iteration_ms[1:].sum() >= 8 * net - 1e-6
    # fifo: layer 0's buffer is the last one of its iteration on the link, and
    # forward of layer 0 waits for it, so each iteration carries a whole model.
    assert res[("fifo", False)] >= net - 1e-6
    # and never faster than compute
    assert min(res.values()) >= p.compute_ms


@pytest.mark.parametrize("queue", ["fifo", "priority"])
@pytest.mark.parametrize("barrier", [False, True])
@pytest.mark.parametrize("R", [16, 4, 1, 0.5])
def test_schedule_invariants(R, queue, barrier):
    p = _job(R)
    n = 8
    r = simulate(p, n, GBPS10, iterations=4, queue=queue, barrier=barrier)
    assert isinstance(r, AnalyticResult)
    assert len(r.iteration_ms) == 4
    assert len(r.iteration_start_ms) == 5
    assert (r.iteration_ms >= p.compute_ms - 1e-9).all()
    tl = r.timeline
    nb = len(fuse(p))
    assert len(tl) == 4 * nb
    assert list(tl.columns) == [
        "iteration", "buffer", "layers", "bytes", "priority", "ready_ms", "start_ms", "end_ms"
    ]
    # one allreduce at a time, never before ready, right duration
    assert (tl.start_ms.to_numpy() >= tl.ready_ms.to_numpy() - 1e-9).all()
    assert (tl.start_ms.to_numpy()[1:] >= tl.end_ms.to_numpy()[:-1] - 1e-9).all()
    for row in tl.itertuples():
        assert row.end_ms - row.start_ms == pytest.approx(allreduce_ms(row.bytes, n, GBPS10))
    # work conserving: the link never idles while a buffer is ready
    prev_end = 0.0
    ready = tl.ready_ms.to_numpy()
    for j, row in enumerate(tl.itertuples()):
        if row.start_ms > prev_end + 1e-9:  # link was idle: nothing else was ready
            assert row.start_ms == pytest.approx(row.ready_ms)
            assert (ready[j:] >= row.start_ms - 1e-9).all()
        prev_end = row.end_ms
    if queue == "fifo":
        for k in range(4):
            assert tl[tl.iteration == k].buffer.tolist() == list(range(nb))
    # compute: sequential, forward waits for the previous iteration's sync
    c = r.compute
    assert len(c) == 4 * 2 * p.n_layers
    assert (c.start_ms.to_numpy()[1:] >= c.end_ms.to_numpy()[:-1] - 1e-9).all()
    for k in range(1, 4):
        prev = tl[tl.iteration == k - 1]
        fp = c[(c.iteration == k) & (c.phase == "fp")]
        for row in prev.itertuples():
            lo, hi = sorted(int(x) for x in row.layers.split("-")) if "-" in row.layers else (
                int(row.layers), int(row.layers))
            starts = fp[(fp.layer >= lo) & (fp.layer <= hi)].start_ms
            assert (starts >= row.end_ms - 1e-9).all()
        if barrier:
            assert fp.start_ms.min() >= prev.end_ms.max() - 1e-9
    # iteration starts are forward-layer-0 starts
    fp0 = c[(c.phase == "fp") & (c.layer == 0)].start_ms.to_numpy()
    np.testing.assert_allclose(fp0, r.iteration_start_ms[:4])


def test_payload_efficiency_and_latency_slow_down():
    p = _job(1)
    base = simulate(p, 8, GBPS10).iteration_ms.mean()
    assert simulate(p, 8, GBPS10, payload_efficiency=0.9).iteration_ms.mean() > base
    assert simulate(p, 8, GBPS10, step_latency_s=50e-6).iteration_ms.mean() > base


def test_larger_fusion_buffer_is_valid():
    p = _job(4)
    r = simulate(p, 8, GBPS10, fusion_buffer=25_000_000)
    assert len(r.timeline) == 10 * len(fuse(p, 25_000_000))


def test_hundred_layers_ten_iterations_completes():
    p = resnet50_like(100, M, 560.0)
    r = simulate(p, 8, GBPS10, iterations=10, queue="priority", barrier=True)
    assert len(r.iteration_ms) == 10
    assert np.isfinite(r.iteration_ms).all()


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(n_workers=1), "n_workers"),
        (dict(link_bps=0), "link_bps"),
        (dict(link_bps=-1e9), "link_bps"),
        (dict(iterations=0), "iterations"),
        (dict(queue="lifo"), r"queue must be one of \['fifo', 'priority'\]"),
        (dict(fusion_buffer=1000), "fusion_buffer.*layer"),
        (dict(payload_efficiency=0), "payload_efficiency"),
        (dict(payload_efficiency=1.5), "payload_efficiency"),
        (dict(step_latency_s=-1.0), "step_latency_s"),
        (dict(barrier="yes"), "barrier"),
    ],
)
def test_bad_arguments(kwargs, word):
    p = _job(4)
    args = dict(n_workers=8, link_bps=GBPS10)
    args.update(kwargs)
    with pytest.raises(ValueError, match=word):
        simulate(p, **args)


def test_partitions_by_hand():
    # bytescheduler on a ring: P = (1000, 10000) in 5000 B partitions -> layer 1
    # is two buffers of 5 ms each (N=2, 1 B/us), layer 0 one of 1 ms; F = B = 1.
    # iter 0: fp 0-2, bp1 2-3 -> L1a 3-8, L1b 8-13; bp0 3-4 -> L0 ready at 4,
    # priority: at 8 L0 (8-9) goes before L1b (9-14); iter 1 starts at 9, fp1
    # waits for L1b until 14: fp1 14-15, bp1 15-16 -> 16-21, 21-26; L0 ready 17,
    # goes at 21 (21-22), L1b 22-27 -> iteration 1 starts 9, iteration 2 at 22.
    p = Profile("nb", (1000, 10000), (1.0, 1.0), (1.0, 1.0))
    r = simulate(p, 2, LINK_1KB_PER_MS, iterations=3, queue="priority", partition_bytes=5000)
    assert r.iteration_start_ms[:3].tolist() == pytest.approx([0.0, 9.0, 22.0])
    assert [b.bytes for b in r.buffers] == [5000, 5000, 1000]
