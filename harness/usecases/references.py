"""The reference suite: each check runs the harness's own scenarios
(workloads/references/*.toml, in ns-3) and compares what they measure with
a published result (harness.analysis.references), one row per quantity:
{reference, source, point, quantity, expected, measured, low, high,
tolerance, within, command}. The checks, their sources, scenarios,
parameter points and tolerances are data: workloads/references/references.toml.

`within` is True where the measured interval contains the expected value
or lies inside its tolerance band, False where it lies wholly outside the
band, None where the interval straddles the band's edge (undecided).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import tomllib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from harness.analysis import references as ref
from harness.config.paths import WORKLOADS_DIR
from harness.config.scenario import apply_values, read_scenario_dict, scenario_from_dict

REFERENCES_DIR = WORKLOADS_DIR / "references"
REGISTRY = REFERENCES_DIR / "references.toml"
#: Bytes on the wire of a UDP packet besides its payload (PPP, IP, UDP).
UDP_OVERHEAD = 30
#: And of a TCP segment (PPP, IP, TCP with timestamps): an ACK's whole size.
TCP_HEADERS = 54


@dataclass(frozen=True)
class Check:
    """One entry of references.toml."""

    name: str
    reference: str
    source: str
    scenario: str
    tolerance: float
    points: tuple[dict, ...]
    cheap_points: tuple[dict, ...] = ()
    tolerance_unit: str = "relative"
    settings: dict = field(default_factory=dict)

    def command(self, cheap: bool = False) -> str:
        return (f"python -m bench --only references --reference {self.name}"
                + (" --cheap" if cheap else ""))


def checks() -> dict[str, Check]:
    """The checks of references.toml by name, in its order."""
    data = tomllib.loads(REGISTRY.read_text())
    out = {}
    for c in data["check"]:
        known = {"name", "reference", "source", "scenario", "tolerance", "points",
                 "cheap_points", "tolerance_unit"}
        out[c["name"]] = Check(**{k: (tuple(v) if isinstance(v, list) else v)
                                  for k, v in c.items() if k in known},
                               settings={k: v for k, v in c.items() if k not in known})
    return out


def check_digest(check: Check) -> str:
    """What decides a check's rows besides the code: its entry of
    references.toml and its scenario file made into a scenario with today's
    defaults (that scenario's digest). A kept check whose digest differs is
    stale (`harness findings check`)."""
    data = read_scenario_dict(REFERENCES_DIR / f"{check.scenario}.toml")
    blob = json.dumps({"check": dataclasses.asdict(check),
                       "scenario": scenario_from_dict(data).digest()},
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def simulate(check: Check, values: dict[str, Any], cheap: bool = False):
    """Run the check's scenario with `values` (dotted key -> value) in ns-3;
    cheap: for the check's `cheap_duration` simulated seconds, if it has one."""
    from harness.engine import planning, simulation

    if cheap and "cheap_duration" in check.settings:
        values = {**values, "run.duration": check.settings["cheap_duration"]}
    data = read_scenario_dict(REFERENCES_DIR / f"{check.scenario}.toml")
    data = apply_values(data, [(k.split("."), v) for k, v in values.items()])
    return simulation.execute(planning.plan(scenario_from_dict(data)), quiet=True)


def _row(check: Check, point: dict, quantity: str, expected: float, est: ref.Estimate,
         cheap: bool, note: str = "", tolerance: float | None = None,
         unit: str | None = None) -> dict:
    """One compared quantity; `tolerance` and `unit` where the quantity has
    its own (else the check's)."""
    tolerance = check.tolerance if tolerance is None else tolerance
    unit = check.tolerance_unit if unit is None else unit
    if unit == "relative":
        within = est.within(expected, tolerance)
    else:   # an absolute band: the interval within expected +- tolerance
        lo, hi = expected - tolerance, expected + tolerance
        within = (True if lo <= est.low and est.high <= hi else
                  False if est.high < lo or est.low > hi else None)
    return {"check": check.name, "reference": check.reference, "source": check.source,
            "point": ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}"
                               for k, v in point.items()),
            "quantity": quantity, "expected": float(expected), "measured": est.value,
            "interval": [est.low, est.high], "samples": est.samples,
            "tolerance": tolerance, "tolerance_unit": unit,
            "within": within, "note": note, "command": check.command(cheap)}


