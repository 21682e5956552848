"""Request/response RPCs (`kind = "rpc"`): clients ask servers, open loop at
a QPS (Poisson) or closed loop with K requests outstanding; a request's
latency is its answer's arrival minus its send."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal, Optional

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from harness.analysis.services import ServiceStat, quantiles
from harness.config.errors import ConfigError
from harness.config.schema.base import Bool, Bytes, Hosts, Int, Number, PositiveTime, Str
from harness.config.schema.service import KIND_DESCRIPTION, ServiceBase
from harness.traffic.services import wire
from harness.traffic.arrivals import poisson_times
from harness.traffic.services.kind import (PlanContext, ServiceRecords, free, ms, place,
                                           refuse_busy, replace, rngs, rows, scaled, share,
                                           tail_ms, targets)
from harness.traffic.services.requests import MAX_REQUESTS, RequestKind, RequestPlan
from harness.traffic.services.wire import Path

if TYPE_CHECKING:
    from harness.analysis.tables import Run

#: RPC sizes when neither a size nor a workload is given.
DEFAULT_RPC_REQUEST, DEFAULT_RPC_RESPONSE = 1000, 10000


class RpcService(ServiceBase):
    """Request/response: clients ask servers, open loop at a QPS or closed loop
    with K requests outstanding."""

    example = '{ kind = "rpc", qps = 1000 }'
    kind: Literal["rpc"] = Field(description=KIND_DESCRIPTION)
    clients: Hosts = Field((), description=(
        "hosts that send requests; empty = every host of `hosts` but the servers"))
    servers: Hosts = Field((), description=(
        "hosts that answer (each request one, uniformly); empty = the last host of `hosts`"))
    qps: Optional[Number(gt=0)] = Field(None, description=(
        "open loop: Poisson requests/s per client; give qps or outstanding"))
    outstanding: Optional[Int(1, 10_000)] = Field(None, description=(
        "closed loop: requests each client keeps unanswered (K); give qps or outstanding"))
    request_size: Optional[Bytes()] = Field(None, description=(
        "bytes of every request (default 1000); or request_workload"))
    request_workload: Optional[Str] = Field(None, description=(
        "request sizes from a CDF (a CSV name in workloads/cdf/ or a path)"))
    response_size: Optional[Bytes()] = Field(None, description=(
        "bytes of every response (default 10000); or response_workload"))
    response_workload: Optional[Str] = Field(None, description=(
        "response sizes from a CDF (a CSV name in workloads/cdf/ or a path)"))
    slo: Optional[PositiveTime] = Field(None, description=(
        "latency objective: the SLO attainment is the fraction answered within it"))
    persistent: Bool = Field(True, description=(
        "keep one TCP connection per server open (true), or one per request"))

    @model_validator(mode="after")
    def _one_way_each(self) -> RpcService:
        if (self.qps is None) == (self.outstanding is None):
            raise ConfigError("qps", "give either qps (open loop, requests/s per client) or "
                              "outstanding (closed loop, K requests per client)")
        for what in ("request", "response"):
            if self.given(f"{what}_size") and self.given(f"{what}_workload"):
                raise ConfigError(f"{what}_workload", f"given together with {what}_size; "
                                  f"give one of them: a fixed size or a CDF")
        both = sorted(set(self.clients) & set(self.servers))
        if both:
            raise ConfigError("servers", f"host {both[0]} is a client too; a host either "
                              "asks (clients) or answers (servers)")
        return self


def rpc_ideal_s(request: int, response: int, out: Path, back: Path, segment: int,
                persistent: bool) -> float:
    """An RPC's no-contention latency: its round trip plus both transfers."""
    return ((0 if persistent else wire.handshake_s(out, back))
            + wire.transfer_s(request, out, segment) + wire.transfer_s(response, back, segment))


