"""Partition-aggregate queries (`kind = "query"`): an aggregator asks every
worker at once (fan-out) and waits for the last answer (fan-in: incast at
its link). A query completes when its last worker's response is in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Optional

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from harness.analysis.services import ServiceStat, quantiles
from harness.config.errors import ConfigError
from harness.config.schema.base import Bool, Bytes, Hosts, Int, Number, PositiveTime
from harness.config.schema.service import KIND_DESCRIPTION, ServiceBase
from harness.traffic.services import wire
from harness.traffic.arrivals import poisson_times
from harness.traffic.services.kind import (PlanContext, ServiceRecords, free, ms, place,
                                           refuse_busy, replace, rngs, rows, scaled, share,
                                           tail_ms, targets)
from harness.traffic.services.requests import RequestKind, RequestPlan
from harness.traffic.services.wire import Path

if TYPE_CHECKING:
    from harness.analysis.tables import Run


class QueryService(ServiceBase):
    """Partition-aggregate: an aggregator asks every worker at once (fan-out)
    and waits for the last answer (fan-in: incast)."""

    example = '{ kind = "query", rate = 100 }'
    kind: Literal["query"] = Field(description=KIND_DESCRIPTION)
    aggregators: Hosts = Field((), description=(
        "hosts that send queries; empty = the first host of `hosts`"))
    workers: Hosts = Field((), description=(
        "the hosts queries ask (all, or `fanout` of them); empty = every other host of "
        "`hosts`"))
    fanout: Optional[Int(1, 10_000)] = Field(None, description=(
        "workers each query asks, drawn at random among `workers` for every query; "
        "default all of them"))
    rate: Number(gt=0) = Field(description="Poisson query arrivals, queries/s per aggregator")
    request_size: Bytes() = Field(1600, description="bytes of the request to each worker")
    response_size: Bytes() = Field(2000, description="bytes of each worker's response")
    deadline: Optional[PositiveTime] = Field(None, description=(
        "a query answered later misses it (the deadline-miss fraction); default none"))
    persistent: Bool = Field(True, description=(
        "keep one TCP connection per worker open (true), or one per request (handshake included)"))

    @model_validator(mode="after")
    def _apart(self) -> QueryService:
        both = sorted(set(self.aggregators) & set(self.workers))
        if both:
            raise ConfigError("workers", f"host {both[0]} is an aggregator too; a host "
                              "either asks (aggregators) or answers (workers)")
        return self


def query_ideal_s(request: int, response: int, out: Path, back: Path, workers: int,
                  segment: int, persistent: bool) -> float:
    """A query's no-contention completion time (fan-in): the first request
    to its worker, that worker's first response packet up to the aggregator's
    link, then all N responses serialised through that link (the fan-in's
    bottleneck), and the last packet's propagation; plus a handshake on a new
    connection. `out`: aggregator -> a worker, `back`: a worker -> the aggregator."""
    first = min(response, segment) + wire.TCP_FRAME_OVERHEAD
    up_to_last = sum(first * 8 / r + d for r, d in zip(back.rates_bps[:-1], back.delays_s[:-1]))
    fan_in = workers * wire.tcp_wire_bytes(response, segment) * 8 / back.rates_bps[-1]
    return ((0 if persistent else wire.handshake_s(out, back))
            + wire.transfer_s(request, out, segment) + up_to_last + fan_in + back.delays_s[-1])


def query_requests(seed: int, index: int, aggregators, workers, rate: float, duration: float,
                   request: int, response: int, fanout: int | None = None) -> pd.DataFrame:
    """Every query of the service: each aggregator's Poisson arrivals at `rate`,
    one request to every worker per query (same start), or to `fanout`
    workers drawn without replacement for each query (from a stream of
    their own: the arrivals are the same with or without a fan-out).
    Columns: query, client, server, request_bytes, response_bytes, start_ns;
    by start."""
    # spawned streams are keyed by their place: one more leaves the first ones' draws alone
    gens = rngs(seed, index, len(aggregators) + (fanout is not None))
    parts = []
    for agg, rng in zip(aggregators, gens):
        start = np.round(poisson_times(rng, rate, duration) * 1e9).astype(np.int64)
        parts.append(pd.DataFrame({"client": agg, "start_ns": start}))
    queries = pd.concat(parts, ignore_index=True).sort_values(
        ["start_ns", "client"], kind="stable", ignore_index=True)
    queries["query"] = np.arange(len(queries), dtype=np.int64)
    pool = np.asarray(workers, dtype=np.int64)
    asked = len(pool) if fanout is None else fanout
    out = queries.loc[queries.index.repeat(asked)].reset_index(drop=True)
    if fanout is None:
        out["server"] = np.tile(pool, len(queries))
    else:   # each query's workers in the order of `workers`
        picks = gens[-1].random((len(queries), len(pool))).argsort(axis=1)[:, :fanout]
        out["server"] = pool[np.sort(picks, axis=1)].ravel()
    out["request_bytes"] = np.int64(request)
    out["response_bytes"] = np.int64(response)
    return out[["query", "client", "server", "request_bytes", "response_bytes", "start_ns"]]


def query_summary(queries: pd.DataFrame, deadline: float | None) -> dict:
    """A query service's tail: count, answered, mean, p50, p99, p999 of the
    completion time, and the deadline-miss fraction (None without a deadline)."""
    m = queries[queries["measured"]]
    qct = m["qct_s"].dropna().to_numpy()
    missed = None
    if deadline is not None and len(m):
        missed = float(((m["qct_s"] > deadline) | m["qct_s"].isna()).mean())
    return {"queries": int(len(m)), "answered": int(m["answered"].sum()),
            "mean_qct_s": float(qct.mean()) if len(qct) else None,
            **{k.replace("_s", "_qct_s"): v for k, v in quantiles(qct).items()},
            "deadline_s": deadline, "deadline_miss": missed}


class Query(RequestKind):
    name = "query"
    latency = ("query completion time", "mean")
    order = 10
    summary = "partition-aggregate queries: an aggregator asks its workers at once (incast)"
    settings = QueryService
    stats = (
        ServiceStat("query", "p99", "p99_qct_s", "s",
                    "query completion time, 99th percentile (p99)", change="p99", mapped=True),
        ServiceStat("query", "mean", "mean_qct_s", "s", "query completion time, mean",
                    change="mean"),
        ServiceStat("query", "deadline_miss", "deadline_miss", "fraction",
                    "fraction of queries missing their deadline", change="mean", fraction=True),
        ServiceStat("query", "p999", "p999_qct_s", "s",
                    "query completion time, 99.9th percentile (p999)"),
    )

    def plan(self, base, cfg: QueryService, at: str, pool, ctx: PlanContext) -> RequestPlan:
        topo, k, segment = ctx.topology, ctx.scale, ctx.segment
        aggs = place(cfg.aggregators, free(pool, cfg.workers)[:1], topo, f"{at}.aggregators",
                     "aggregator")
        workers = place(cfg.workers, free(pool, aggs), topo, f"{at}.workers", "worker")
        if cfg.fanout is not None and cfg.fanout > len(workers):
            raise ConfigError(f"{at}.fanout", f"{cfg.fanout} workers per query, but the "
                              f"service has {len(workers)} (its workers); give "
                              f"1..{len(workers)}")
        asked = cfg.fanout if cfg.fanout is not None else len(workers)
        request, response = scaled(cfg.request_size, k), scaled(cfg.response_size, k)
        # the slowest query: the aggregator and worker farthest apart (on a
        # leaf-spine, a worker behind another leaf answers last)
        ideal = max(query_ideal_s(request, response, ctx.path(a, w), ctx.path(w, a), asked,
                                  segment, cfg.persistent) for a in aggs for w in workers)
        link = min(topo.host_link(a).rate_bps for a in aggs)
        fan_in = asked * wire.tcp_wire_bytes(response, segment) * 8 / link
        refuse_busy(f"{at}.rate", cfg.rate * fan_in, f"{cfg.rate:g} queries/s of {asked} "
                    f"responses each", f"at most {1 / fan_in:.4g} queries/s per aggregator")
        if cfg.deadline is not None and cfg.deadline < ideal:
            raise ConfigError(f"{at}.deadline", f"{cfg.deadline * 1e3:.4g} ms is shorter than "
                              f"a query's no-contention completion time, {ideal * 1e3:.4g} ms "
                              f"(its round trip and {asked} responses through the "
                              "aggregator's link): every query would miss it; give a longer "
                              "deadline")
        requests = query_requests(ctx.seed, base.index, aggs, workers, cfg.rate, ctx.duration,
                                  request, response, cfg.fanout)
        return replace(base, RequestPlan, clients=aggs, servers=workers,
                       persistent=cfg.persistent, target_s=cfg.deadline, ideal_s=ideal,
                       offered=cfg.rate, requests=requests)

    def summarize(self, plan, records: ServiceRecords, window) -> dict:
        q = records.queries
        return {"kind": self.name, "no_contention_s": plan.ideal_s,
                **query_summary(q[q["service"] == plan.index], plan.target_s)}

    def console_line(self, name: str, s: dict) -> str:
        missed = ("no deadline" if s["deadline_s"] is None else
                  f"{share(s['deadline_miss'])} of queries missed the "
                  f"{ms(s['deadline_s'])} deadline")
        return (f"{name} (query): {s['answered']}/{s['queries']} queries answered, completion "
                f"time mean {ms(s['mean_qct_s'])}, p99 {tail_ms(s['p99_qct_s'], 0.99, 'queries')}, "
                f"p999 {tail_ms(s['p999_qct_s'], 0.999, 'queries')}, {missed}; no-contention {ms(s['no_contention_s'])}")

    def samples(self, run: "Run", service: str):
        from harness.analysis.services import query_table

        requests = rows(run.services, service)
        if requests is None:
            return {}
        queries = query_table(requests)
        qct = queries[queries["measured"]].set_index("query")["qct_s"]
        out = {"p99": qct.dropna(), "mean": qct.dropna()}
        deadline = targets(run, service).get("deadline_s")
        if deadline is not None:   # an unanswered query misses it
            out["deadline_miss"] = ((qct > deadline) | qct.isna()).astype(float)
        return out


KIND = Query()