def _base_rtt(links, mss: int) -> float:
    """A TCP path's round trip without queues: each link's delay both ways,
    a full segment's time on each link one way and an ACK's the other."""
    return (2 * sum(l.delay_s for l in links)
            + sum((mss + TCP_HEADERS) * 8 / l.rate_bps for l in links)
            + sum(TCP_HEADERS * 8 / l.rate_bps for l in links))


# ---------------------------------------------------------------- the checks

def dynamic_thresholds(check: Check, point: dict, cheap: bool) -> list[dict]:
    """N bands of one port saturated (two CBR streams each into one host at
    1.86 x its link under DRR) share a dynamic pool of B packets, against
    the fluid steady state alpha B / (1 + N alpha). A discrete queue served
    in turn moves around that value: measured is the backlog arriving
    packets found (mean over the bands), the interval runs from the lowest
    such mean to the largest backlog any band reached, and the check holds
    where the fluid value lies within one packet of that range."""
    n, alpha = int(point["n"]), float(point["alpha"])
    data = read_scenario_dict(REFERENCES_DIR / f"{check.scenario}.toml")
    pool = data["network"]["buffer"]["size"]
    payload = check.settings.get("packet_size", 1000)
    share = 0.9e9 / n * payload / (payload + UDP_OVERHEAD)   # per class and source
    services = [{"name": f"h{h}c{c}", "kind": "stream", "class": f"c{c}", "source": h,
                 "destination": 2, "bitrate": share, "packet_size": payload}
                for c in range(n) for h in (0, 1)]
    run = simulate(check, {"network.bands": max(2, n),
                           "network.classes": {f"c{c}": c for c in range(max(2, n))},
                           "network.buffer.alpha": alpha, "service": services}, cheap)
    q = run.queues
    port = q[(q["to_node"] == 2) & (q["from_node"] != 2) & (q["band"] < n)]
    seen = port["mean_backlog_packets"].to_numpy(dtype=float)
    est = ref.Estimate(float(seen.mean()), float(seen.min()),
                       float(port["max_backlog_packets"].max()), len(port))
    expected = ref.dynamic_threshold_queue(alpha, n, pool)
    row = _row(check, point, "backlog per band (packets)", expected, est, cheap)
    row["within"] = bool(est.low - check.tolerance <= expected <= est.high + check.tolerance)
    return [row]


def strict_priority(check: Check, point: dict, cheap: bool) -> list[dict]:
    """Three classes of Poisson packets (one size each) at host 0's strict
    priority egress, at total load `load` split evenly: each class's mean
    queueing delay (one-way delay less the no-contention delay of its size)
    against Cobham's W_k, with a batch-means interval.

    And what explains the difference, packet by packet: the run's own
    arrivals put through Cobham's queue (ref.priority_queue_waits) give
    each class's wait where the next packet is chosen when the wire frees,
    and, with one packet committed ahead of the wire (the NetDevice's
    transmit queue of one packet), the wait every packet must have had in
    ns-3; the second is judged to within a nanosecond (ns-3's serialisation
    times are whole nanoseconds)."""
    data = read_scenario_dict(REFERENCES_DIR / f"{check.scenario}.toml")
    link_bps = 1e9
    sizes = [s["packet_size"] for s in data["service"]]
    wire_s = np.array([(p + UDP_OVERHEAD) * 8 / link_bps for p in sizes])
    rates = float(point["load"]) / len(sizes) / wire_s                 # packets/s per class
    services = [{**s, "bitrate": float(r * p * 8)} for s, r, p in
                zip(data["service"], rates, sizes)]
    run = simulate(check, {"service": services}, cheap)
    waits = ref.cobham_waits(list(rates), list(wire_s), list(wire_s ** 2))
    # the path alone: the sender's link, then the switch's 100 Gbit/s one, each
    # serialisation in whole nanoseconds as ns-3 keeps time
    delays = {s.name: sum(round((s.packet_bytes + UDP_OVERHEAD) * 8 / rate * 1e9) * 1e-9
                          for rate in (link_bps, 100e9)) + 2 * 10e-6
              for s in run.plan.services}
    names = [s["name"] for s in services]
    # every packet the run delivered (before the window too: they queue ahead of it), by send time
    packets = run.streams.sort_values("sent_ns", kind="stable")
    klass = packets["service_name"].map({n: k for k, n in enumerate(names)}).to_numpy()
    ns = packets["sent_ns"].to_numpy()
    sent = ns * 1e-9
    waited = (packets["delay_s"] - packets["service_name"].map(delays)).to_numpy()
    cobham_queue = ref.priority_queue_waits(sent, klass, wire_s[klass], committed=0)
    committed = ref.priority_queue_waits(sent, klass, wire_s[klass], committed=1)
    measured = packets["measured"].to_numpy()
    # Packets sent in the same nanosecond reach the queue in an order the
    # table does not keep (ns-3's event order), and the order decides every
    # later wait until the link next goes idle: the per-packet comparison
    # leaves out such busy periods (a few in 10^4 packets); the means keep them.
    ends = np.maximum.accumulate(sent + committed + wire_s[klass])
    period = np.cumsum(np.concatenate([[True], sent[1:] >= ends[:-1]]))
    tie = np.concatenate([[False], ns[1:] == ns[:-1]])
    tied = np.isin(period, period[tie])
    rows = []
    for k, (s, expected) in enumerate(zip(services, waits)):
        mine = measured & (klass == k)
        note = (f"these arrivals through Cobham's queue: {cobham_queue[mine].mean():.4g} s "
                f"(the sample's own departure from W_k); with one packet committed ahead of "
                f"the wire, as ns-3's transmit queue holds it: {committed[mine].mean():.4g} s")
        rows.append(_row(check, point, f"class {s['name']}: mean wait (s)", expected,
                         ref.batch_means(waited[mine]), cheap, note))
        compared = mine & ~tied
        gap = waited[compared] - committed[compared]
        rows.append(_row(check, point, f"class {s['name']}: each packet's wait less the "
                         "one-committed queue's (s)", 0.0,
                         ref.Estimate(float(gap.mean()), float(gap.min()), float(gap.max()),
                                      int(compared.sum())), cheap,
                         f"the range over every packet, not an interval; {int(compared.sum())} "
                         f"packets ({int((mine & tied).sum())} left out: in a busy period "
                         "where two packets were sent in the same nanosecond)", tolerance=1e-9, unit="s"))
    return rows