def rpc_requests(seed: int, index: int, clients, servers, duration: float,
                 sizes, qps: float | None, count: int) -> pd.DataFrame:
    """Every request of an RPC service: open loop, each client's Poisson
    arrivals at `qps`; closed loop (qps None), `count` requests per client
    in line (start_ns -1). Servers uniform; `sizes(rng, n)` -> (request,
    response) byte arrays. Columns as query_requests' (query -1)."""
    gens = rngs(seed, index, 3 * len(clients))
    parts = []
    for i, client in enumerate(clients):
        arrivals, pick, size_rng = gens[3 * i: 3 * i + 3]
        if qps is not None:
            start = np.round(poisson_times(arrivals, qps, duration) * 1e9).astype(np.int64)
        else:
            start = np.full(count, -1, dtype=np.int64)
        n = len(start)
        request, response = sizes(size_rng, n)
        parts.append(pd.DataFrame({
            "query": np.int64(-1), "client": client,
            "server": np.asarray(servers, dtype=np.int64)[pick.integers(0, len(servers), n)],
            "request_bytes": request, "response_bytes": response, "start_ns": start}))
    out = pd.concat(parts, ignore_index=True)
    if qps is not None:
        out = out.sort_values(["start_ns", "client"], kind="stable", ignore_index=True)
    return out


def rpc_summary(requests: pd.DataFrame, slo: float | None, window: tuple[float, float],
                clients: int) -> dict:
    """An RPC service's tail: count, answered, p50/p99/p999 latency, SLO
    attainment (None without an SLO), and achieved QPS per client."""
    m = requests[requests["measured"]]
    latency = m["latency_s"].dropna().to_numpy()
    span = window[1] - window[0]
    return {"requests": int(len(m)), "answered": int(m["answered"].sum()),
            "mean_latency_s": float(latency.mean()) if len(latency) else None,
            **{k.replace("_s", "_latency_s"): v for k, v in quantiles(latency).items()},
            "slo_s": slo,
            "slo_attainment": (float((m["latency_s"] <= slo).mean())
                               if slo is not None and len(m) else None),
            "achieved_qps": float(m["answered"].sum() / span / clients) if span > 0 else None}


def _sizes(cfg: RpcService, what: str, default: int, ctx: PlanContext, at: str):
    """(draw(rng, n), smallest, mean) of the request or response sizes as simulated."""
    size, workload = getattr(cfg, f"{what}_size"), getattr(cfg, f"{what}_workload")
    if workload is None:
        fixed = scaled(size if size is not None else default, ctx.scale)
        return (lambda rng, n: np.full(n, fixed, dtype=np.int64)), fixed, float(fixed)
    cdf = ctx.cdf(workload, f"{at}.{what}_workload")

    def draw(rng, n):
        return np.maximum(1, np.ceil(cdf.quantile(rng.random(size=n)))).astype(np.int64)
    return draw, max(1, math.ceil(cdf.sizes[0])), cdf.mean


