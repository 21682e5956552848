"""The lossless fabric (issue 63): PFC (ns3-modules/network/pfc-port), RDMA
queue pairs with DCQCN (ns3-modules/rdma), RED-like ECN marking, in real
ns-3 runs on one 1 Gbit/s ToR; and their bad input, before anything runs."""

from __future__ import annotations

import importlib.util

import pandas as pd
import pytest

from harness.config.scenario import ConfigError, load_scenario
from harness.engine import planning, recipe
from harness.network import pfc
from harness.training import ring

needs_ns3 = pytest.mark.skipif(
    importlib.util.find_spec("cppyy") is None or importlib.util.find_spec("ns3") is None,
    reason="needs the ns3 wheel and cppyy")

# a PS job's push is a 4:1 incast into the shard's link (ps-small: 4 workers, 1 shard)
INCAST = ["background.enabled=false", "run.duration=0.4", "run.warmup=0.1", "run.cooldown=0.1",
          'training.transport="rdma"', 'training.priority="high"']
PFC_HIGH = ['network.pfc.classes=["high"]']
RING = ["background.enabled=false", "run.duration=0.5", "run.warmup=0.1", "run.cooldown=0.1",
        "training.enabled=true", "training.workers=2", 'training.profile="resnet50-like-2MB"',
        'training.transport="rdma"']


def _run(base: str, overrides: list[str]):
    from harness.engine import simulation

    return simulation.execute(planning.plan(load_scenario(base, overrides)), quiet=True)


def test_headroom_arithmetic():
    # 2 x 10 us x 1 Gbit/s = 2,500 B on the wire, 3 frames of 1,502 B, the 64 B pause frame
    assert pfc.headroom_bytes(1e9, 10e-6, 1500) == 2500 + 3 * 1502 + 64


@needs_ns3
def test_incast_into_a_lossless_class_pauses_upstream_and_loses_nothing():
    run = _run("ps-small", INCAST + PFC_HIGH)
    s = run.summary["lossless"]
    assert s["lossless_drops"] == 0
    q = run.queues
    assert q[q.band == 0]["dropped_packets"].sum() == 0
    ports = run.pfc[run.pfc.lossless]
    # the switch's ports from the four workers paused the workers' NICs, one hop
    worker_uplinks = ports[(ports.from_node < 4) & (ports.to_node == 8)]
    assert (worker_uplinks["paused_s"] > 0).all()
    assert (ports[(ports.from_node == 8) & (ports.to_node < 4)]["pause_frames_sent"] > 0).all()
    assert s["pause_spread_hops"] == 1
    # headroom used, never beyond what the arithmetic gives the port
    assert 0 < ports["max_headroom_bytes"].max() <= pfc.headroom_bytes(1e9, 10e-6, 1500)
    # nothing resent, and every byte acknowledged had arrived
    r = run.rdma
    assert r["retransmitted_packets"].sum() == 0 and r["go_backs"].sum() == 0
    for row in r[~r.accepted].itertuples():
        peer = r[(r.host == row.peer_host) & (r.peer_host == row.host)].iloc[0]
        assert row.bytes_acknowledged <= peer.bytes_received <= row.bytes_sent
        assert peer.bytes_received > 0
    assert run.summary["training"]["iterations"] > 0


@needs_ns3
def test_the_same_incast_without_pfc_loses_and_goes_back():
    run = _run("ps-small", INCAST + ["run.duration=1.0"])
    assert run.pfc is None
    q = run.queues
    assert q[q.band == 0]["dropped_packets"].sum() > 0
    assert run.rdma["go_backs"].sum() > 0 and run.rdma["retransmitted_packets"].sum() > 0
    assert len(run.iterations) > 0   # go-back-N recovers, slowly
    lossless = _run("ps-small", INCAST + PFC_HIGH + ["run.duration=1.0"])
    assert (lossless.iterations["iteration"].nunique()
            > run.iterations["iteration"].nunique())


@needs_ns3
def test_dcqcn_cuts_on_marks_and_shares_the_bottleneck():
    run = _run("ps-small", INCAST + PFC_HIGH + ['network.ecn_profile={kmin="5KB", kmax="200KB"}'])
    r = run.rdma
    senders = r[~r.accepted]
    assert (senders["cnps_received"] > 0).all() and (senders["rate_cuts"] > 0).all()
    assert r["cnps_sent"].sum() == r["cnps_received"].sum()
    assert run.queues["marked_packets"].sum() > 0
    sent = senders["bytes_sent"]
    assert sent.max() / sent.min() < 1.05   # four pushes through one link, alike
    assert run.summary["lossless"]["lossless_drops"] == 0


