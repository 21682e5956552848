"""TCP settings of the reference study, as ns-3 attribute defaults.

Timers scale with the worst-case RTT W of the network: every hop of the
longest host-to-host path with its egress buffer full (every band full under
per-band limits; the port's limit or pool under a shared buffer), both ways.
"""

from __future__ import annotations

from harness.config.scenario import CONGESTION_CONTROLS, NetworkConfig, TcpConfig
from harness.network.graph import Topology, distances_to
from harness.network.qdisc import port_buffer_packets
from harness.io.recipe_tokens import token

PPP_HEADER = 2
#: The headers of a TCP data segment as ns-3 sends it: IPv4 20, TCP 20 and the
#: timestamp option every socket of the harness negotiates (10, padded to 12).
#: SACK blocks ride on pure ACKs only, so a 1448-byte segment fills a 1500-byte MTU.
DATA_HEADER_BYTES = 52


def worst_case_rtt(topo: Topology, net: NetworkConfig, bands: int) -> float:
    """Seconds: 2 x sum over the longest path of (delay + (queue + 1) frames)."""
    frame_bits = (net.mtu + PPP_HEADER) * 8
    queue_packets = max(port_buffer_packets(net.buffer, net, bands),
                        port_buffer_packets(net.hosts_buffer, net, bands))
    slowest = min(link.rate_bps for link in topo.links)
    longest_delay = max(link.delay_s for link in topo.links)
    adj = topo.adjacency()
    hops = max(d for h in range(topo.n_hosts) for d in distances_to(topo, h, adj)[:topo.n_hosts]
               if d is not None)
    per_hop = longest_delay + (queue_packets + 1) * frame_bits / slowest
    return 2 * hops * per_hop


def _ns(seconds: float) -> str:
    return f"{max(1, round(seconds * 1e9))}ns"


def ecn_on(tcp: TcpConfig, net: NetworkConfig) -> bool:
    """tcp.ecn, or (left out) whether the queues mark; dctcp always."""
    if tcp.congestion_control == "dctcp":
        return True
    return net.marks_ecn if tcp.ecn is None else tcp.ecn


#: The timers scaled with the worst-case RTT W (tcp.timers = "network"):
#: attribute -> multiple of W.
TIMERS_OF_W = {
    "ns3::TcpSocket::ConnTimeout": 2.0,
    "ns3::TcpSocket::DelAckTimeout": 0.2,
    "ns3::TcpSocket::PersistTimeout": 4.0,
    "ns3::TcpSocketBase::MinRto": 1.5,
    "ns3::TcpSocketBase::MaxSegLifetime": 5.0,
    "ns3::RttEstimator::InitialEstimation": 2.0,
}


def attribute_defaults(tcp: TcpConfig, worst_rtt: float, ecn: bool = False) -> dict[str, str]:
    """ns-3 Config::SetDefault names -> values (strings, as ns-3 parses them).
    ecn: negotiate ECN (TcpSocketBase::UseEcn = On). tcp.timers "ns3": the
    timers (and the clock's granularity) left at ns-3's own defaults."""
    ours = tcp.timers == "network"

    def timer(name: str) -> str | None:   # TIMERS_OF_W's multiple of W, or ns-3's own
        if not ours:
            return None
        seconds = TIMERS_OF_W[name] * worst_rtt
        return repr(seconds) if name.endswith("MaxSegLifetime") else _ns(seconds)
    entries = (   # in the recipe's (and config.json's) order
        ("ns3::TcpSocketBase::UseEcn", "On" if ecn else None),
        ("ns3::TcpL4Protocol::SocketType", CONGESTION_CONTROLS[tcp.congestion_control]),
        ("ns3::TcpSocket::SegmentSize", str(tcp.segment_size)),
        ("ns3::TcpSocket::InitialCwnd", str(tcp.initial_cwnd)),
        ("ns3::TcpSocket::DataRetries", str(tcp.data_retries)),
        ("ns3::TcpSocket::SndBufSize", str(tcp.buffer_bytes)),
        ("ns3::TcpSocket::RcvBufSize", str(tcp.buffer_bytes)),
        ("ns3::TcpSocket::ConnTimeout", timer("ns3::TcpSocket::ConnTimeout")),
        ("ns3::TcpSocket::DelAckTimeout", timer("ns3::TcpSocket::DelAckTimeout")),
        ("ns3::TcpSocket::PersistTimeout", timer("ns3::TcpSocket::PersistTimeout")),
        ("ns3::TcpSocketBase::MinRto", timer("ns3::TcpSocketBase::MinRto")),
        ("ns3::TcpSocketBase::ClockGranularity", "1ns" if ours else None),
        ("ns3::TcpSocketBase::Timestamp", "true"),
        ("ns3::TcpSocketBase::Sack", "true"),
        ("ns3::TcpSocketBase::WindowScaling", "true"),
        ("ns3::TcpSocketBase::MaxSegLifetime", timer("ns3::TcpSocketBase::MaxSegLifetime")),
        ("ns3::RttEstimator::InitialEstimation", timer("ns3::RttEstimator::InitialEstimation")),
    )
    return {name: value for name, value in entries if value is not None}


def timers_line(tcp: TcpConfig, worst_rtt: float) -> str:
    """The run summary's words for where TCP's timers come from."""
    if tcp.timers == "ns3":
        return "TCP timers: ns-3's own defaults (tcp.timers = \"ns3\")"
    w = worst_rtt
    return (f"TCP timers: from the network's worst-case RTT W = {w * 1e3:.3f} ms (minimum RTO "
            f"1.5 W = {1.5 * w * 1e3:.3f} ms, initial RTO 2 W, delayed ACK 0.2 W = "
            f"{0.2 * w * 1e3:.3f} ms); ns-3's own: tcp.timers = \"ns3\"")


def recipe_lines(defaults: dict[str, str]) -> list[str]:
    """The attribute defaults in the scenario recipe (harness.engine.recipe):
    Config::SetDefault(name, StringValue(value)) each."""
    return [f"default {token(name, 'TCP attribute')} {token(value, name)}"
            for name, value in defaults.items()]