class Rpc(RequestKind):
    name = "rpc"
    latency = ("request latency", "mean")
    order = 20
    summary = "request/response RPCs: open loop at a QPS, or closed loop with K outstanding"
    settings = RpcService
    stats = (
        ServiceStat("rpc", "p99", "p99_latency_s", "s", "RPC latency, 99th percentile (p99)",
                    change="p99", mapped=True),
        ServiceStat("rpc", "mean", "mean_latency_s", "s", "RPC latency, mean", change="mean"),
        ServiceStat("rpc", "slo_attainment", "slo_attainment", "fraction",
                    "RPC SLO attainment (fraction answered within the SLO)", change="mean",
                    fraction=True, higher_is_better=True, mapped=True),
        ServiceStat("rpc", "p50", "p50_latency_s", "s", "RPC latency, median"),
        ServiceStat("rpc", "p999", "p999_latency_s", "s",
                    "RPC latency, 99.9th percentile (p999)"),
        ServiceStat("rpc", "achieved_qps", "achieved_qps", "1/s",
                    "RPC requests answered per second per client"),
    )

    def plan(self, base, cfg: RpcService, at: str, pool, ctx: PlanContext) -> RequestPlan:
        topo, segment = ctx.topology, ctx.segment
        servers = place(cfg.servers, free(pool, cfg.clients)[-1:], topo, f"{at}.servers",
                        "server")
        clients = place(cfg.clients, free(pool, servers), topo, f"{at}.clients", "client")
        draw_req, min_req, mean_req = _sizes(cfg, "request", DEFAULT_RPC_REQUEST, ctx, at)
        draw_resp, min_resp, mean_resp = _sizes(cfg, "response", DEFAULT_RPC_RESPONSE, ctx, at)
        ideal = max(rpc_ideal_s(min_req, min_resp, ctx.path(c, s), ctx.path(s, c), segment,
                                cfg.persistent) for c in clients for s in servers)
        if cfg.qps is not None:
            _refuse_overload(cfg, at, topo, clients, servers, mean_req, mean_resp, segment)
        if cfg.slo is not None and cfg.slo < ideal:
            raise ConfigError(f"{at}.slo", f"{cfg.slo * 1e3:.4g} ms is shorter than one "
                              f"request's no-contention latency, {ideal * 1e3:.4g} ms (its "
                              "round trip and transfers): no request could meet it; give a "
                              "longer SLO")
        count = _closed_loop_count(cfg, at, ideal, len(clients), ctx.duration)

        def sizes(rng, n):
            return draw_req(rng, n), draw_resp(rng, n)
        requests = rpc_requests(ctx.seed, base.index, clients, servers, ctx.duration,
                                sizes, cfg.qps, count)
        return replace(base, RequestPlan, clients=clients, servers=servers,
                       persistent=cfg.persistent, outstanding=cfg.outstanding or 0,
                       target_s=cfg.slo, ideal_s=ideal, offered=cfg.qps or 0.0,
                       requests=requests)

    def summarize(self, plan, records: ServiceRecords, window) -> dict:
        r = records.requests
        return {"kind": self.name, "no_contention_s": plan.ideal_s,
                **rpc_summary(r[r["service"] == plan.index], plan.target_s, window,
                              len(plan.clients))}

    def console_line(self, name: str, s: dict) -> str:
        qps = "-" if s["achieved_qps"] is None else f"{s['achieved_qps']:.1f}"
        met = ("no SLO" if s["slo_s"] is None else
               f"{share(s['slo_attainment'])} of requests within the {ms(s['slo_s'])} SLO")
        return (f"{name} (rpc): {s['answered']}/{s['requests']} requests answered, latency "
                f"p50 {ms(s['p50_latency_s'])}, p99 {tail_ms(s['p99_latency_s'], 0.99, 'requests')}, "
                f"p999 {tail_ms(s['p999_latency_s'], 0.999, 'requests')}, {met}, {qps} QPS per client; "
                f"no-contention {ms(s['no_contention_s'])}")

    def samples(self, run: "Run", service: str):
        requests = rows(run.services, service)
        if requests is None:
            return {}
        latency = requests[requests["measured"]].set_index("id")["latency_s"]
        slo = targets(run, service).get("slo_s")
        # an unanswered request (NaN) is not within the SLO
        return {"p99": latency.dropna(), "mean": latency.dropna(),
                **({"slo_attainment": (latency <= slo).astype(float)}
                   if slo is not None else {})}


def _refuse_overload(cfg, at, topo, clients, servers, mean_req, mean_resp, segment) -> None:
    """An open loop whose requests or responses alone would fill a host's link."""
    req_s = wire.tcp_wire_bytes(round(mean_req), segment) * 8 / min(
        topo.host_link(c).rate_bps for c in clients)
    resp_s = wire.tcp_wire_bytes(round(mean_resp), segment) * 8 / min(
        topo.host_link(s).rate_bps for s in servers)
    per_server = cfg.qps * len(clients) / len(servers)
    load = max(cfg.qps * req_s, per_server * resp_s)
    refuse_busy(f"{at}.qps", load, f"{cfg.qps:g} requests/s per client",
                f"at most {cfg.qps / load:.4g} requests/s per client")


def _closed_loop_count(cfg, at, ideal, n_clients, duration) -> int:
    """The most requests one closed-loop client can have answered (0: open loop)."""
    if cfg.outstanding is None:
        return 0
    count = cfg.outstanding * (math.ceil(duration / ideal) + 1)
    if count * n_clients > MAX_REQUESTS:
        raise ConfigError(f"{at}.outstanding", f"{cfg.outstanding} outstanding at up to "
                          f"{1 / ideal:,.0f} answers/s each for {duration:g} s plan "
                          f"{count * n_clients:,} requests, more than "
                          f"{MAX_REQUESTS:,}; lower it or run.duration")
    return count


KIND = Rpc()