@needs_ns3
def test_rdma_ring_at_zero_load_matches_the_analytic_model():
    """At zero load a ring over RDMA runs at the line rate from its first
    packet (no slow start): every iteration within 2 % of the alpha-beta
    model with RoCEv2's headers (PPP 2 + IP 20 + UDP 8 + BTH 12 + ICRC 4 on
    1,456 B) and one frame of store-and-forward plus two propagation delays
    per step."""
    run = _run("default", RING)
    job = run.plan.all_jobs[0]
    it = run.iterations
    measured = it.groupby("iteration")["iteration_s"].mean().iloc[1:]
    model = ring.simulate(job.profile, 2, 1e9, iterations=len(measured) + 1,
                          payload_efficiency=1456 / 1502,
                          step_latency_s=2 * 10e-6 + 1502 * 8 / 1e9).iteration_ms[1:] / 1e3
    assert len(measured) >= 5
    assert abs(measured.mean() / model.mean() - 1) < 0.02
    assert run.rdma["retransmitted_packets"].sum() == 0


def test_a_scenario_without_the_fabric_writes_no_line_of_it():
    text = recipe.text(planning.plan(load_scenario("default")))
    assert "pfc " not in text and "rdma " not in text and "Mark" not in text


def test_the_fabric_in_the_recipe():
    text = recipe.text(planning.plan(load_scenario("default", RING + PFC_HIGH + [
        'network.ecn_profile={kmin="5KB", kmax="200KB", classes=["high"]}'])))
    lines = text.splitlines()
    ports = [line for line in lines if line.startswith("pfc ")]
    assert len(ports) == 8   # both ends of 4 links
    assert all("Generate=true" in p for p in ports if p.split()[3] == "4")   # the switch
    assert all("Generate=false" in p for p in ports if p.split()[3] != "4")  # the hosts
    assert lines.index(ports[-1]) < lines.index("assign")
    assert any("Lossless=true,false,false" in line and "MarkMax=200000B,0B,0B" in line
               for line in lines if line.startswith("queue-disc"))
    assert "job-attribute Transport ns3::RdmaSocketFactory" in lines
    assert "rdma 0 ns3::RdmaSocketFactory" in lines and "rdma 2 ns3::RdmaSocketFactory" not in lines


def test_scale_divides_the_fabric_sizes_and_rates():
    p = planning.plan(load_scenario("roce"))
    assert p.network.pfc.xoff == 20_000 and p.network.ecn_profile.kmax == 20_000
    text = recipe.text(p)
    assert "default ns3::Dcqcn::AdditiveIncrease 4000000bps" in text
    assert "default ns3::Dcqcn::ByteCounter 1000000" in text


@pytest.mark.parametrize("extra, field, words", [
    (['network.pfc.headroom="2KB"'], "network.pfc.headroom", "it needs 7,070 B"),
    (['network.pfc.xon_offset="40KB"'], "network.pfc.xon_offset", "never resume"),
    (['network.pfc.classes=["nope"]'], "network.pfc.classes", "allowed: high, low, normal"),
    (["network.pfc.classes=[]"], "network.pfc.classes", ""),
    (["network.pfc.alpha=1"], "network.pfc.alpha", 'pool = "switch"'),
    (["network.pfc.alpha=1", "network.pfc.xoff=9000"], "network.pfc.alpha", "not both"),
    (["network.pfc.quanta=0"], "network.pfc.quanta", ">= 1"),
    (['rdma.min_rate="2Gbps"'], "rdma.min_rate", "not below the slowest host link"),
    (['rdma.additive_increase="2Gbps"'], "rdma.additive_increase", "past the line rate"),
    (['rdma.cnp_class="x"'], "rdma.cnp_class", "unknown traffic class"),
    (["rdma.g=0"], "rdma.g", "> 0"),
    (["rdma.fast_recovery=0"], "rdma.fast_recovery", ">= 1"),
    (["rdma.bogus=1"], "rdma.bogus", ""),
    (['training.transport="roce"'], "training.transport", "tcp"),
    (["network.ecn_profile={kmin=10, kmax=5}"], "network.ecn_profile.kmax", "above kmin"),
    (['network.ecn_profile={kmin=10, kmax="5KB"}'], "network.ecn_profile.kmax", "one unit"),
    (["network.ecn_profile={kmin=1, kmax=5}", "network.ecn_threshold=3"],
     "network.ecn_profile", "not both"),
    (["network.ecn_profile={kmin=1, kmax=5, pmax=2}"], "network.ecn_profile.pmax", "<= 1"),
])
def test_bad_fabric_input_is_refused_before_anything_runs(extra, field, words):
    with pytest.raises(ConfigError) as e:
        planning.plan(load_scenario("default", RING + PFC_HIGH + extra))
    assert e.value.field == field
    assert words in str(e.value)


