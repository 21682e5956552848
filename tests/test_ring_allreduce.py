"""Real-ns-3 tests of the ring-allreduce training job (ns3-modules/jobs/ring-allreduce-*).

The analytic model (harness.training.ring.simulate) is the oracle: at zero background load
the ns-3 job must reproduce its iteration times.

Setting (small, so that every ns-3 run takes ~1-3 s of wall time): 4 workers
on one switch (harness topology single-tor, hosts = 4), 1 Gbit/s, 10 us per
link, pfifo_fast, MTU 1500 / segment 1380, no background; the resnet50-like
profile with 20 layers and M = 2 MB (ns-3 TCP costs ~6.5 events per data
packet here, so a 10 MB model would make the network-bound runs 5x longer).

What the analytic model is given (``_ANALYTIC``), and why:

* ``payload_efficiency = 1380 / (1380 + 54)``: a data segment costs 54 wire
  bytes on top of its payload: PPP 2 + IPv4 20 + TCP 20 + 12 (timestamp
  option, 10 B padded to 12).  The queue tracker shows 52 B per packet at the
  IP layer.  The ACKs of the reverse stream (54 B, one per two segments) do
  not cost extra: the whole partition is in the host's FIFO band when its
  ACKs are generated, so they queue behind the data and leave in the bubble
  between two steps.
* ``step_latency_s = 2 * 10 us + 1434 * 8 / 1 Gbit/s`` (31.47 us), fitted to
  what ns-3 does: a 66,666 B partition takes 585.97 us = 69,312 wire bytes
  (554.50 us) + 31.47 us; a 55,555 B one 493.77 us = 462.15 us + 31.62 us.
  The bubble is the two propagation delays (20 us) plus ~11.5 us at the
  switch: the partition's own last frame is short (480 B, 3.8 us), so most
  likely the rest is the ACK burst of the next worker, released at the end
  of its own burst, sharing the switch's egress with the last data frames.

The first iteration (TCP slow start on fresh connections) is not compared.
"""

from __future__ import annotations

import functools
import importlib.util
import io
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("cppyy") is None or importlib.util.find_spec("ns3") is None,
    reason="needs the ns3 wheel and cppyy",
)

from harness.config import scenario as config  # noqa: E402
from harness.traffic import fusion, profiles, schedulers  # noqa: E402
from harness.training import ring  # noqa: E402
from harness.training.common import AnalyticResult  # noqa: E402
from harness.engine import planning, simulation  # noqa: E402

N = 4
LINK_BPS = 1e9
DELAY_S = 10e-6
MTU = 1500
SEGMENT = 1380
WIRE_OVERHEAD = 2 + 20 + 20 + 12  # PPP + IPv4 + TCP + timestamp option (padded)
MODEL_BYTES = 2_000_000
N_LAYERS = 20
PORT = 5000
_ANALYTIC = dict(
    payload_efficiency=SEGMENT / (SEGMENT + WIRE_OVERHEAD),
    step_latency_s=2 * DELAY_S + (SEGMENT + WIRE_OVERHEAD) * 8 / LINK_BPS,
)

# ToS of the harness classes under pfifo_fast (harness.network.qdisc): band 0, 1, 2
TOS_HIGH, TOS_NORMAL, TOS_LOW = 0x10, 0x00, 0x08


def _csv(text) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(str(text)), keep_default_na=False, na_values=[],
                       dtype={"layers": str})


def profile_for(ratio: float) -> profiles.Profile:
    compute = profiles.compute_ms_for_ratio(ratio, MODEL_BYTES, N, LINK_BPS)
    return profiles.resnet50_like(n_layers=N_LAYERS, model_bytes=MODEL_BYTES, compute_ms=compute)


@dataclass
class JobRun:
    profile: profiles.Profile
    queue: str
    barrier: bool
    duration: float
    iterations: pd.DataFrame
    transfers: pd.DataFrame
    allreduces: pd.DataFrame
    buffers: pd.DataFrame
    queues: pd.DataFrame
    bytes_sent: list[int]
    n_allreduces: int
    n_started: int
    n_errors: int
    errors: str
    n_connected: int
    events: int
    run_wall_s: float
    total_wall_s: float
    extra: dict = field(default_factory=dict)

    def iteration_ms(self) -> pd.Series:
        """Mean over workers of each complete iteration's time (ms)."""
        it = self.iterations
        return ((it.end_ns - it.start_ns) / 1e6).groupby(it.iteration).mean()

    def mean_iteration_ms(self, skip: int = 1) -> float:
        return float(self.iteration_ms().iloc[skip:].mean())

    def analytic(self) -> AnalyticResult:
        n = len(self.iteration_ms())
        return ring.simulate(self.profile, N, LINK_BPS, iterations=n, queue=self.queue,
                             barrier=self.barrier, **_ANALYTIC)


