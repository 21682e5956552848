"""What the request-and-response kinds (query, rpc) share: their plan's
requests, their recipe lines (servers, clients, then every request, through
one ServiceLog), what pairs two runs' requests, and their cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from harness.traffic.services.kind import RecipeContext, ServiceKind, ServicePlan, app_line, rows

if TYPE_CHECKING:
    from harness.analysis.tables import Run

#: the requests' columns that make two runs' requests the same requests
REQUEST_IDENTITY = ("id", "client", "server", "request_bytes", "response_bytes", "planned_ns")
#: A closed-loop client's requests are planned ahead, up to this many per
#: service (each answered one is replaced by the next in line).
MAX_REQUESTS = 1_000_000


@dataclass(frozen=True)
class RequestPlan(ServicePlan):
    """A request-and-response service: its connections and every request."""

    persistent: bool = True
    outstanding: int = 0             # closed loop: K per client; 0 = open loop
    offered: float = 0.0             # queries/s per aggregator, or QPS per client
    requests: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    def resolved(self) -> dict:
        return {**super().resolved(), "persistent": self.persistent,
                "outstanding": self.outstanding, "offered_per_client": self.offered,
                "requests": int(len(self.requests))}


class RequestKind(ServiceKind):
    """Clients ask servers over TCP; ns-3's ServiceLog records every request."""

    uses_service_log = True

    def recipe_lines(self, plan: RequestPlan, at: RecipeContext) -> list[str]:
        """A server on each server host, a client on each client host, then
        every request (ids from at.first_request, in the plan's order)."""
        lines = [app_line(plan, h, "ns3::RequestServerApplication",
                          {"Port": plan.port, "Tos": plan.tos}) for h in plan.servers]
        lines += [app_line(plan, h, "ns3::RequestClientApplication",
                           {"RemotePort": plan.port, "Tos": plan.tos,
                            "Persistent": plan.persistent, "Outstanding": plan.outstanding})
                  for h in plan.clients]
        r = plan.requests
        first = at.first_request
        lines += [f"service-request {first + i} {plan.index} {q} {c} {v} {a} {b} {t}"
                  for i, (q, c, v, a, b, t) in enumerate(zip(
                      r["query"], r["client"], r["server"], r["request_bytes"],
                      r["response_bytes"], r["start_ns"]))]
        return lines

    def planned_requests(self, plan: RequestPlan) -> int:
        return len(plan.requests)

    def identity(self, run: "Run", service: str) -> pd.DataFrame | None:
        requests = rows(run.services, service)
        return None if requests is None else (
            requests[list(REQUEST_IDENTITY)].sort_values("id").reset_index(drop=True))

    def sent_bytes(self, plan: RequestPlan, seconds: float) -> float:
        """Every request and response planned to start within `seconds` (a
        closed loop's are all planned ahead, start -1: at most)."""
        if not len(plan.requests):
            return 0.0
        r = plan.requests[plan.requests["start_ns"] < seconds * 1e9]
        return float((r["request_bytes"] + r["response_bytes"]).sum())

    def table_rows(self, plan: RequestPlan, seconds: float) -> float:
        return len(plan.requests) * 2