def processor_sharing(check: Check, point: dict, cheap: bool) -> list[dict]:
    """Web-search flows between two hosts at load rho each way: the large
    flows' mean slowdown against M/G/1-PS's 1 / (1 - rho), with a t interval
    over the flows; the small flows' reported beside it. The slowdown is
    the FCT over the flow's time alone on the wire (payload and headers at
    the link's rate), and rho counts what the bottleneck carries: the
    flows' headers and the other direction's ACKs (one per two segments)
    besides the payload the background's `load` offers.

    Where the check's `without_loss` names other settings (DCTCP marking a
    short queue), the same flows run again under them and their slowdowns
    are reported beside, with each run's dropped packets: whether the
    departure comes from TCP's losses (not in the cheap run)."""
    from harness.traffic.services import TCP_FRAME_OVERHEAD

    load = float(point["load"])
    run = simulate(check, {"background.load": load}, cheap)
    mss = run.plan.scenario.tcp.segment_size
    rho = load * (1 + TCP_FRAME_OVERHEAD / mss + TCP_FRAME_OVERHEAD / (2 * mss))
    expected = ref.ps_slowdown(rho)
    large, small, unfinished, dropped = _ps_slowdowns(check, run)
    note = (f"rho on the wire {rho:.3f} (load {load:g} of payload, its headers and the reverse "
            f"ACKs); TCP's minimum RTO {1.5 * run.plan.worst_rtt * 1e3:.0f} ms (1.5 x the "
            f"worst-case round trip through full buffers); {dropped:,} packets dropped"
            + (f"; {unfinished} measured flows unfinished" if unfinished else ""))
    rows = [_row(check, point, "large flows: mean slowdown", expected, large, cheap, note),
            _reported(check, point, "small flows: mean slowdown (reported)", expected, small,
                      cheap, "PS ignores round trips and slow start, which dominate small "
                             "flows")]
    other = check.settings.get("without_loss")
    if other and not cheap:
        again = simulate(check, {"background.load": load, **other}, cheap)
        large, small, unfinished, dropped = _ps_slowdowns(check, again)
        setting = ", ".join(f"{k} = {v}" for k, v in other.items())
        note = (f"the same flows with {setting}: {dropped:,} packets dropped"
                + (f"; {unfinished} measured flows unfinished" if unfinished else ""))
        rows += [_reported(check, point, "large flows: mean slowdown, few losses (reported)",
                           expected, large, cheap, note),
                 _reported(check, point, "small flows: mean slowdown, few losses (reported)",
                           expected, small, cheap, note)]
    return rows


