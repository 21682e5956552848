"""Long-lived bulk flows (`kind = "bulk"`): `flows` from each of `sources`
to `destination`, sending as fast as their transport lets them (TCP, or
RDMA queue pairs under DCQCN with `transport = "rdma"`) from `start` to
the end of the run; measured as goodput over the window and Jain's
fairness index of the flows'."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

import numpy as np
from pydantic import Field, model_validator

from harness.config.errors import ConfigError
from harness.config.schema.base import Hosts, Int, Time
from harness.config.schema.service import KIND_DESCRIPTION, ServiceBase
from harness.traffic.services.kind import (PlanContext, RecipeContext, ServiceKind, ServicePlan, ServiceRecords,
                                           app_line, free, one_host, place, replace)

#: Bulk flows of service i listen from port BULK_PORT_BASE + BULK_PORT_STRIDE x i on.
BULK_PORT_BASE, BULK_PORT_STRIDE = 20000, 100


class BulkService(ServiceBase):
    """Long-lived TCP flows: `flows` from each of `sources` to `destination`,
    sending as fast as TCP lets them from `start` to the end of the run."""

    example = '{ kind = "bulk", sources = [0], destination = 1 }'
    kind: Literal["bulk"] = Field(description=KIND_DESCRIPTION)
    sources: Hosts = Field((), description=(
        "the sending hosts; empty = the first host of `hosts`"))
    destination: Optional[Int(0)] = Field(None, description=(
        "the receiving host; default the last host of `hosts`"))
    flows: Int(1, BULK_PORT_STRIDE) = Field(1, description=(
        f"flows from each source, 1-{BULK_PORT_STRIDE} (ports `port`, `port` + 1, ...)"))
    start: Time = Field(0.0, description="when the flows start (s); default 0")
    transport: Literal["tcp", "rdma"] = Field("tcp", description=(
        "what carries the flows: \"tcp\" (ns-3's TCP, as [tcp] sets it) or \"rdma\" "
        "(RoCEv2 queue pairs paced by DCQCN, as [rdma] sets it)"))

    @model_validator(mode="after")
    def _two_ends(self) -> BulkService:
        if self.destination is not None and self.destination in self.sources:
            raise ConfigError("destination", f"host {self.destination} is a source too; a bulk "
                              "flow goes from one host to another")
        return self


@dataclass(frozen=True)
class BulkPlan(ServicePlan):
    """Bulk flows from each of clients to servers[0], from `port` on."""

    flows: int = 1                   # flows per source
    start_s: float = 0.0             # when they start
    send_bytes: int = 0              # bytes per write (a TCP segment)
    line_rate_bps: float = 0.0       # the most they can deliver together (the cost estimate)
    transport: str = "tcp"           # "tcp" or "rdma"

    def resolved(self) -> dict:
        return {**super().resolved(), "flows_per_source": self.flows, "start_s": self.start_s,
                **({"transport": self.transport} if self.transport != "tcp" else {})}


def bulk_flows(plan: BulkPlan) -> list[tuple[int, int]]:
    """A bulk service's flows as (source, port), in the recipe's order."""
    return [(src, plan.port + i * plan.flows + j) for i, src in enumerate(plan.clients)
            for j in range(plan.flows)]


def bulk_summary(received: list[tuple[int, int]], window: tuple[float, float]) -> dict:
    """Long-lived flows' goodput over the window: (bytes delivered at its
    start, at its end) per flow -> each flow's bit/s, their sum, and Jain's
    fairness index of them."""
    span = window[1] - window[0]
    rates = np.array([(end - start) * 8 / span for start, end in received], dtype=float)
    total = float(rates.sum())
    return {"flows": int(len(rates)), "goodput_bps": total,
            "flow_goodput_bps": [float(r) for r in rates],
            "jain_fairness": (float(total ** 2 / (len(rates) * (rates ** 2).sum()))
                              if total > 0 else None)}


class Bulk(ServiceKind):
    name = "bulk"
    order = 50
    summary = ("long-lived flows sending as fast as TCP (or RDMA's DCQCN) lets them "
               "(goodput, fairness)")
    settings = BulkService

    def ports(self, cfg: BulkService, index: int) -> range:
        """One port per flow, from BULK_PORT_BASE + BULK_PORT_STRIDE x its place on."""
        first = cfg.port if cfg.port is not None else BULK_PORT_BASE + BULK_PORT_STRIDE * index
        return range(first, first + cfg.flows * max(1, len(cfg.sources)))

    def check(self, cfg: BulkService, index: int, duration: float) -> None:
        if cfg.start >= duration:
            raise ConfigError(f"service[{index}].start", f"{cfg.start:g} s is not before the "
                              f"run's end (run.duration = {duration:g} s); start the flows "
                              "earlier")

    def plan(self, base, cfg: BulkService, at: str, pool, ctx: PlanContext) -> BulkPlan:
        topo = ctx.topology
        sources = place(cfg.sources, free(pool, cfg.destination)[:1], topo, f"{at}.sources",
                        "source")
        dst = one_host(cfg.destination, free(pool, sources)[::-1], topo, f"{at}.destination",
                       "destination")
        if dst in sources:
            raise ConfigError(f"{at}.destination", f"host {dst} is a source too; a bulk flow "
                              "goes from one host to another (give sources and destination)")
        line = min(topo.host_link(dst).rate_bps,
                   sum(topo.host_link(s).rate_bps for s in sources))
        return replace(base, BulkPlan, clients=sources, servers=(dst,), flows=cfg.flows,
                       start_s=cfg.start, send_bytes=ctx.segment, line_rate_bps=line,
                       transport=cfg.transport)

    def rdma_hosts(self, plan: BulkPlan) -> tuple[int, ...]:
        return (*plan.clients, *plan.servers) if plan.transport == "rdma" else ()

    def recipe_lines(self, plan: BulkPlan, at: RecipeContext) -> list[str]:
        """Per flow: ns-3's PacketSink on the destination, its BulkSendApplication
        on the source (no byte limit), and the sink's bytes noted at the
        window's start and end. Over RDMA both take the host's queue pairs
        (RdmaSocketFactory, a stream socket) in place of TCP's sockets."""
        from harness.network import rdma

        factory = rdma.FACTORY if plan.transport == "rdma" else "ns3::TcpSocketFactory"
        lines = []
        for i, (src, port) in enumerate(bulk_flows(plan)):
            dst = plan.servers[0]
            lines += [
                app_line(plan, dst, "ns3::PacketSink",
                         {"Protocol": factory, "Port": port}),
                app_line(plan, src, "ns3::BulkSendApplication", {
                    "Protocol": factory, "Tos": plan.tos,
                    "SendSize": plan.send_bytes, "MaxBytes": 0,
                    "StartTime": f"{round(plan.start_s * 1e9)}ns"}, peer=dst, port=port),
                f"service-note-rx {at.first_app + 2 * i} {at.window_ns[0]} {at.window_ns[1]}"]
        return lines

    def read_records(self, apps) -> ServiceRecords:
        """Each sink's bytes at the window's start and end."""
        return ServiceRecords(flows=[a.received for a in apps if a.received is not None])

    def summarize(self, plan, records: ServiceRecords, window) -> dict:
        return {"kind": self.name, **bulk_summary(records.flows, window)}

    def console_line(self, name: str, s: dict) -> str:
        fair = "-" if s["jain_fairness"] is None else f"{s['jain_fairness']:.3f}"
        return (f"{name} (bulk): {s['flows']} flows, goodput {s['goodput_bps'] / 1e6:.1f} "
                f"Mbit/s over the window, Jain's fairness {fair}")

    def sent_bytes(self, plan: BulkPlan, seconds: float) -> float:
        """At most the line rate of their shared ends, from their start on."""
        return plan.line_rate_bps / 8 * max(0.0, seconds - plan.start_s)


KIND = Bulk()
