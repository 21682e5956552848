"""What a service's messages cost on the wire, and the no-contention
arithmetic every kind builds its ideal time from: a path's links, a TCP
message's bytes and transfer time, a handshake."""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Bytes on the wire per TCP segment besides its payload: PPP 2, IP 20, TCP 20,
#: the timestamp option 12 (what every socket of the harness negotiates).
TCP_FRAME_OVERHEAD = 54
#: Bytes on the wire per stream packet besides its UDP payload: PPP 2, IP 20, UDP 8.
UDP_FRAME_OVERHEAD = 30


@dataclass(frozen=True)
class Path:
    """A one-way path on the network as simulated: each link's rate and delay."""

    rates_bps: tuple[float, ...]
    delays_s: tuple[float, ...]

    @property
    def propagation_s(self) -> float:
        return sum(self.delays_s)

    @property
    def bottleneck_bps(self) -> float:
        return min(self.rates_bps)


def tcp_wire_bytes(size: int, segment: int) -> int:
    """Bytes on the wire of a message of `size` bytes in `segment`-byte segments."""
    return size + math.ceil(size / segment) * TCP_FRAME_OVERHEAD


def transfer_s(size: int, path: Path, segment: int) -> float:
    """A message alone on an idle path (store and forward per packet): every
    byte through the bottleneck, one packet through each other link, and
    the propagation delay. Within the initial window (no round trip waited)."""
    first = min(size, segment) + TCP_FRAME_OVERHEAD
    bottleneck = path.rates_bps.index(path.bottleneck_bps)
    others = sum(first * 8 / r for i, r in enumerate(path.rates_bps) if i != bottleneck)
    return tcp_wire_bytes(size, segment) * 8 / path.bottleneck_bps + others + path.propagation_s


def handshake_s(out: Path, back: Path) -> float:
    """SYN and SYN-ACK (TCP's three-way handshake: the request leaves with the ACK)."""
    syn = 2 + 20 + 40   # PPP, IP, TCP with its options
    return sum(syn * 8 / r + d for path in (out, back)
               for r, d in zip(path.rates_bps, path.delays_s))


def udp_delay_s(packet: int, path: Path) -> float:
    """A UDP packet's no-contention one-way delay: store and forward over every link."""
    wire = packet + UDP_FRAME_OVERHEAD
    return sum(wire * 8 / r + d for r, d in zip(path.rates_bps, path.delays_s))