def _run(ratio: float, queue: str, barrier: bool, duration: float, overrides=(),
         layer_tos: dict | None = None, default_tos: int | None = None,
         permute_addresses: bool = False, cut_host_at: tuple[int, float] | None = None,
         ) -> JobRun:
    """Build the harness network (no background), install one job, run, collect."""
    from harness.engine import ns3

    t0 = time.perf_counter()
    ns = ns3.load(quiet=True)
    scenario = config.load_scenario(None, [
        "background.enabled=false", f"topology.hosts={N}", 'topology.link_rate="1Gbps"',
        f'topology.link_delay="{DELAY_S * 1e6:g}us"', f"network.mtu={MTU}",
        f"tcp.segment_size={SEGMENT}", *overrides])
    plan = planning.plan(scenario)
    net = simulation._Network(ns, plan)

    prof = profile_for(ratio)
    helper = ns.RingAllreduceHelper()
    helper.SetLayers([int(b) for b in prof.layer_bytes],
                     [round(v * 1e6) for v in prof.fp_ms],
                     [round(v * 1e6) for v in prof.bp_ms])
    # the plan, as harness/training/ring.py makes it: per-layer classes (a
    # buffer travels in its lowest layer's), the policy's CommScheduler
    # ordering the buffers
    classes = [(layer_tos or {}).get(layer, default_tos or 0) for layer in range(prof.n_layers)]
    helper.SetLayerClasses(classes)
    helper.SetBuffers(*ring.buffer_arguments(fusion.fuse(prof)))
    helper.SetScheduler(schedulers.POLICIES[queue].push, [])
    helper.SetJobAttribute("Barrier", ns.BooleanValue(barrier))
    helper.SetJobAttribute("Port", ns.UintegerValue(PORT))
    node_ids = [net.builder.GetNode(h).GetId() for h in range(N)]
    addresses = list(net.host_addresses[:N])
    if permute_addresses:  # addresses that do not match the nodes: a misconfiguration
        addresses[1], addresses[2] = addresses[2], addresses[1]
    job = helper.Install(node_ids, addresses)

    sim = ns.Simulator
    events0 = sim.GetEventCount()
    t1 = time.perf_counter()
    if cut_host_at is not None:  # from then on, the host receives nothing
        host, at = cut_host_at
        sim.Stop(ns.Seconds(at))
        sim.Run()
        drop_all = ns.CreateObject["ns3::RateErrorModel"]()
        drop_all.SetAttribute("ErrorRate", ns.DoubleValue(1.0))
        drop_all.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
        device = net.builder.GetLinkDevice(plan.topology.host_link_index(host), 0)
        device.SetAttribute("ReceiveErrorModel", ns.PointerValue(drop_all))
        sim.Stop(ns.Seconds(duration - at))
    else:
        sim.Stop(ns.Seconds(duration))
    sim.Run()
    run_wall = time.perf_counter() - t1
    result = JobRun(
        profile=prof, queue=queue, barrier=barrier, duration=duration,
        iterations=_csv(job.IterationsCsv()), transfers=_csv(job.TransfersCsv()),
        allreduces=_csv(job.AllreducesCsv()), buffers=_csv(job.BuffersCsv()),
        queues=_csv(net.queues.ToCsv()),
        bytes_sent=[int(job.GetBytesSent(r)) for r in range(N)],
        n_allreduces=int(job.GetNAllreduces()), n_started=int(job.GetNAllreducesStarted()),
        n_errors=int(job.GetNErrors()), errors=str(job.GetErrors()),
        n_connected=int(job.GetNConnectedWorkers()),
        events=int(sim.GetEventCount() - events0), run_wall_s=run_wall, total_wall_s=0.0,
        extra={"now_s": sim.Now().GetSeconds(),
               "worker_iteration": [int(job.GetWorker(w).GetIteration()) for w in range(N)]})
    sim.Destroy()
    del job, helper, net
    result.total_wall_s = time.perf_counter() - t0
    return result


@functools.cache
def cached_run(ratio: float, queue: str, barrier: bool, duration: float,
               overrides: tuple = ()) -> JobRun:
    return _run(ratio, queue, barrier, duration, overrides)


# Simulated time per setting: >= 4 compared iterations each.
DURATION = {4.0: 0.5, 2.0: 0.3, 0.5: 0.3}


