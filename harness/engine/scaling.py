"""Time-preserving scale-down of a scenario by a factor k (scenario key `scale`).

Every rate and every size is divided by k, every time is kept:

- link rates / k (every link of the topology);
- background flow sizes / k (the CDF's sizes), so a flow's serialisation time
  size / rate is the reference's; arrival rates (lambda, flows/s) unchanged,
  so the offered load and the flows per second are the reference's;
- model bytes / k: each layer's gradients, the M of the compute-to-network
  ratio, an explicit fusion buffer, the policy's byte parameters (partition,
  credit, chunk) and the aggregation chunk; compute times unchanged, so
  iteration times are the reference's;
- queue limits and ECN marking thresholds in packets / k (at least 1): a
  full band (a band at its threshold) drains in the same
  time, so queueing delays and the TCP timers derived from the worst-case RTT
  are the reference's (the timers are computed on the unscaled network).

What it cannot preserve, because packets keep their size (MTU 1500, 1380 B
segments): a flow of S bytes becomes ~k times fewer packets (a 10 KB flow is
8 packets at k = 1 and 1 packet at k = 10), so slow start takes fewer rounds
and the initial window (10 segments) covers k times more of each flow; a
packet's serialisation time is k times longer against unchanged propagation
delays, so the base RTT of a packet grows (at 1 Gbit/s a 1.5 KB frame takes
12 us per hop against 10 us of propagation); and header and ACK overheads are
a larger share of small flows. Windows are k times fewer packets against
the same round trips, so TCP's additive increase (one segment per round
trip) regrows a window k times faster in time after a loss: where training
and background share a band and lose packets, training recovers between
background bursts at scale k and not at k = 1 (measured at R = 2,
lambda = 23: docs/findings/validate.md); so scale k understates what
losses cost training (at R = 2, lambda = 23 in `same`, at R = 16,
lambda = 184 in `low`). Flow size classes (small <= 100 KB, ...) are
those of the reference sizes (simulated bytes x k). The `validate` sweep
measures what this costs in the map's metrics.
"""

from __future__ import annotations

import dataclasses

from harness.traffic import profiles, schedulers
from harness.traffic.background import FlowSizeCdf
from harness.config.scenario import BufferConfig, NetworkConfig, TrainingConfig
from harness.traffic.profiles import Profile
from harness.network.topology import Topology
from harness.training import architecture
from harness.training.common import scaled_bytes


def topology(topo: Topology, k: int) -> Topology:
    """Every link's rate / k."""
    if k == 1:
        return topo
    links = tuple(dataclasses.replace(link, rate_bps=link.rate_bps / k) for link in topo.links)
    return dataclasses.replace(topo, links=links, params={**topo.params, "scale": k})


def buffer(buf: BufferConfig | None, k: int, mtu: int) -> BufferConfig | None:
    """A buffer's size / k (packets: at least 1; bytes: at least one MTU)."""
    if buf is None or buf.size is None:
        return buf
    least = 1 if buf.unit == "packets" else mtu
    return buf.model_copy(update={"size": max(least, round(buf.size / k))})


def network(net: NetworkConfig, k: int) -> NetworkConfig:
    """Band limits, buffer sizes and ECN marking thresholds / k (rounded, at
    least 1 packet): the same queueing time."""
    if k == 1:
        return net
    k_ecn = net.ecn_threshold
    if isinstance(k_ecn, int):
        k_ecn = max(1, round(k_ecn / k))
    elif k_ecn is not None:
        k_ecn = {name: max(1, round(v / k)) for name, v in k_ecn.items()}
    return net.model_copy(update={
        "band_limit_packets": max(1, round(net.band_limit_packets / k)), "ecn_threshold": k_ecn,
        "buffer": buffer(net.buffer, k, net.mtu), "host_buffer": buffer(net.host_buffer, k, net.mtu),
        "ecn_profile": marking_profile(net.ecn_profile, k), "pfc": pfc(net.pfc, k, net.mtu)})


def marking_profile(profile, k: int):
    """A RED-like profile's kmin and kmax / k (at least 1 packet or byte, kmin below kmax)."""
    if profile is None:
        return None
    kmax = max(2, round(profile.kmax / k))
    out = profile.model_copy(update={"kmin": min(kmax - 1, max(1, round(profile.kmin / k))),
                                     "kmax": kmax})
    out._unit = profile.unit
    return out


def pfc(config, k: int, mtu: int):
    """PFC's byte thresholds / k: XOFF (given or its default) and a headroom
    given in bytes, at least one packet; XON's offset / k, at least 1 byte.
    An "auto" headroom is computed on the links as simulated (harness.network.pfc)."""
    if config is None:
        return None
    update = {"xon_offset": None if config.xon_offset is None else max(1, round(config.xon_offset / k))}
    if config.alpha is None:
        update["xoff"] = max(mtu, round(config.static_xoff / k))
    if config.headroom != "auto":
        update["headroom"] = max(mtu, round(config.headroom / k))
    return config.model_copy(update=update)


def cdf(dist: FlowSizeCdf, k: int) -> FlowSizeCdf:
    """Flow sizes / k (the probabilities, hence the draws, unchanged)."""
    if k == 1:
        return dist
    return dataclasses.replace(dist, sizes=tuple(s / k for s in dist.sizes))


def profile(model: Profile, k: int) -> Profile:
    """Each layer's bytes / k (rounded, at least 1); compute times unchanged."""
    return profiles.scaled(model, k)


def training(tr: TrainingConfig, k: int) -> TrainingConfig:
    """The job's byte quantities / k: M of the ratio and the policy's byte
    parameters, and its architecture's own (a ring's fusion buffer, a
    parameter server's aggregation chunk: Architecture.scaled)."""
    if k == 1:
        return tr
    update = {"model_bytes": scaled_bytes(tr.model_bytes, k),
              "scheduler": schedulers.scale_bytes(tr.policy, tr.scheduler, k),
              **architecture(tr.architecture).scaled(tr, k)}
    return tr.model_copy(update=update)