def _reported(check: Check, point: dict, quantity: str, expected: float,
              est: ref.Estimate, cheap: bool, note: str) -> dict:
    """A row shown beside a check and not judged (no tolerance)."""
    return {**_row(check, point, quantity, expected, est, cheap, note),
            "within": None, "tolerance": None}


def _ps_slowdowns(check: Check, run) -> tuple[ref.Estimate, ref.Estimate, int, int]:
    """The large and small measured flows' mean slowdowns of a run (their t
    intervals), its measured flows left unfinished and its dropped packets."""
    from harness.traffic.services import tcp_wire_bytes

    sc = run.plan.scenario
    k, mss = sc.scale, sc.tcp.segment_size
    link_bps = run.plan.topology.links[0].rate_bps
    f = run.flows[run.flows["measured"]]
    done = f[f["completed"]]
    wire_s = np.array([tcp_wire_bytes(int(x), mss) for x in done["size"]]) * 8 / link_bps
    slowdown = done["fct_s"].to_numpy() / wire_s
    size = done["size"].to_numpy() * k
    return (ref.t_interval(slowdown[size >= check.settings["large_bytes"]]),
            ref.t_interval(slowdown[size <= check.settings["small_bytes"]]),
            int((~f["completed"]).sum()), int(run.queues["dropped_packets"].sum()))


def mathis(check: Check, point: dict, cheap: bool) -> list[dict]:
    """One NewReno flow, loss rate p on its data: goodput over the window
    against Mathis's (MSS / RTT) C / sqrt(p), RTT the path's base round
    trip, C = sqrt(3 / (2 b)) for ns-3's receiver, which acknowledges every
    b-th segment (the check's `segments_per_ack`). One flow gives one goodput; its interval is the exact 95 %
    interval of the loss count the window holds (n = packets x p), carried
    to the rate as the model does (rate ~ 1 / sqrt(losses))."""
    p = float(point["p"])
    duration = check.settings.get("durations", {}).get(repr(p), None)
    values: dict[str, Any] = {"network.loss.rate": p}
    if duration:
        values["run.duration"] = duration
    run = simulate(check, values)
    sc = run.plan.scenario
    mss = sc.tcp.segment_size
    rtt = _base_rtt(run.plan.topology.links, mss)
    goodput = run.summary["services"]["bulk"]["goodput_bps"]
    window = run.summary["window_s"][1] - run.summary["window_s"][0]
    packets = goodput * window / (8 * mss)
    losses = max(1.0, packets * p)                        # expected in the window
    lo, hi = ref.poisson_count_interval(losses)
    # the rate goes as 1 / sqrt(p): the losses' relative error, halved
    est = ref.Estimate(goodput, goodput * math.sqrt(losses / hi), goodput * math.sqrt(
        losses / lo), int(losses))
    b = int(check.settings.get("segments_per_ack", 1))
    expected = ref.mathis_throughput(mss, rtt, p, b)
    note = (f"base RTT {rtt * 1e3:.3f} ms; ~{losses:.0f} losses in the window; C = sqrt(3/{2 * b})"
            f" (b = {b}); with sqrt(3/2) the expected value would be "
            f"{ref.mathis_throughput(mss, rtt, p):.4g} bit/s")
    return [_row(check, point, "goodput (bit/s)", expected, est, cheap, note)]