def _report(r: JobRun, label: str) -> str:
    a = r.analytic().iteration_ms[1:].mean()
    n = r.mean_iteration_ms()
    return (f"{label}: analytic {a:.4f} ms, ns-3 {n:.4f} ms ({100 * (n / a - 1):+.3f} %), "
            f"{len(r.iteration_ms())} iterations, {r.events} events, {r.run_wall_s:.2f} s run")


# --------------------------------------------------------------------------- timing


@pytest.mark.parametrize("queue", ["fifo", "priority"])
@pytest.mark.parametrize("ratio", [4.0, 2.0])
def test_compute_bound_matches_analytic(ratio, queue):
    r = cached_run(ratio, queue, False, DURATION[ratio])
    assert r.n_errors == 0, r.errors
    assert r.n_connected == N
    ns3_ms = r.iteration_ms()
    assert len(ns3_ms) >= 5, ns3_ms
    # every worker sees the same iteration times (identical workers, symmetric ring)
    per_worker = r.iterations.assign(ms=(r.iterations.end_ns - r.iterations.start_ns) / 1e6)
    spread = per_worker.groupby("iteration").ms.agg(lambda s: s.max() - s.min())
    assert spread.max() < 0.01, spread
    a = r.analytic()
    a_ms = float(np.mean(a.iteration_ms[1:]))
    n_ms = r.mean_iteration_ms()
    print(_report(r, f"R={ratio} {queue}"))
    assert n_ms == pytest.approx(a_ms, rel=0.02)
    # compute-bound: iteration = compute + the last buffer's allreduce, barely
    # above pure compute
    assert r.profile.compute_ms < n_ms < r.profile.compute_ms * 1.1


def test_network_bound_priority_beats_fifo():
    fifo = cached_run(0.5, "fifo", False, DURATION[0.5])
    prio = cached_run(0.5, "priority", False, DURATION[0.5])
    for r in (fifo, prio):
        assert r.n_errors == 0, r.errors
        print(_report(r, f"R=0.5 {r.queue}"))
    a_gain = fifo.analytic().iteration_ms[1:].mean() - prio.analytic().iteration_ms[1:].mean()
    n_gain = fifo.mean_iteration_ms() - prio.mean_iteration_ms()
    assert a_gain > 0, "the analytic model says priority helps at R = 0.5"
    assert n_gain > 0, (fifo.mean_iteration_ms(), prio.mean_iteration_ms())
    assert n_gain == pytest.approx(a_gain, rel=0.20)
    # and each is close to the oracle on its own
    for r in (fifo, prio):
        assert r.mean_iteration_ms() == pytest.approx(r.analytic().iteration_ms[1:].mean(),
                                                      rel=0.02)


@pytest.mark.parametrize("queue", ["fifo", "priority"])
def test_network_bound_barrier_never_faster(queue):
    off = cached_run(0.5, queue, False, DURATION[0.5])
    on = cached_run(0.5, queue, True, DURATION[0.5])
    assert on.n_errors == 0 and off.n_errors == 0, on.errors + off.errors
    print(_report(on, f"R=0.5 {queue} barrier"))
    assert on.mean_iteration_ms() >= off.mean_iteration_ms() - 1e-6
    a_on = on.analytic().iteration_ms[1:].mean()
    assert on.mean_iteration_ms() == pytest.approx(a_on, rel=0.02)


# --------------------------------------------------------------------------- bytes


