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


def attribute_defaults(tcp: TcpConfig, worst_rtt: float, ecn: bool = False) -> dict[str, str]:
    """ns-3 Config::SetDefault names -> values (strings, as ns-3 parses them).
    ecn: negotiate ECN (TcpSocketBase::UseEcn = On)."""
    w = worst_rtt
    return {**({"ns3::TcpSocketBase::UseEcn": "On"} if ecn else {}),
        "ns3::TcpL4Protocol::SocketType": CONGESTION_CONTROLS[tcp.congestion_control],
        "ns3::TcpSocket::SegmentSize": str(tcp.segment_size),
        "ns3::TcpSocket::InitialCwnd": str(tcp.initial_cwnd),
        "ns3::TcpSocket::DataRetries": str(tcp.data_retries),
        "ns3::TcpSocket::SndBufSize": str(tcp.buffer_bytes),
        "ns3::TcpSocket::RcvBufSize": str(tcp.buffer_bytes),
        "ns3::TcpSocket::ConnTimeout": _ns(2 * w),
        "ns3::TcpSocket::DelAckTimeout": _ns(0.2 * w),
        "ns3::TcpSocket::PersistTimeout": _ns(4 * w),
        "ns3::TcpSocketBase::MinRto": _ns(1.5 * w),
        "ns3::TcpSocketBase::ClockGranularity": "1ns",
        "ns3::TcpSocketBase::Timestamp": "true",
        "ns3::TcpSocketBase::Sack": "true",
        "ns3::TcpSocketBase::WindowScaling": "true",
        "ns3::TcpSocketBase::MaxSegLifetime": repr(5 * w),
        "ns3::RttEstimator::InitialEstimation": _ns(2 * w),
    }


def recipe_lines(defaults: dict[str, str]) -> list[str]:
    """The attribute defaults in the scenario recipe (harness.engine.recipe):
    Config::SetDefault(name, StringValue(value)) each."""
    return [f"default {token(name, 'TCP attribute')} {token(value, name)}"
            for name, value in defaults.items()]
