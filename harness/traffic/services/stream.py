"""Constant-bitrate UDP streams (`kind = "stream"`: voice, video) with a
playout deadline: a packet's one-way delay, RFC 3550's jitter, the late and
lost fractions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Optional

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from harness.analysis.services import ServiceStat, tail
from harness.analysis.tables import read_csv
from harness.config.errors import ConfigError
from harness.config.schema.base import Int, PositiveTime
from harness.config.schema.service import (KIND_DESCRIPTION, MAX_UDP_PAYLOAD, STREAM_HEADER_BYTES,
                                           Bitrate, ServiceBase)
from harness.traffic.services import wire
from harness.traffic.services.kind import (PlanContext, RecipeContext, ServiceKind, ServicePlan, ServiceRecords,
                                           app_line, free, ms, one_host, refuse_busy, replace,
                                           rows, share, tail_ms)

if TYPE_CHECKING:
    from harness.analysis.tables import Run


class StreamService(ServiceBase):
    """A constant-bitrate UDP stream (voice, video) with a playout deadline."""

    example = '{ kind = "stream", bitrate = "5Mbps" }'
    kind: Literal["stream"] = Field(description=KIND_DESCRIPTION)
    source: Optional[Int(0)] = Field(None, description=(
        "the sending host; default the first host of `hosts`"))
    destination: Optional[Int(0)] = Field(None, description=(
        "the receiving host; default the last host of `hosts`"))
    bitrate: Bitrate = Field(description="the stream's rate (UDP payload), e.g. \"5Mbps\"")
    packet_size: Int(STREAM_HEADER_BYTES, MAX_UDP_PAYLOAD) = Field(1000, description=(
        "UDP payload bytes per packet (at least its 12-byte sequence number and time stamp)"))
    deadline: Optional[PositiveTime] = Field(None, description=(
        "playout deadline: a packet delayed more is late (the late fraction); default none"))

    @model_validator(mode="after")
    def _two_ends(self) -> StreamService:
        if self.source is not None and self.source == self.destination:
            raise ConfigError("destination", f"host {self.source} is the source too; a "
                              "stream goes from one host to another")
        return self


@dataclass(frozen=True)
class PacketPlan(ServicePlan):
    """A UDP packet source: from clients[0] to servers[0]."""

    rate_bps: float = 0.0            # the (mean) bitrate as simulated
    packet_bytes: int = 0            # UDP payload per packet

    def resolved(self) -> dict:
        return {**super().resolved(), "rate_bps": self.rate_bps,
                "packet_bytes": self.packet_bytes}


def rfc3550_jitter(sent_ns: np.ndarray, received_ns: np.ndarray) -> float:
    """RFC 3550's interarrival jitter (s) after the last of these packets,
    in arrival order: J += (|D(i-1, i)| - J) / 16."""
    transit = (np.asarray(received_ns, dtype=float) - np.asarray(sent_ns, dtype=float)) / 1e9
    j = 0.0
    for d in np.abs(np.diff(transit)):
        j += (d - j) / 16
    return j


def stream_summary(packets: pd.DataFrame, sent: int, interval_s: float | None,
                   window: tuple[float, float], deadline: float | None) -> dict:
    """A stream's delay p50/p99, RFC 3550 jitter, late and lost fractions
    over the packets sent in the window (`sent` packets were sent in all,
    every `interval_s` from 0; None: Poisson gaps, so the packets sent in
    the window are those numbered from the first to the last received of
    it, and a loss at either edge goes uncounted)."""
    m = packets[packets["measured"]]
    if interval_s is None:
        expected = int(m["seq"].max() - m["seq"].min() + 1) if len(m) else 0
    else:
        first = int(np.ceil(window[0] / interval_s - 1e-9))
        last = min(sent - 1, int(np.floor(window[1] / interval_s + 1e-9)))
        expected = max(0, last - first + 1)
    arrived = m["seq"].drop_duplicates()
    delay = m["delay_s"].to_numpy()
    return {"packets": expected, "received": int(len(arrived)),
            "mean_delay_s": float(delay.mean()) if len(delay) else None,
            "p50_delay_s": float(np.median(delay)) if len(delay) else None,
            "p99_delay_s": tail(delay, 0.99),
            "jitter_s": rfc3550_jitter(m["sent_ns"].to_numpy(), m["received_ns"].to_numpy()),
            "deadline_s": deadline,
            "late": (float((delay > deadline).sum() / expected)
                     if deadline is not None and expected else None),
            "lost": float(1 - len(arrived) / expected) if expected else None}


class Stream(ServiceKind):
    name = "stream"
    latency = ("one-way delay", "delay_p99")
    order = 30
    summary = "a constant-bitrate UDP stream (voice, video) with a playout deadline"
    settings = StreamService
    received_key = "seq"
    #: whether the sender's gaps are exponential (a Poisson source) or constant
    poisson = False
    stats = (
        ServiceStat("stream", "delay_p99", "p99_delay_s", "s",
                    "stream one-way delay, 99th percentile (p99)", change="p99", mapped=True),
        ServiceStat("stream", "jitter", "jitter_s", "s", "stream interarrival jitter (RFC 3550)",
                    change="mean"),
        ServiceStat("stream", "late", "late", "fraction", "fraction of stream packets late"),
        ServiceStat("stream", "lost", "lost", "fraction", "fraction of stream packets lost"),
    )

    def plan(self, base, cfg: StreamService, at: str, pool, ctx: PlanContext) -> PacketPlan:
        topo, k = ctx.topology, ctx.scale
        src = one_host(cfg.source, free(pool, cfg.destination), topo, f"{at}.source", "source")
        dst = one_host(cfg.destination, free(pool, src)[::-1], topo, f"{at}.destination",
                       "destination")
        if src == dst:
            raise ConfigError(f"{at}.destination", f"host {dst} is the source too; a stream "
                              "goes from one host to another (give source and destination)")
        rate, packet = cfg.bitrate / k, max(STREAM_HEADER_BYTES, round(cfg.packet_size / k))
        if rate < 1:
            raise ConfigError(f"{at}.bitrate", f"scale = {k} makes {cfg.bitrate:g} bit/s "
                              f"{rate:.3g} bit/s as simulated, below ns-3's 1 bit/s")
        link = min(topo.host_link(h).rate_bps for h in (src, dst))
        overhead = (packet + wire.UDP_FRAME_OVERHEAD) / packet
        refuse_busy(f"{at}.bitrate", rate * overhead / link, f"{cfg.bitrate:g} bit/s with its "
                    "headers", f"at most {link * k / overhead:.4g} bit/s")
        ideal = wire.udp_delay_s(packet, ctx.path(src, dst))
        if cfg.deadline is not None and cfg.deadline < ideal:
            raise ConfigError(f"{at}.deadline", f"{cfg.deadline * 1e3:.4g} ms is shorter than "
                              f"the path's delay, {ideal * 1e3:.4g} ms: every packet would be "
                              "late; give a longer deadline")
        return replace(base, PacketPlan, clients=(src,), servers=(dst,), target_s=cfg.deadline,
                       ideal_s=ideal, rate_bps=rate, packet_bytes=packet)

    def recipe_lines(self, plan: PacketPlan, at: RecipeContext) -> list[str]:
        """A receiver on the destination, then a sender on the source sending
        until the window's end."""
        src, dst = plan.clients[0], plan.servers[0]
        return [app_line(plan, dst, "ns3::StreamReceiverApplication", {"Port": plan.port}),
                app_line(plan, src, "ns3::StreamSenderApplication", {
                    "RemotePort": plan.port, "DataRate": f"{max(1, round(plan.rate_bps))}bps",
                    "PacketSize": plan.packet_bytes, "Tos": plan.tos,
                    "StopTime": f"{at.window_ns[1]}ns", "Poisson": self.poisson},
                    peer=dst, port=plan.port, stream=self.gap_stream(plan))]

    def gap_stream(self, plan: PacketPlan) -> int:
        """The random stream of its gaps (-1: constant gaps, none)."""
        return -1

    def read_records(self, apps) -> ServiceRecords:
        """The receiver's packets and how many the sender sent."""
        receiver, sender = (a.app for a in apps)
        return ServiceRecords(packets=[(read_csv(receiver.ToCsv()), int(sender.GetSent()))])

    def interval_s(self, plan: PacketPlan) -> float | None:
        """The gap between packets (None: not constant)."""
        return plan.packet_bytes * 8 / plan.rate_bps

    def summarize(self, plan, records: ServiceRecords, window) -> dict:
        (packets, sent), = records.packets
        return {"kind": self.name, "no_contention_s": plan.ideal_s,
                **stream_summary(packets, sent, self.interval_s(plan), window, plan.target_s)}

    def console_line(self, name: str, s: dict) -> str:
        late = ("" if s["deadline_s"] is None else
                f"{share(s['late'])} late (past the {ms(s['deadline_s'])} deadline), ")
        return (f"{name} ({self.name}): {s['received']}/{s['packets']} packets, one-way delay "
                f"p99 {tail_ms(s['p99_delay_s'], 0.99, 'packets')}, jitter {ms(s['jitter_s'])}, {late}"
                f"{share(s['lost'])} lost; no-contention {ms(s['no_contention_s'])}")

    def samples(self, run: "Run", service: str):
        packets = rows(run.streams, service)
        if packets is None:
            return {}
        mine = (packets[packets["measured"]].drop_duplicates("seq")
                .sort_values("received_ns", kind="stable"))
        transit = (mine["received_ns"] - mine["sent_ns"]).to_numpy(dtype=float) / 1e9
        seq = mine["seq"].to_numpy()
        return {"delay_p99": pd.Series(mine["delay_s"].to_numpy(), index=seq),
                # |D| of every packet but the first to arrive (RFC 3550's D(i-1, i))
                "jitter": pd.Series(np.abs(np.diff(transit)), index=seq[1:])}

    def identity(self, run: "Run", service: str) -> pd.DataFrame | None:
        """The received packets' send times, by number."""
        packets = rows(run.streams, service)
        return None if packets is None else (
            packets[["seq", "sent_ns"]].drop_duplicates("seq").sort_values("seq")
            .reset_index(drop=True))

    def sent_bytes(self, plan: PacketPlan, seconds: float) -> float:
        return plan.rate_bps / 8 * seconds

    def table_rows(self, plan: PacketPlan, seconds: float) -> float:
        return plan.rate_bps / max(1, 8 * plan.packet_bytes) * seconds


KIND = Stream()