def _expected_bytes_per_iteration(prof: profiles.Profile) -> list[int]:
    """Payload each rank sends per iteration, from the buffers (not from ns-3).

    Buffer S: partitions S // N, the first S % N one byte larger; at step s rank
    r sends partition (r - s) mod N, s = 0 .. 2(N-1)-1.
    """
    out = []
    for r in range(N):
        total = 0
        for b in fusion.fuse(prof):
            parts = [b.bytes // N + (1 if p < b.bytes % N else 0) for p in range(N)]
            total += sum(parts[(r - s) % N] for s in range(2 * (N - 1)))
        out.append(total)
    return out


@pytest.mark.parametrize("small_socket_buffers", [False, True],
                         ids=["32MiB-buffers", "64KiB-buffers"])
def test_bytes_per_iteration_exact(small_socket_buffers):
    # 64 KiB socket buffers are smaller than a partition (66,666 B): the worker
    # then feeds its socket from the send callback as space frees up.
    overrides = ("tcp.buffer_bytes=65536",) if small_socket_buffers else ()
    r = cached_run(0.5, "fifo", False, DURATION[0.5], overrides)
    assert r.n_errors == 0, r.errors
    expected = _expected_bytes_per_iteration(r.profile)
    model = r.profile.model_bytes
    nb = len(fusion.fuse(r.profile))
    # ~ 2(N-1)/N x M: rounding moves each buffer by less than 2 bytes per rank
    for e in expected:
        assert abs(e - 2 * (N - 1) / N * model) <= 2 * nb
    tr = r.transfers
    complete = set(r.iterations.iteration)  # iterations completed by every worker
    complete = {k for k in complete if (r.iterations.iteration == k).sum() == N}
    assert len(complete) >= 5
    sent = tr[tr.iteration.isin(complete)].groupby(["worker", "iteration"]).bytes.sum()
    for (worker, iteration), got in sent.items():
        assert got == expected[worker], (worker, iteration, got, expected[worker])
    assert len(sent) == N * len(complete)
    # the C++ counter (bytes written into the socket) agrees with the table
    for w in range(N):
        rows = tr[tr.worker == w]
        assert rows[rows.end_ns >= 0].bytes.sum() <= r.bytes_sent[w] <= rows.bytes.sum()
    if not small_socket_buffers:
        assert r.bytes_sent == [int(tr[tr.worker == w].bytes.sum()) for w in range(N)]
    print(f"bytes per iteration per rank: {expected} "
          f"(2(N-1)/N x M = {2 * (N - 1) / N * model:.0f}); "
          f"{r.run_wall_s:.2f} s run")


# --------------------------------------------------------------------------- integrity


@pytest.mark.parametrize("queue", ["fifo", "priority"])
def test_allreduces_complete_once_and_stop_cleanly(queue):
    r = cached_run(0.5, queue, False, DURATION[0.5])
    assert r.n_errors == 0, r.errors
    assert r.n_connected == N
    ar, tr = r.allreduces, r.transfers
    nb = len(r.buffers)
    # one allreduce per (iteration, buffer), run one at a time, all finished but
    # the one in flight when the simulation stopped
    assert not ar.duplicated(["iteration", "buffer"]).any()
    assert len(ar) == r.n_started
    assert r.n_allreduces == (ar.end_ns >= 0).sum() == r.n_started - 1, \
        "the run should stop with an allreduce in flight"
    assert (ar.end_ns.iloc[:-1] >= 0).all() and ar.end_ns.iloc[-1] == -1
    assert (ar.start_ns.iloc[1:].values >= ar.end_ns.iloc[:-1].values).all()
    # all gradients of iteration k are synchronised before iteration k+1
    # completes (its forward waited for every layer)
    last_complete = r.iterations.iteration.max()
    done = ar[ar.end_ns >= 0]
    assert last_complete >= 5
    for k in range(last_complete):
        assert sorted(done[done.iteration == k].buffer) == list(range(nb)), k
    # the run stopped at its stop time with an iteration in flight on every
    # worker (started, not complete, so not in the table)
    assert r.extra["now_s"] == pytest.approx(r.duration)
    assert r.extra["worker_iteration"] == [last_complete + 1] * N
    # each partition is sent once per step, in ring order, and received once
    assert not tr.duplicated(["worker", "iteration", "buffer", "step"]).any()
    assert ((tr.worker - tr.step) % N == tr.partition).all()
    finished = tr.merge(done[["iteration", "buffer"]], on=["iteration", "buffer"])
    per = finished.groupby(["iteration", "buffer", "worker"]).size()
    assert (per == 2 * (N - 1)).all()
    assert (finished.end_ns >= finished.start_ns).all()
    sizes = dict(zip(r.buffers.buffer, r.buffers.bytes))
    assert (finished.groupby(["iteration", "buffer", "worker"]).bytes.sum()
            == [2 * sizes[b] - _part(sizes[b], (w + 1) % N) - _part(sizes[b], (w + 2) % N)
                for (_, b, w) in per.index]).all()
    # rows still open belong to the allreduce in flight only
    open_rows = tr[tr.end_ns < 0]
    assert len(open_rows) > 0
    last = ar.iloc[-1]
    assert ((open_rows.iteration == last.iteration) & (open_rows.buffer == last.buffer)).all()
    # a run after Destroy() in the same process is unaffected (no leftovers)
    again = _run(0.5, queue, False, 0.05)
    assert again.n_errors == 0, again.errors
    assert again.iterations.equals(r.iterations[r.iterations.end_ns <= 0.05e9]
                                   .reset_index(drop=True))


def _part(size: int, p: int) -> int:
    return size // N + (1 if p < size % N else 0)


# --------------------------------------------------------------------------- buffers and ToS


def test_buffers_match_harness_fuse():
    r = cached_run(4.0, "fifo", False, DURATION[4.0])
    expected = fusion.fuse(r.profile)
    assert list(r.buffers.bytes) == [b.bytes for b in expected]
    assert list(r.buffers.layers) == [b.label for b in expected]
    assert list(r.buffers.priority) == [b.priority for b in expected]


def test_layer_tos_switches_class_per_buffer():
    """Layers 0-4 high (band 0), the rest low (band 2): buffer '9-0' is high,
    all others low. The ring's one persistent connection per worker pair
    switches class between allreduces; nothing travels in the default band."""
    r = _run(0.5, "priority", False, 0.1, layer_tos={i: TOS_HIGH for i in range(5)},
             default_tos=TOS_LOW)
    assert r.n_errors == 0, r.errors
    bufs = r.buffers
    high = set(bufs[bufs.tos == TOS_HIGH].buffer)
    assert list(bufs[bufs.tos == TOS_HIGH].layers) == ["9-0"]
    assert set(bufs[bufs.tos == TOS_LOW].buffer) == set(range(len(bufs))) - high
    q = r.queues
    uplinks = q[q.from_node < N]  # host -> switch egress
    by_band = uplinks.groupby("band")[["dequeued_packets", "dequeued_bytes"]].sum()
    assert by_band.loc[1, "dequeued_packets"] == 0, by_band  # nothing in the default class
    tr = r.transfers
    sent = tr[tr.end_ns >= 0]
    for band, in_class in ((0, sent.buffer.isin(high)), (2, ~sent.buffer.isin(high))):
        payload = sent[in_class].bytes.sum()
        data_packets = sum(-(-b // SEGMENT) for b in sent[in_class].bytes)
        # data + ~one ACK per two segments, 52 B of headers each at the IP layer
        expected = payload + 52 * data_packets * 1.5
        got = by_band.loc[band, "dequeued_bytes"]
        print(f"band {band}: {got} B dequeued on host uplinks, expected ~{expected:.0f}")
        assert got == pytest.approx(expected, rel=0.03), (band, got, expected)


def test_socket_errors_are_recorded():
    """Addresses that do not match the nodes: a worker refuses the connection
    from a host that is not its left neighbour; the job records it (and the
    run still ends cleanly)."""
    r = _run(4.0, "fifo", False, 0.05, permute_addresses=True)
    assert r.n_errors > 0
    assert "refused a connection" in r.errors
    assert r.n_connected < N
    assert r.n_allreduces == 0


def test_connection_failure_mid_run_is_recorded():
    """Host 1 stops receiving mid-run: its left neighbour's connection runs out
    of retransmissions and fails; the job records it, and the run ends cleanly.
    (Smaller qdisc bands give a smaller worst-case RTT, hence shorter TCP
    timers, and ns-3's own 6 retransmissions instead of Linux's 15: the
    connection gives up within the simulated time.)"""
    r = _run(2.0, "fifo", False, 3.0, overrides=("network.band_limit_packets=50",
                                                  "tcp.data_retries=6"),
             cut_host_at=(1, 0.06))
    assert r.n_errors >= 1
    assert "worker 0: the connection to the right neighbour failed" in r.errors, r.errors
    assert r.n_connected < N
    # the ring stalled: no allreduce finished after the cut
    assert (r.allreduces.end_ns < 0.07e9).all()


@pytest.mark.parametrize("fusion_factor", [1.0, 2.5, 100.0])
def test_fusion_buffer_attribute_matches_fuse(fusion_factor):
    """The C++ job replays harness.traffic.fusion.fuse's buffers for any fusion
    buffer (no simulation needed), and a buffer's ToS is that of its lowest
    layer."""
    from harness.engine import ns3

    ns = ns3.load(quiet=True)
    prof = profile_for(1.0)
    fb = int(prof.largest_layer * fusion_factor) + 1
    job = ns.CreateObject["ns3::RingAllreduceJob"]()
    job.SetLayers([int(b) for b in prof.layer_bytes], [1] * prof.n_layers, [1] * prof.n_layers)
    # Python plans the buffers (harness/training/ring.py), the C++ job replays them
    expected = fusion.fuse(prof, fb)
    job.SetLayerClasses([4 * layer for layer in range(prof.n_layers)])
    job.SetBuffers(*ring.buffer_arguments(expected))
    got = _csv(job.BuffersCsv())
    assert list(got.bytes) == [b.bytes for b in expected]
    assert list(got.layers) == [b.label for b in expected]
    assert list(got.priority) == [b.priority for b in expected]
    assert list(got.tos) == [4 * b.priority for b in expected]