@needs_ns3
def test_the_most_headroom_used_is_the_smallest_that_loses_nothing(monkeypatch):
    """The reference suite's pfc-headroom check reads the most headroom a
    port used as the smallest headroom with zero loss: the same incast with
    exactly that headroom loses nothing, with one packet less it drops (the
    headroom below the arithmetic written into the recipe by hand, which
    the schema refuses)."""
    from harness.engine import simulation

    scenario = load_scenario("workloads/references/pfc-headroom.toml", ["run.duration=0.006"])
    first = simulation.execute(planning.plan(scenario), quiet=True)
    used = int(first.pfc["max_headroom_bytes"].max())
    assert used > 0 and first.summary["lossless"]["lossless_drops"] == 0
    text = recipe.text

    def run_with(headroom: int):
        monkeypatch.setattr(recipe, "text", lambda p: text(p).replace(
            "Headroom=1000000", f"Headroom={headroom}"))
        return simulation.execute(planning.plan(scenario), quiet=True).summary["lossless"]

    assert run_with(used)["lossless_drops"] == 0
    assert run_with(used - 1500)["lossless_drops"] > 0


@needs_ns3
def test_bulk_flows_over_rdma_share_one_bottleneck_and_mark_the_same_every_time():
    """A bulk service over RDMA (DCQCN on the profile's marks): the flows
    share the bottleneck fairly, nothing is resent, and the same scenario
    run twice in one process marks and cuts alike (each band's marking
    draws its own fixed stream, not ns-3's next automatic one)."""
    from harness.engine import simulation

    scenario = load_scenario("workloads/references/dcqcn.toml", ["run.duration=0.03"])
    runs = [simulation.execute(planning.plan(scenario), quiet=True) for _ in range(2)]
    s = runs[0].summary["services"]["flows"]
    assert s["flows"] == 4 and s["jain_fairness"] > 0.98
    assert s["goodput_bps"] > 0.95 * 40e9 * 1456 / 1502
    assert runs[0].rdma["cnps_received"].sum() > 0
    assert runs[0].rdma["retransmitted_packets"].sum() == 0
    pd.testing.assert_frame_equal(runs[0].rdma, runs[1].rdma)
    pd.testing.assert_frame_equal(runs[0].queue_samples, runs[1].queue_samples)
    line = next(l for l in recipe.text(runs[0].plan).splitlines() if l.startswith("queue-disc"))
    assert "MarkStream=" in line


@needs_ns3
def test_rdma_in_the_lossy_class_resends_what_was_lost_and_only_that():
    """Training's queue pairs in the background's lossy class: packets are
    dropped, queue pairs go back N, and every byte a sender saw acknowledged
    had reached its peer. (A packet sent again must carry the bytes it
    first carried, which the receiver may already hold: before, a go-back
    after the application had written more cut the packets anew, the
    receiver dropped the repeats by their numbers, bytes went missing and
    the ring waited for them forever.)"""
    run = _run("roce", ['training.priority="same"', "training.ratio=2", "background.rate=184",
                        "run.duration=1.5", "run.warmup=0.2", "run.cooldown=0.1"])
    r = run.rdma
    assert r["retransmitted_packets"].sum() > 0 and r["go_backs"].sum() > 0
    for row in r[~r.accepted].itertuples():
        peer = r[(r.host == row.peer_host) & (r.peer_host == row.host)].iloc[0]
        assert row.bytes_acknowledged <= peer.bytes_received <= row.bytes_sent
    assert len(run.iterations) > 0   # the ring goes round (an iteration is ~0.9 s here)


