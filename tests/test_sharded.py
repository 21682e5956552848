"""The sharded data-parallel architecture (FSDP / ZeRO-3 style,
harness/training/sharded.py, ns3-modules/jobs/sharded-*): its settings, its
analytic model, and the ns-3 job against that model at zero background load.

Setting (as tests/test_ring_allreduce.py): 4 workers on one switch, 1 Gbit/s,
10 us per link, MTU 1500 / segment 1380, no background; the 2 MB
resnet50-like profile (50 layers) in groups of at most its largest layer + 1
(19 groups). The analytic model gets the ring tests' wire calibration
(``ANALYTIC``): payload efficiency 1380 / 1434 (54 B of headers per segment)
and a step latency of two propagation delays plus one frame (31.5 us): a
ring step of an all-gather or a reduce-scatter is a ring-allreduce step.
The first iteration (TCP slow start on fresh connections) is not compared.
"""

from __future__ import annotations

import functools
import importlib.util
import time

import numpy as np
import pandas as pd
import pytest

from harness.config import scenario as config
from harness.traffic import profiles
from harness.config.scenario import ConfigError
from harness.training import sharded
from harness.training.sharded import Group, make_groups, simulate_sharded

needs_ns3 = pytest.mark.skipif(
    importlib.util.find_spec("cppyy") is None or importlib.util.find_spec("ns3") is None,
    reason="needs the ns3 wheel and cppyy")

N = 4
LINK_BPS = 1e9
DELAY_S = 10e-6
SEGMENT = 1380
WIRE_OVERHEAD = 2 + 20 + 20 + 12  # PPP + IPv4 + TCP + timestamp option (padded)
ANALYTIC = dict(payload_efficiency=SEGMENT / (SEGMENT + WIRE_OVERHEAD),
                step_latency_s=2 * DELAY_S + (SEGMENT + WIRE_OVERHEAD) * 8 / LINK_BPS)

JOB = ["background.enabled=false", f"topology.hosts={N}", 'topology.link_rate="1Gbps"',
       f'topology.link_delay="{DELAY_S * 1e6:g}us"', "network.mtu=1500",
       f"tcp.segment_size={SEGMENT}", "training.enabled=true",
       'training.architecture="sharded"', f"training.workers={N}",
       'training.profile="resnet50-like-2MB"']


def _load(*overrides: str):
    return config.load_scenario(None, [*JOB, *overrides])


# --------------------------------------------------------------------------- settings


@pytest.mark.parametrize("override, message", [
    ("training.no_such_key=1", "training.no_such_key: unknown key"),
    ("training.prefetch_depth=-1", "training.prefetch_depth: must be >= 0 (got -1)"),
    ("training.prefetch_depth=1.5", "training.prefetch_depth: expected an integer"),
    ('training.prefetch_depth="deep"', "training.prefetch_depth:"),
    ("training.group_bytes=0", "training.group_bytes:"),
    ("training.reshard_after_forward=1", "training.reshard_after_forward:"),
    ("training.fusion_buffer=3000000", "training.fusion_buffer: applies to architecture = "
                                       "'ring' only, not 'sharded'"),
    ("training.servers=2", "training.servers: applies to architecture = 'ps' only"),
    ('training.policy="priority"', "training.policy: 'priority' is not available"),
    ("training.barrier=true", "training.barrier:"),
])
def test_bad_settings_are_refused_in_one_line(override, message):
    with pytest.raises(ConfigError) as e:
        _load(override)
    assert str(e.value).startswith(message), str(e.value)
    assert "\n" not in str(e.value)


def test_unknown_key_lists_its_own_keys():
    with pytest.raises(ConfigError) as e:
        _load("training.no_such_key=1")
    for key in ("group_bytes", "prefetch_depth", "reshard_after_forward"):
        assert key in str(e.value)


def test_own_keys_accepted_and_ring_scenarios_unchanged():
    sc = _load("training.prefetch_depth=2", "training.group_bytes=300000",
               "training.reshard_after_forward=false")
    assert sc.training.prefetch_depth == 2
    assert sc.training.group_bytes == 300_000
    assert sc.training.reshard_after_forward is False
    # a ring job given a sharded key at its default is the same scenario
    ring = [*JOB[:6], "training.enabled=true"]
    assert config.load_scenario(None, ring).training.architecture == "ring"
    assert config.load_scenario(None, [*ring, "training.prefetch_depth=0"]).digest() == \
        config.load_scenario(None, ring).digest()
    with pytest.raises(ConfigError, match="training.prefetch_depth: applies to architecture = "
                                          "'sharded' only, not 'ring'"):
        config.load_scenario(None, [*ring, "training.prefetch_depth=1"])