def dctcp(check: Check, point: dict, cheap: bool) -> list[dict]:
    """N long-lived DCTCP flows, one from each of hosts 0..N-1, to host N:
    the backlog of the switch's egress towards host N, sampled every 10 us
    over the measurement window (run.queue_samples), cut into its sawtooth's
    cycles (harness.analysis.references.sawtooth_cycles). Against Alizadeh
    et al.'s analysis: the mean of the cycles' peaks against K + N (within
    `max_tolerance_packets`), their peak-to-trough against A, their length
    against T_C (both within the check's relative tolerance), each with a
    batch-means interval over the cycles; and the bottleneck's utilisation
    over the window against 1 (within `utilisation_tolerance`, an interval
    over its utilisation intervals). C x RTT is the link's rate times the
    path's base round trip (propagation, a data packet's and an ACK's time
    on both links) in full packets on the wire. T_C counts round trips: a
    flow's window grows one segment per round trip it sees, which includes
    the queue, so the measured period is divided by the base round trip
    plus the mean backlog's time on the link (each row's note gives it in
    base round trips too, and the rise alone, trough to peak). The trough
    is reported beside (K + N - A). A queue that does not oscillate (no
    cycle found) has its maximum and range read over blocks of the
    expected period instead, and no period: that row fails."""
    n = int(point["n"])
    data = read_scenario_dict(REFERENCES_DIR / f"{check.scenario}.toml")
    k = int(data["network"]["ecn_threshold"])
    samples = dict(data["run"]["queue_samples"], hosts=[n])
    values: dict[str, Any] = {
        "topology.hosts": n + 1, "run.queue_samples": samples,
        "service": [{"name": "bulk", "kind": "bulk", "sources": list(range(n)),
                     "destination": n}]}
    if cheap:
        values["run.warmup"] = check.settings["cheap_warmup"]
    run = simulate(check, values, cheap)
    sc = run.plan.scenario
    wire = sc.tcp.segment_size + TCP_HEADERS
    links = [run.plan.topology.host_link(0), run.plan.topology.host_link(n)]
    rate = links[1].rate_bps
    rtt = _base_rtt(links, sc.tcp.segment_size)
    bdp = ref.bdp_packets(rate, rtt, wire)
    expected = ref.dctcp_queue(n, bdp, k)
    q = run.queue_samples
    q = q[(q["to_node"] == n) & (q["band"] == q["band"].min())].sort_values("time_s")
    times, backlog = q["time_s"].to_numpy(), q["backlog_packets"].to_numpy()
    cycles = ref.sawtooth_cycles(times, backlog)
    mean_q = float(backlog.mean())
    seen_rtt = rtt + mean_q * wire * 8 / rate    # the round trip a packet saw, on average
    window = run.summary["window_s"]
    note = (f"C x RTT = {bdp:.1f} packets of {wire} B (base RTT {rtt * 1e6:.0f} us), K = {k} "
            f"(the guideline K > C x RTT / 7 = {expected['k_guideline_packets']:.1f}); "
            f"{len(cycles)} cycles in {window[1] - window[0]:g} s")
    peaks, troughs, period, more, period_note = _sawtooth(
        cycles, times, backlog, expected, n, rtt, seen_rtt, mean_q)
    note += more
    u, interval = _utilisation_towards(run, n, window)
    rows = [
        _row(check, point, "queue maximum (packets)", expected["max_packets"],
             ref.cycle_estimate(peaks), cheap, note,
             check.settings["max_tolerance_packets"], "packets"),
        _row(check, point, "amplitude (packets)", expected["amplitude_packets"],
             ref.cycle_estimate(peaks - troughs), cheap,
             f"median {np.median(peaks - troughs):g}"),
        _row(check, point, "period (round trips)", expected["period_rtts"], period, cheap,
             period_note),
        _row(check, point, "bottleneck utilisation", 1.0, ref.cycle_estimate(u.to_numpy()),
             cheap, f"{len(u)} intervals of {interval * 1e3:g} ms",
             check.settings["utilisation_tolerance"], "relative"),
    ]
    if len(cycles) < 3:
        rows[2]["within"] = False   # the analysis's sawtooth is not there
    trough = _row(check, point, "queue minimum (packets, reported)",
                  expected["max_packets"] - expected["amplitude_packets"],
                  ref.cycle_estimate(troughs), cheap, f"median {np.median(troughs):g}")
    return rows + [{**trough, "within": None, "tolerance": None}]


def _sawtooth(cycles, times, backlog, expected: dict, n: int, rtt: float, seen_rtt: float,
              mean_q: float) -> tuple:
    """(peaks, troughs, period estimate, note, period note) of a DCTCP queue:
    its sawtooth's cycles where there are three or more, else the range over
    blocks of the expected cycle and no period."""
    if len(cycles) >= 3:
        period = ref.cycle_estimate(cycles.period_s / seen_rtt)
        period_note = (f"round trip {seen_rtt * 1e6:.0f} us (base {rtt * 1e6:.0f} us and the "
                       f"mean backlog, {mean_q:.1f} packets); in base round trips the period "
                       f"is {cycles.period_s.mean() / rtt:.3g}; the rise alone, trough to peak, "
                       f"{cycles.rise_s.mean() / seen_rtt:.3g} round trips (measured amplitude "
                       f"/ N = {cycles.amplitude.mean() / n:.3g})")
        return cycles.peak, cycles.trough, period, "", period_note
    peaks, troughs = ref.block_extremes(times, backlog, expected["period_rtts"] * seen_rtt)
    lo, hi = np.percentile(backlog, [5, 95])
    note = (f": the queue holds at {mean_q:.1f} packets (5-95 % {lo:g}-{hi:g}); maximum "
            f"and amplitude over {len(peaks)} blocks of the expected period")
    return (peaks, troughs, ref.Estimate(math.nan, math.nan, math.nan, 0), note,
            "no sawtooth, no period")


