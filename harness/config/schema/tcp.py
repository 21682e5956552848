"""[tcp]: settings of every TCP socket."""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import Field

from harness.config.schema.base import Bool, Int, Section, Toml
from harness.config.units import UINT32_MAX

# dctcp: ns-3's TcpDctcp with Linux's floor of two segments on the reduced
# window (ns3-modules/tcp/tcp-dctcp-linux.h): without it a flow that is
# marked right after a timeout stalls for good.
CONGESTION_CONTROLS = {"newreno": "ns3::TcpNewReno", "cubic": "ns3::TcpCubic",
                       "dctcp": "ns3::TcpDctcpLinux"}
# A congestion control whose simulated behaviour changed carries a revision
# in the scenario digest, so that a sweep never resumes cells run under the
# old behaviour as the same scenario (it refuses: "the grid changed").
#   dctcp 2: the two-segment floor above
BEHAVIOUR_REVISIONS = {"dctcp": 2}
# MTU minus TCP segment size in the reference study: 1500 - 1380 (IP and TCP
# headers with options, and headroom), kept for jumbo frames.
SEGMENT_OVERHEAD_BYTES = 120


class TcpConfig(Section):
    congestion_control: Literal[tuple(CONGESTION_CONTROLS)] = Field("newreno", description=(
        "`newreno`, `cubic` or `dctcp` (needs network.ecn_threshold)"))
    # network.mtu - SEGMENT_OVERHEAD_BYTES unless given (harness.config.schema.scenario)
    segment_size: Annotated[Int(500, 8948), Toml(default="network.mtu - 120 (1380)")] = Field(
        1380, description="bytes per TCP segment, 500-8948")
    # the window in bytes, InitialCwnd x SegmentSize, is a uint32 in ns-3 (checked
    # against the segment size in harness.config.schema.scenario)
    initial_cwnd: Int(1, UINT32_MAX) = Field(10, description="initial window, segments")
    # ns-3's TcpSocket SndBufSize / RcvBufSize are uint32
    buffer_bytes: Int(65536, UINT32_MAX) = Field(131072 * 256, description=(
        "send and receive buffer of every socket, bytes (65,536 to 2^32 - 1)"))
    # A starved low band can hold a connection's retransmissions for many
    # timeouts. ns-3 gives the connection up after 6 (its DataRetries); Linux
    # after 15 (tcp_retries2), which the backed-off timeouts stretch past any
    # run here: no connection may die mid-run.
    data_retries: Int(1, 255) = Field(15, description=(
        "retransmissions of one segment before TCP gives the connection up, 1-255 "
        "(Linux's tcp_retries2; ns-3's own default is 6)"))
    # The reference study scales TCP's timers with the network (its worst-case
    # RTT W); ns-3's own (a 1 s minimum RTO, a 200 ms delayed ACK) fit a WAN
    timers: Literal["network", "ns3"] = Field("network", description=(
        "`network`: the timers from the worst-case RTT W of the network as written "
        "(minimum RTO 1.5 W, initial RTO and SYN timeout 2 W, delayed ACK 0.2 W, "
        "persist 4 W, MSL 5 W); `ns3`: ns-3's own defaults (minimum RTO 1 s, delayed ACK "
        "200 ms, ...)"))
    ecn_acks: Bool = Field(False, description=(
        "pure ACKs ECN-capable (ECT(0)) too, where data is (RFC 3168 leaves them not ECT; "
        "DCTCP and lossless-fabric deployments often mark them): a marking queue then marks "
        "ACKs as well"))
    ecn: Annotated[Optional[Bool], Toml(default="on when the queues mark")] = Field(
        None, description="negotiate ECN; dctcp always does")