def test_group_smaller_than_the_workers_is_refused(tmp_path):
    from harness.engine.planning import plan

    csv = tmp_path / "tiny.csv"
    csv.write_text("layer,bytes,fp_ms,bp_ms\n0,3,1.0,1.0\n1,3,1.0,1.0\n2,3,1.0,1.0\n")
    with pytest.raises(ConfigError, match="training.group_bytes: group of layers 0 has 3 B, "
                                          "fewer than the 4 workers"):
        plan(_load("training.group_bytes=1", f'training.profile="{csv}"'))
    with pytest.raises(ConfigError, match="training.group_bytes: group of layers 2 has 3 B"):
        plan(_load("training.group_bytes=6", f'training.profile="{csv}"'))  # 0-1, 2


def test_scale_divides_group_bytes():
    from harness.engine.planning import plan

    p = plan(_load("training.group_bytes=400000", "scale=10"))
    assert p.job.group_bytes == 40_000
    full = plan(_load("training.group_bytes=400000"))
    assert p.job.profile.model_bytes == pytest.approx(full.job.profile.model_bytes / 10,
                                                      rel=0.01)
    assert p.job.ideal_iteration_s == pytest.approx(full.job.ideal_iteration_s, rel=0.01)


# --------------------------------------------------------------------------- the model


def _toy(n_layers=4, layer_bytes=4000, fp=1.0, bp=2.0) -> profiles.Profile:
    return profiles.Profile("toy", (layer_bytes,) * n_layers, (fp,) * n_layers,
                            (bp,) * n_layers)


def test_groups_are_consecutive_layers_up_to_the_size():
    toy = profiles.Profile("t", (5, 5, 20, 5, 5, 5), (1.0,) * 6, (1.0,) * 6)
    groups = make_groups(toy, 10)
    assert [(g.first, g.last, g.bytes) for g in groups] == [(0, 1, 10), (2, 2, 20), (3, 4, 10),
                                                            (5, 5, 5)]
    assert [g.label for g in groups] == ["0-1", "2", "3-4", "5"]
    assert len(make_groups(toy, 10**9)) == 1


def test_model_without_prefetch_serialises_everything():
    # 2 groups of 2 layers, 8000 B each; N = 2: a collective is 1 step of 4000 B
    # = 32 ms at 1 Mbit/s; compute per group: fp 2 ms, bp 4 ms
    toy = _toy()
    groups = make_groups(toy, 8000)
    r = simulate_sharded(toy, 2, 1e6, groups, prefetch_depth=0, iterations=3)
    # AG0 32, F0 2, AG1 32, F1 2, AG'1 32, B1 4, [RS1 32 | AG'0 first: 32], B0 4, RS0 ...
    # forward: 32+2+32+2 = 68; backward: AG'1 32, B1 4 (to 104); then AG'0 (before RS1,
    # issued at the same instant) 32 -> 136, B0 4 -> 140 while RS1 runs 136-168,
    # RS0 168-200: iteration 200 ms
    assert r.iteration_ms == pytest.approx([200.0] * 3)


def test_model_prefetch_overlaps_and_is_not_slower():
    toy = _toy(n_layers=8, fp=10.0, bp=20.0)
    groups = make_groups(toy, 4000)
    times = [simulate_sharded(toy, 4, 1e6, groups, prefetch_depth=d, iterations=4)
             .iteration_ms[1:].mean() for d in (0, 1, 2, 4, 100)]
    assert all(b <= a + 1e-9 for a, b in zip(times, times[1:])), times
    assert times[1] < times[0]
    # no reshard: fewer gathers, never slower
    no = simulate_sharded(toy, 4, 1e6, groups, prefetch_depth=0, reshard=False, iterations=4)
    assert no.iteration_ms[1:].mean() < times[0]