def _utilisation_towards(run, n: int, window) -> tuple:
    """(utilisation per interval of the egress towards host n over the window, the interval)."""
    u = run.utilization
    interval = run.plan.run.utilization_interval
    u = u[(u["to_node"] == n) & (u["t_s"] >= window[0] - 1e-12)
          & (u["t_s"] + interval <= window[1] + 1e-12)].groupby("t_s")["utilization"].sum()
    return u, interval


def ecmp(check: Check, point: dict, cheap: bool) -> list[dict]:
    """Leaf 0's uplink for each flow of many trials of k flows (host i of
    leaf 0 to host i of leaf 1, each trial the next source port), read from
    the routing objects of the scenario built in ns-3: the fraction of
    trials whose flows all take different uplinks, and the distribution of
    the busiest uplink's flow count, against balls into bins, each with its
    exact binomial interval."""
    from harness.engine import ecmp_probe, planning

    k, n = int(point["flows"]), int(point["uplinks"])
    data = read_scenario_dict(REFERENCES_DIR / f"{check.scenario}.toml")
    p = planning.plan(scenario_from_dict(apply_values(data, [
        (["topology", "spines"], n), (["topology", "hosts_per_leaf"], k)])))
    trials = int(check.settings["trials"])
    first, port = int(check.settings["first_port"]), int(check.settings["destination_port"])
    flows = [(i, k + i, first + t, port) for t in range(trials) for i in range(k)]
    leaf = p.topology.host_link(0).b
    chosen = np.array(ecmp_probe.output_interfaces(p, leaf, flows)).reshape(trials, k)
    busiest = np.array([np.bincount(row).max() for row in chosen])
    expected = ref.busiest_bin_cdf(k, n)
    rows = [_row(check, point, "all flows on distinct uplinks (fraction)",
                 ref.ecmp_all_distinct(k, n), ref.proportion(int((busiest == 1).sum()), trials),
                 cheap, f"{trials} trials")]
    for m in (2, 3):
        rows.append(_row(check, point, f"busiest uplink carries <= {m} flows (fraction)",
                         expected[m], ref.proportion(int((busiest <= m).sum()), trials), cheap))
    return rows