def test_lossless_columns_and_the_pause_share_change():
    """summary.parquet's columns of the fabric and the paired pause-share
    change (pure logic: two runs' pfc tables made by hand)."""
    from harness.analysis import lossless, run_changes
    from harness.analysis.tables import Run

    s = {"pause_s": {"high": 0.25, "low": 0.0}, "pause_frames": 7, "lossless_drops": 0,
         "cnps": 3, "lossy_drops": 11}
    assert lossless.flat_columns(s) == {"pause_s_high": 0.25, "pause_s_low": 0.0,
                                        "pause_frames": 7, "lossless_drops": 0, "cnps": 3,
                                        "lossy_drops": 11}
    assert lossless.flat_columns(None) == {}

    def run(paused: list[float]) -> Run:   # two egresses, a lossless band and a lossy one each
        rows = [{"link": link, "side": 0, "band": band, "lossless": band == 0,
                 "paused_s": paused[link] if band == 0 else 9.0}
                for link in (0, 1) for band in (0, 1)]
        return Run(pfc=pd.DataFrame(rows), summary={"window_s": [1.0, 3.0]})

    pairs = lossless.pause_share_pairs([run([0.2, 0.0])], [run([0.6, 1.0])])
    assert sorted(pairs.round(6)) == [0.2, 0.5]   # (0.6 - 0.2) / 2 and (1.0 - 0) / 2
    assert len(lossless.pause_share_pairs([Run(summary={"window_s": [0, 1]})],
                                          [run([0.1, 0.1])])) == 0
    # too few pairs for an interval from two egresses: an estimate without one
    iv = run_changes.pause_change([run([0.2, 0.0])], [run([0.6, 1.0])])["pause_share"]
    assert iv.change == pytest.approx(0.35) and iv.has_too_few


@needs_ns3
def test_a_lossless_run_exports_its_fabric_tables_described(tmp_path):
    import harness
    from harness.engine import simulation
    from harness.outputs import export as exporting

    run = _run("ps-small", INCAST + PFC_HIGH + ["run.duration=0.2", "run.warmup=0.05",
                                                "run.cooldown=0.05"])
    d = simulation.write_run_dir(run, tmp_path / "run")
    out = harness.export(d, tmp_path / "csv", format="csv")
    dictionary = pd.read_csv(out / exporting.DICTIONARY, keep_default_na=False)
    for name in ("pfc", "rdma"):
        table = pd.read_csv(out / f"{name}.csv")
        assert len(table) and list(dictionary[dictionary["table"] == name]["column"]) == \
            list(table.columns)
    summary = pd.read_csv(out / "summary.csv")
    assert summary["lossless_drops"].iloc[0] == 0 and summary["pause_frames"].iloc[0] > 0
    assert 0 < summary["max_pause_share"].iloc[0] <= 1   # pause time inside the window
    assert (dictionary["meaning"] != "(not described)").all(), \
        dictionary[dictionary["meaning"] == "(not described)"]


def test_the_profile_marks_only_where_its_egresses_say():
    def profiled(egresses: str) -> set[tuple[int, int]]:
        p = planning.plan(load_scenario("workloads/references/dcqcn-victim.toml",
                                        [f"network.ecn_profile.egresses={egresses}"]))
        return {(int(line.split()[3]), int(line.split()[4])) for line in
                recipe.text(p).splitlines()
                if line.startswith("queue-disc") and "MarkMax=" in line}

    # hosts h0..h7 are nodes 0..7, the leaves s0, s1 nodes 8, 9, the spine s2 node 10
    every = profiled('"all"')
    assert len(every) == 2 * 10   # 8 host links and 2 fabric links, both ways
    assert profiled('"fabric"') == {(8, 10), (10, 8), (9, 10), (10, 9)}
    assert profiled('"switches"') == {e for e in every if e[0] >= 8}
    assert profiled('"hosts"') == {e for e in every if e[0] < 8}
    assert profiled('[["s1", "h4"]]') == {(9, 4)}
    with pytest.raises(ConfigError, match=r"network.ecn_profile.egresses\[0\].*no link joins"):
        profiled('[["s0", "h4"]]')


@needs_ns3
def test_a_profile_on_one_egress_marks_there_alone():
    run = _run("workloads/references/dcqcn-victim.toml", [
        "run.duration=0.02", 'network.ecn_profile.egresses=[["s1", "h4"]]'])
    q = run.queues
    marked = q[q["marked_packets"] > 0]
    assert len(marked) and set(zip(marked["from_node"], marked["to_node"])) == {(9, 4)}
    assert run.rdma["cnps_sent"].sum() > 0