def test_model_bounds():
    """Between the network's and the compute's own time, and at most their sum."""
    toy = _toy(n_layers=6, fp=3.0, bp=6.0)
    groups = make_groups(toy, 8000)
    net = sum(3 * sharded.collective_ms(g.bytes, 4, 1e6) for g in groups)
    for d in (0, 1, 3):
        it = simulate_sharded(toy, 4, 1e6, groups, prefetch_depth=d).iteration_ms[1:].mean()
        assert max(net, toy.compute_ms) - 1e-9 <= it <= net + toy.compute_ms + 1e-9


def test_model_rejects_bad_arguments():
    toy = _toy()
    with pytest.raises(ValueError, match="prefetch_depth"):
        simulate_sharded(toy, 2, 1e9, make_groups(toy, 8000), prefetch_depth=-1)
    with pytest.raises(ValueError, match="groups"):
        simulate_sharded(toy, 2, 1e9, (Group(0, 1, 3, 12000),))


# --------------------------------------------------------------------------- ns-3


def _expected_bytes_per_iteration(groups, reshard: bool) -> list[int]:
    """What each rank sends per iteration: per collective of S bytes, every
    partition but the one it receives last, (rank + 1) mod N."""
    out = []
    for r in range(N):
        total = 0
        for g in groups:
            parts = [g.bytes // N + (1 if p < g.bytes % N else 0) for p in range(N)]
            total += (3 if reshard else 2) * (g.bytes - parts[(r + 1) % N])
        out.append(total)
    return out


@functools.cache
def run_job(ratio: float, prefetch: int, duration: float, reshard: bool = True) -> dict:
    """The plug-in's plan through the scenario recipe into ns-3; the workers
    stop computing at `duration` and the run goes on 0.2 s, so every byte
    written into a socket is delivered."""
    from harness.engine import ns3, planning, simulation

    t0 = time.perf_counter()
    ns = ns3.load(quiet=True)
    p = planning.plan(_load(f"training.ratio={ratio}", f"training.prefetch_depth={prefetch}",
                              f"training.reshard_after_forward={str(reshard).lower()}"))
    net = simulation._Network(ns, p)
    job = net.job
    for r in range(N):
        job.GetWorker(r).SetStopTime(ns.Seconds(duration))
    sim = ns.Simulator
    sim.Stop(ns.Seconds(duration + 0.2))
    sim.Run()
    tables = sharded.ARCHITECTURE.collect(job, p.job, p.classes.class_of_tos())
    out = dict(plan=p.job, iterations=tables.iterations, transfers=tables.transfers,
               compute=tables.compute, errors=tables.errors,
               n_errors=int(job.GetNErrors()), n_connected=int(job.GetNConnectedWorkers()),
               sent=[int(job.GetBytesSent(r)) for r in range(N)],
               received=[int(job.GetWorker(r).GetBytesReceived()) for r in range(N)],
               collectives=pd.read_csv(__import__("io").StringIO(str(job.CollectivesCsv()))),
               wall_s=time.perf_counter() - t0)
    sim.Destroy()
    del job, net
    return out


def _ns3_ms(run: dict) -> pd.Series:
    it = run["iterations"]
    return ((it.end_ns - it.start_ns) / 1e6).groupby(it.iteration).mean()


def _analytic_ms(run: dict, iterations: int) -> np.ndarray:
    job = run["plan"]
    cfg = job.config
    return simulate_sharded(job.profile, N, LINK_BPS, job.groups,
                            prefetch_depth=cfg.prefetch_depth,
                            reshard=cfg.reshard_after_forward, iterations=iterations,
                            **ANALYTIC).iteration_ms


def _report(run: dict, label: str) -> tuple[float, float]:
    ns_ms = _ns3_ms(run)
    n = float(ns_ms.iloc[1:].mean())
    a = float(_analytic_ms(run, len(ns_ms))[1:].mean())
    ideal = run["plan"].ideal_iteration_s * 1e3
    print(f"{label}: analytic {a:.4f} ms, ns-3 {n:.4f} ms ({100 * (n / a - 1):+.3f} %), "
          f"ideal (predict) {ideal:.4f} ms, {len(ns_ms)} iterations, {run['wall_s']:.1f} s wall")
    return n, a


# R = 1 (compute = the job's network time): prefetch matters; ~9 iterations in 0.6 s
DURATION = 0.6


@needs_ns3
@pytest.mark.parametrize("prefetch", [0, 1])
def test_zero_load_matches_analytic(prefetch):
    run = run_job(1.0, prefetch, DURATION)
    assert run["n_errors"] == 0, run["errors"]
    assert run["n_connected"] == N
    ns_ms = _ns3_ms(run)
    assert len(ns_ms) >= 5, ns_ms
    # identical workers: the same iteration times
    it = run["iterations"].assign(ms=lambda t: (t.end_ns - t.start_ns) / 1e6)
    assert it.groupby("iteration").ms.agg(lambda s: s.max() - s.min()).max() < 0.05
    n, a = _report(run, f"R=1 prefetch {prefetch}")
    assert n == pytest.approx(a, rel=0.02)
    # every iteration, not only the mean (the first: TCP's slow start)
    assert np.asarray(ns_ms.iloc[1:]) == pytest.approx(_analytic_ms(run, len(ns_ms))[1:],
                                                       rel=0.02)


@needs_ns3
def test_deeper_prefetch_is_not_slower_at_zero_load():
    times = [float(_ns3_ms(run_job(1.0, d, DURATION)).iloc[1:].mean()) for d in (0, 1, 2)]
    print("prefetch 0, 1, 2:", [f"{t:.3f} ms" for t in times])
    assert times[1] < times[0] * 0.98     # one group ahead hides gathers behind compute
    assert times[2] <= times[1] * 1.005


@needs_ns3
def test_delivered_bytes_equal_sent_bytes():
    run = run_job(1.0, 1, DURATION)
    assert run["n_errors"] == 0, run["errors"]
    # everything written into a socket arrived at the right neighbour
    for r in range(N):
        assert run["received"][(r + 1) % N] == run["sent"][r] > 0
    tr = run["transfers"]
    # each partition row: received in full (end_ns) unless the workers stopped first
    stop_ns = DURATION * 1e9
    assert (tr.loc[tr.start_ns < stop_ns - 5e6, "end_ns"] >= 0).all()
    # per complete iteration each rank sends exactly its partitions of every collective
    expected = _expected_bytes_per_iteration(run["plan"].groups, reshard=True)
    complete = [k for k, n in run["iterations"].groupby("iteration").size().items() if n == N]
    assert len(complete) >= 5
    sent = tr[tr.iteration.isin(complete)].groupby(["worker", "iteration"]).bytes.sum()
    assert len(sent) == N * len(complete)
    for (worker, _), got in sent.items():
        assert got == expected[worker]
    # the byte counter agrees with the table: rows whose bytes all went into the socket
    for r in range(N):
        rows = tr[tr.worker == r]
        assert rows[rows.end_ns >= 0].bytes.sum() <= run["sent"][r] <= rows.bytes.sum()
    # the tables the harness's metrics read
    assert tr.traffic_class.notna().all()
    assert {"job", "worker", "iteration", "buffer", "layers", "start_ns", "end_ns",
            "bytes"} <= set(tr.columns)
    assert set(run["compute"].phase) == {"fp", "bp"}


@needs_ns3
def test_collectives_run_one_at_a_time_in_the_model_order():
    run = run_job(1.0, 1, DURATION)
    c = run["collectives"]
    done = c[c.end_ns >= 0]
    assert (done.start_ns.iloc[1:].to_numpy() >= done.end_ns.iloc[:-1].to_numpy()).all()
    plan = run["plan"]
    model = simulate_sharded(plan.profile, N, LINK_BPS, plan.groups, prefetch_depth=1,
                             iterations=3, **ANALYTIC).timeline
    got = c[c.iteration == 2][["buffer", "kind"]].to_records(index=False).tolist()
    want = model[model.iteration == 2][["buffer", "kind"]].to_records(index=False).tolist()
    assert got == want
    assert len(got) == 3 * len(plan.groups)


@needs_ns3
@pytest.mark.parametrize("ratio, prefetch, reshard", [
    (1.0, 3, True), (1.0, 0, False), (1.0, 2, False), (4.0, 1, True), (0.5, 1, True)])
def test_zero_load_other_settings_match_analytic(ratio, prefetch, reshard):
    # R = 4: compute-bound; R = 0.5: network-bound (the ring never idles)
    duration = {4.0: 1.0, 1.0: DURATION, 0.5: 0.5}[ratio]
    run = run_job(ratio, prefetch, duration, reshard)
    assert run["n_errors"] == 0, run["errors"]
    assert len(_ns3_ms(run)) >= 5
    n, a = _report(run, f"R={ratio} prefetch {prefetch} reshard {reshard}")
    assert n == pytest.approx(a, rel=0.02)


@needs_ns3
def test_a_run_through_the_harness():
    """The whole run path: the recipe, the tables, summary.json's training part."""
    from harness.engine.simulation import execute
    from harness.engine.planning import plan

    result = execute(plan(_load("training.ratio=2", "training.prefetch_depth=1",
                                "run.duration=0.3", "run.warmup=0.05", "run.cooldown=0")),
                     progress=False, quiet=True)
    summary = result.summary["training"]
    assert summary["architecture"] == "sharded"
    assert summary["socket_errors"] == ""
    assert len(result.iterations) >= 2 * N
    assert result.transfers["traffic_class"].notna().all()


@needs_ns3
def test_a_group_travels_in_its_lowest_layers_class_and_slowdowns_stretch_compute():
    from harness.engine.simulation import execute
    from harness.engine.planning import plan

    p = plan(_load("training.ratio=2", "training.priority=\"low\"",
                   'training.layer_classes={ high = "0-23" }',
                   "training.slowdowns=[{ worker = 1, start = 0.1, end = 0.2, factor = 3.0 }]",
                   "run.duration=0.3", "run.warmup=0", "run.cooldown=0"))
    result = execute(p, progress=False, quiet=True)
    assert result.summary["training"]["socket_errors"] == ""
    tr = result.transfers
    groups = {g.index: g for g in p.job.groups}
    for group, cls in tr.groupby("group").traffic_class.agg(set).items():
        assert cls == {"high" if groups[group].first <= 23 else "low"}, (group, cls)
    assert set(tr.traffic_class) == {"high", "low"}
    # worker 1's layers computing wholly inside the slow period take 3 times as long
    c = result.compute.assign(ms=lambda t: (t.end_ns - t.start_ns) / 1e6)
    inside = c[(c.start_ns >= 0.1e9) & (c.end_ns <= 0.2e9)]
    prof = p.job.profile
    want = [3 * (prof.fp_ms if ph == "fp" else prof.bp_ms)[layer]
            for layer, ph in zip(inside.layer, inside.phase)]
    slow = inside.worker == 1
    assert slow.sum() > 10
    assert np.asarray(inside.ms[slow]) == pytest.approx(np.asarray(want)[slow.to_numpy()],
                                                        abs=1e-5)
    assert np.asarray(inside.ms[~slow]) == pytest.approx(np.asarray(want)[~slow.to_numpy()] / 3,
                                                         abs=1e-5)


@needs_ns3
def test_next_to_a_ring_job(tmp_path):
    """Two jobs, a ring and a sharded one, on their own hosts of one switch."""
    from harness.engine.simulation import execute
    from harness.engine.planning import plan

    toml = tmp_path / "mixed.toml"
    toml.write_text("""name = "mixed"
[run]
duration = 0.3
warmup = 0.05
cooldown = 0
[topology]
hosts = 4
link_rate = "1Gbps"
[background]
enabled = false
[[training]]
name = "ring"
profile = "resnet50-like-2MB"
workers = 2
ratio = 2.0
[[training]]
name = "fsdp"
architecture = "sharded"
prefetch_depth = 1
profile = "resnet50-like-2MB"
workers = 2
ratio = 2.0
""")
    p = plan(config.load_scenario(toml))
    assert [j.config.architecture for j in p.all_jobs] == ["ring", "sharded"]
    result = execute(p, progress=False, quiet=True)
    jobs = {j["name"]: j for j in result.summary["jobs"]}
    for name in ("ring", "fsdp"):
        assert jobs[name]["socket_errors"] == ""
        assert jobs[name]["iterations"] >= 3
    # alone on its own hosts, each job runs near its no-contention iteration
    assert jobs["fsdp"]["slowdown_vs_ideal"] == pytest.approx(1.0, abs=0.1)