def dcqcn(check: Check, point: dict, cheap: bool) -> list[dict]:
    """N long-lived RDMA flows under DCQCN, one from each of hosts 0..N-1,
    to host N (a bulk service over RDMA): the bottleneck's backlog sampled
    every 2 us over the window (a batch-means interval) against the fluid
    model's fixed point (ref.dcqcn_fixed_point, the scenario's constants and
    profile, Kmax or Pmax as the point sets them); the bottleneck's
    utilisation against 1 (an interval over its utilisation intervals) and
    the flows' Jain index against 1: N long-lived flows share it fairly
    (Zhu et al., SIGCOMM 2015). Beside them, reported: the marking probability the
    samples' queue gives on the profile, against p*; each note gives the
    share of samples with the queue empty and the bottleneck's payload
    rate, where a departure shows."""
    from harness.network import pfc, rdma

    n = int(point["n"])
    data = read_scenario_dict(REFERENCES_DIR / f"{check.scenario}.toml")
    profile = dict(data["network"]["ecn_profile"])
    profile.update({k: point[k] for k in ("kmax", "pmax") if k in point})
    samples = dict(data["run"]["queue_samples"], hosts=[n])
    run = simulate(check, {
        "topology.hosts": n + 1, "run.queue_samples": samples, "network.ecn_profile": profile,
        "service": [{**data["service"][0], "sources": list(range(n)), "destination": n}]}, cheap)
    plan = run.plan
    cfg, mtu = plan.scenario.rdma, plan.scenario.network.mtu
    link = plan.topology.host_link(n)
    wire = mtu + pfc.PPP_BYTES                       # a full packet on the wire
    payload_share = rdma.payload_share(mtu)
    marking = plan.network.ecn_profile
    constants = ref.DcqcnConstants(
        cnp_interval_s=cfg.cnp_interval, alpha_period_s=cfg.alpha_period,
        increase_period_s=cfg.rate_increase_period, byte_counter=cfg.byte_counter,
        fast_recovery=cfg.fast_recovery, additive_increase_bps=cfg.additive_increase)
    fixed = ref.dcqcn_fixed_point(link.rate_bps, n, wire, marking.kmin, marking.kmax,
                                  marking.pmax, constants)
    q = run.queue_samples
    backlog = q[(q["to_node"] == n) & (q["band"] == q["band"].min())]["backlog_bytes"]
    backlog = backlog.to_numpy(dtype=float)
    flows = run.summary["services"][data["service"][0]["name"]]
    rates = np.array(flows["flow_goodput_bps"])
    empty = float((backlog == 0).mean())
    note = (f"p* = {fixed['p']:.4g}, alpha* = {fixed['alpha']:.3f}; the queue empty in "
            f"{100 * empty:.1f} % of {len(backlog):,} samples; the bottleneck carried "
            f"{flows['goodput_bps'] / (link.rate_bps * payload_share):.3f} of its payload rate")
    seen_p = np.clip((backlog - marking.kmin) / (marking.kmax - marking.kmin), 0, None)
    seen_p = np.where(backlog > marking.kmax, 1.0, marking.pmax * seen_p)
    jain = float(flows["jain_fairness"])
    u, interval = _utilisation_towards(run, n, run.summary["window_s"])
    rows = [
        _row(check, point, "queue at the fixed point (bytes)", fixed["queue_bytes"],
             ref.batch_means(backlog), cheap, note),
        _row(check, point, "bottleneck utilisation", 1.0, ref.cycle_estimate(u.to_numpy()),
             cheap, f"{len(u)} intervals of {interval * 1e3:g} ms",
             check.settings["utilisation_tolerance"], "relative"),
        _row(check, point, "Jain's fairness index", 1.0, ref.Estimate(jain, jain, jain, n),
             cheap, f"flows' goodput {', '.join(f'{r / 1e9:.2f}' for r in rates)} Gbit/s",
             check.settings["fairness_tolerance"], "relative"),
        _reported(check, point, "marking probability (reported)", fixed["p"],
                  ref.batch_means(seen_p), cheap, "the profile's probability at each sampled "
                  "queue, against the fixed point's p*")]
    return rows


def _lossless_drops(check: Check, point: dict, run, cheap: bool) -> dict:
    """The row every lossless check ends with: what the lossless classes
    dropped, anywhere in the run, against 0."""
    lost = float(run.summary["lossless"]["lossless_drops"])
    return _row(check, point, "lossless-class drops (packets)", 0.0,
                ref.Estimate(lost, lost, lost, 1), cheap, "every port of the run",
                tolerance=0.0, unit="packets")


def pfc_headroom(check: Check, point: dict, cheap: bool) -> list[dict]:
    """A line-rate incast into a lossless class (N RDMA flows that DCQCN
    never cuts, no profile marks them) on links of the point's delay: the
    most headroom any of the switch's ports used (PfcPort's MaxHeadroom),
    against the arithmetic (harness.network.pfc.headroom_bytes: 2 x delay x
    rate + 3 frames + the pause frame). That maximum is exactly the
    smallest headroom with zero loss: the headroom enters only where a
    packet would exceed it, so any headroom at or above it gives the same
    run and any below drops the packet that reaches it (tests/test_lossless.py
    shows both). The check holds where it lies between what the round trip
    brings at the rate the port fills (the line rate less its 1/N share of
    the egress, the least the arithmetic must cover) and the arithmetic
    (an upper bound); the interval is the range over the N ports. And no
    packet of the lossless class lost, anywhere."""
    from harness.network import pfc

    n = int(point["n"])
    run = simulate(check, {
        "topology.hosts": n + 1, "topology.link_delay": point["delay"],
        "service": [{**read_scenario_dict(REFERENCES_DIR / f"{check.scenario}.toml")["service"][0],
                     "sources": list(range(n)), "destination": n}]}, cheap)
    plan = run.plan
    link = plan.topology.host_link(0)
    switch = link.b
    mtu = plan.scenario.network.mtu
    bound = pfc.headroom_bytes(link.rate_bps, link.delay_s, mtu)
    round_trip = 2 * link.delay_s * link.rate_bps / 8 * mtu / (mtu + pfc.PPP_BYTES)   # as queued
    least = (1 - 1 / n) * round_trip
    ports = run.pfc[run.pfc["lossless"] & (run.pfc["from_node"] == switch)
                    & (run.pfc["to_node"] < n)]
    used = ports["max_headroom_bytes"].to_numpy(dtype=float)
    top = float(used.max())
    est = ref.Estimate(top, float(used.min()), top, len(used))
    row = _row(check, point, "smallest lossless headroom (bytes)", bound, est, cheap,
               f"the round trip's bytes 2 x delay x rate = {round_trip:,.0f} B as queued, "
               f"{least:,.0f} B at the rate a port fills with {n} sharing the egress; used "
               f"beyond the round trip: {top - round_trip:,.0f} B = "
               f"{(top - round_trip) / mtu:.2f} packets (the arithmetic allows 3 frames and "
               f"the pause frame); {int(ports['pause_frames_sent'].sum()):,} pause frames")
    row["within"] = bool(least <= top <= bound)
    return [row, _lossless_drops(check, point, run, cheap)]


def dcqcn_victim(check: Check, point: dict, cheap: bool) -> list[dict]:
    """The victim-flow experiment: an incast into host 4 (three flows from
    the other leaf, two from its own) beside a victim flow from host 3 to
    host 7 that shares only the leaf 0 uplink and the spine's link to leaf
    1 with it, all lossless, at the point's XOFF, with DCQCN's profile or
    PFC alone (`cc = "pfc"`: no profile, so no flow is ever cut).

    Expected with DCQCN, where its marks come before the pauses (XOFF at or
    above Kmax): the victim's max-min share, the leaf 0 uplink less the
    three remote incast flows' share of the congested port, C - 3 C / 5
    (payload). With PFC alone: the victim paused with the incast, at the
    rate of the remote incast flows whose pauses it shares (congestion
    spreading). Below, with DCQCN but XOFF under Kmax, the pauses come
    first: reported against the max-min share, not judged."""
    from harness.network import rdma

    pfc_alone = point.get("cc") == "pfc"
    values: dict[str, Any] = {"network.pfc.xoff": point["xoff"]}
    if pfc_alone:
        values["network.ecn_profile"] = None
    run = simulate(check, values, cheap)
    plan = run.plan
    mtu = plan.scenario.network.mtu
    payload_share = rdma.payload_share(mtu)
    link = plan.topology.host_link(7)
    services = run.summary["services"]
    incast = np.array(services["incast"]["flow_goodput_bps"])
    victim = float(services["victim"]["flow_goodput_bps"][0])
    remote = incast[:3]                     # the incast's flows from leaf 0 (hosts 0-2)
    fair = (link.rate_bps - 3 * link.rate_bps / 5) * payload_share
    s = run.summary["lossless"]
    kmax = plan.network.ecn_profile.kmax if plan.network.ecn_profile else None
    note = (f"incast flows {', '.join(f'{x / 1e9:.2f}' for x in incast)} Gbit/s (hosts 0-2, "
            f"5, 6); the most-paused egress paused {100 * s['max_pause_share']:.1f} % of the "
            f"window, pauses spread {s['pause_spread_hops']} hop(s); {s.get('cnps', 0):,} CNPs")
    est = ref.Estimate(victim, victim, victim, 1)
    if pfc_alone:
        row = _row(check, point, "victim goodput, PFC alone (bit/s)", float(remote.mean()), est,
                   cheap, note + f"; expected: the remote incast flows' mean, the victim's "
                   f"max-min share being {fair / 1e9:.2f} Gbit/s")
    else:
        row = _row(check, point, "victim goodput, DCQCN (bit/s)", fair, est, cheap,
                   note + f"; Kmax {kmax:,} B")
        if plan.network.pfc.static_xoff < kmax:
            row = {**row, "quantity": "victim goodput, DCQCN, XOFF below Kmax (reported)",
                   "within": None, "tolerance": None}
    return [row, _lossless_drops(check, point, run, cheap)]


#: Each check's function, by the name references.toml gives it.
CHECKS: dict[str, Callable[[Check, dict, bool], list[dict]]] = {
    "dynamic-thresholds": dynamic_thresholds,
    "strict-priority": strict_priority,
    "processor-sharing": processor_sharing,
    "mathis": mathis,
    "ecmp": ecmp,
    "dctcp": dctcp,
    "dcqcn": dcqcn,
    "pfc-headroom": pfc_headroom,
    "dcqcn-victim": dcqcn_victim,
}


def run_check(name: str, cheap: bool = False) -> list[dict]:
    """Every row of one check: its points (cheap: its cheap points, or all
    of them where it is cheap throughout)."""
    check = checks()[name]
    points = check.cheap_points or check.points if cheap else check.points
    return [row for point in points for row in CHECKS[name](check, point, cheap)]

