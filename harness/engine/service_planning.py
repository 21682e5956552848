"""Planning the scenario's services ([[service]]) on the network as
simulated: hosts placed and checked, sizes and rates scaled, each one's
no-contention time, what cannot work refused (a deadline or SLO below it, a
load its links cannot carry at zero load), and its requests drawn
(harness.traffic.services)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from harness.config.scenario import ConfigError, Scenario
from harness.config.schema.service import STREAM_HEADER_BYTES, service_port
from harness.network import routing, scaling
from harness.network.topology import Topology
from harness.traffic import background, services
from harness.traffic.services import Path, ServicePlan

#: RPC sizes when neither a size nor a workload is given.
DEFAULT_RPC_REQUEST, DEFAULT_RPC_RESPONSE = 1000, 10000


def plan(scenario: Scenario, topo: Topology, classes, duration: float) -> tuple[ServicePlan, ...]:
    """Every [[service]] of the scenario, planned (none: ())."""
    if not scenario.services:
        return ()
    table = routing.next_hops(topo)

    def path(src: int, dst: int) -> Path:
        links = [topo.links[i] for i in routing.path_links(topo, src, dst, table)]
        return Path(tuple(l.rate_bps for l in links), tuple(l.delay_s for l in links))

    out = []
    for i, cfg in enumerate(scenario.services):
        at = f"service[{i}]"
        pool = cfg.hosts or tuple(range(topo.n_hosts))
        for j, h in enumerate(cfg.hosts):
            topo.check_host(h, f"{at}.hosts[{j}]")
        base = ServicePlan(index=i, name=cfg.name, kind=cfg.kind, port=service_port(cfg, i),
                           tos=classes.tos(cfg.traffic_class, f"{at}.class"))
        planner = {"query": _query, "rpc": _rpc, "stream": _stream, "poisson": _stream,
                   "bulk": _bulk}[cfg.kind]
        out.append(planner(base, cfg, at, pool, topo, path, scenario, duration))
    return tuple(out)


def _hosts(given: tuple[int, ...], default: tuple[int, ...], topo: Topology, where: str,
           what: str) -> tuple[int, ...]:
    for j, h in enumerate(given):
        topo.check_host(h, f"{where}[{j}]")
    hosts = given or default
    if not hosts:
        raise ConfigError(where, f"no {what} left: the placement rule found none among the "
                          "service's hosts; list them, or give more hosts")
    return hosts


def _scaled(size: int, k: int) -> int:
    return max(1, round(size / k))


def _busy(where: str, share: float, what: str, limit: str) -> None:
    if share >= 1:
        raise ConfigError(where, f"{what} would keep a link {share:.0%} busy at zero load, "
                          f"more than it can serve; {limit}")


def _query(base, cfg, at, pool, topo, path, scenario, duration) -> ServicePlan:
    k, segment = scenario.scale, scenario.tcp.segment_size
    aggs = _hosts(cfg.aggregators, pool[:1], topo, f"{at}.aggregators", "aggregator")
    workers = _hosts(cfg.workers, tuple(h for h in pool if h not in aggs), topo,
                     f"{at}.workers", "worker")
    if cfg.fanout is not None and cfg.fanout > len(workers):
        raise ConfigError(f"{at}.fanout", f"{cfg.fanout} workers per query, but the service "
                          f"has {len(workers)} (its workers); give 1..{len(workers)}")
    asked = cfg.fanout if cfg.fanout is not None else len(workers)
    request, response = _scaled(cfg.request_size, k), _scaled(cfg.response_size, k)
    ideal = max(services.query_ideal_s(request, response, path(a, workers[0]),
                                       path(workers[0], a), asked, segment,
                                       cfg.persistent) for a in aggs)
    link = min(topo.host_link(a).rate_bps for a in aggs)
    fan_in = asked * services.tcp_wire_bytes(response, segment) * 8 / link
    _busy(f"{at}.rate", cfg.rate * fan_in, f"{cfg.rate:g} queries/s of {asked} "
          f"responses each", f"at most {1 / fan_in:.4g} queries/s per aggregator")
    if cfg.deadline is not None and cfg.deadline < ideal:
        raise ConfigError(f"{at}.deadline", f"{cfg.deadline * 1e3:.4g} ms is shorter than a "
                          f"query's no-contention completion time, {ideal * 1e3:.4g} ms (its "
                          f"round trip and {asked} responses through the aggregator's "
                          "link): every query would miss it; give a longer deadline")
    requests = services.query_requests(scenario.seed, base.index, aggs, workers, cfg.rate,
                                       duration, request, response, cfg.fanout)
    return dataclasses.replace(base, clients=aggs, servers=workers, persistent=cfg.persistent,
                               target_s=cfg.deadline, ideal_s=ideal, offered=cfg.rate,
                               requests=requests)


def _sizes(cfg, what: str, default: int, k: int, at: str):
    """(draw(rng, n), smallest, mean) of the request or response sizes as simulated."""
    size, workload = getattr(cfg, f"{what}_size"), getattr(cfg, f"{what}_workload")
    if workload is None:
        fixed = _scaled(size if size is not None else default, k)
        return (lambda rng, n: np.full(n, fixed, dtype=np.int64)), fixed, float(fixed)
    cdf = scaling.cdf(background.load_cdf(workload, f"{at}.{what}_workload"), k)

    def draw(rng, n):
        return np.maximum(1, np.ceil(cdf.quantile(rng.random(size=n)))).astype(np.int64)
    return draw, max(1, math.ceil(cdf.sizes[0])), cdf.mean


def _rpc(base, cfg, at, pool, topo, path, scenario, duration) -> ServicePlan:
    k, segment = scenario.scale, scenario.tcp.segment_size
    servers = _hosts(cfg.servers, pool[-1:], topo, f"{at}.servers", "server")
    clients = _hosts(cfg.clients, tuple(h for h in pool if h not in servers), topo,
                     f"{at}.clients", "client")
    draw_req, min_req, mean_req = _sizes(cfg, "request", DEFAULT_RPC_REQUEST, k, at)
    draw_resp, min_resp, mean_resp = _sizes(cfg, "response", DEFAULT_RPC_RESPONSE, k, at)
    ideal = max(services.rpc_ideal_s(min_req, min_resp, path(c, s), path(s, c), segment,
                                     cfg.persistent) for c in clients for s in servers)
    if cfg.qps is not None:
        req_s = services.tcp_wire_bytes(round(mean_req), segment) * 8 / min(
            topo.host_link(c).rate_bps for c in clients)
        resp_s = services.tcp_wire_bytes(round(mean_resp), segment) * 8 / min(
            topo.host_link(s).rate_bps for s in servers)
        per_server = cfg.qps * len(clients) / len(servers)
        share = max(cfg.qps * req_s, per_server * resp_s)
        _busy(f"{at}.qps", share, f"{cfg.qps:g} requests/s per client",
              f"at most {cfg.qps / share:.4g} requests/s per client")
    if cfg.slo is not None and cfg.slo < ideal:
        raise ConfigError(f"{at}.slo", f"{cfg.slo * 1e3:.4g} ms is shorter than one request's "
                          f"no-contention latency, {ideal * 1e3:.4g} ms (its round trip and "
                          "transfers): no request could meet it; give a longer SLO")
    count = 0
    if cfg.outstanding is not None:   # the most one client can have answered
        count = cfg.outstanding * (math.ceil(duration / ideal) + 1)
        if count * len(clients) > services.MAX_REQUESTS:
            raise ConfigError(f"{at}.outstanding", f"{cfg.outstanding} outstanding at up to "
                              f"{1 / ideal:,.0f} answers/s each for {duration:g} s plan "
                              f"{count * len(clients):,} requests, more than "
                              f"{services.MAX_REQUESTS:,}; lower it or run.duration")

    def sizes(rng, n):
        return draw_req(rng, n), draw_resp(rng, n)
    requests = services.rpc_requests(scenario.seed, base.index, clients, servers, duration,
                                     sizes, cfg.qps, count)
    return dataclasses.replace(base, clients=clients, servers=servers, persistent=cfg.persistent,
                               outstanding=cfg.outstanding or 0, target_s=cfg.slo, ideal_s=ideal,
                               offered=cfg.qps or 0.0, requests=requests)


def _stream(base, cfg, at, pool, topo, path, scenario, duration) -> ServicePlan:
    k = scenario.scale
    for name in ("source", "destination"):
        if getattr(cfg, name) is not None:
            topo.check_host(getattr(cfg, name), f"{at}.{name}")
    src = cfg.source if cfg.source is not None else pool[0]
    dst = cfg.destination if cfg.destination is not None else pool[-1]
    if src == dst:
        raise ConfigError(f"{at}.destination", f"host {dst} is the source too; a stream goes "
                          "from one host to another (give source and destination)")
    rate, packet = cfg.bitrate / k, max(STREAM_HEADER_BYTES, round(cfg.packet_size / k))
    if rate < 1:
        raise ConfigError(f"{at}.bitrate", f"scale = {k} makes {cfg.bitrate:g} bit/s "
                          f"{rate:.3g} bit/s as simulated, below ns-3's 1 bit/s")
    link = min(topo.host_link(h).rate_bps for h in (src, dst))
    wire = (packet + services.UDP_FRAME_OVERHEAD) / packet
    _busy(f"{at}.bitrate", rate * wire / link, f"{cfg.bitrate:g} bit/s with its headers",
          f"at most {link * k / wire:.4g} bit/s")
    ideal = services.stream_ideal_s(packet, path(src, dst))
    if cfg.deadline is not None and cfg.deadline < ideal:
        raise ConfigError(f"{at}.deadline", f"{cfg.deadline * 1e3:.4g} ms is shorter than the "
                          f"path's delay, {ideal * 1e3:.4g} ms: every packet would be late; "
                          "give a longer deadline")
    return dataclasses.replace(base, clients=(src,), servers=(dst,), target_s=cfg.deadline,
                               ideal_s=ideal, rate_bps=rate, packet_bytes=packet)


def _bulk(base, cfg, at, pool, topo, path, scenario, duration) -> ServicePlan:
    sources = _hosts(cfg.sources, pool[:1], topo, f"{at}.sources", "source")
    if cfg.destination is not None:
        topo.check_host(cfg.destination, f"{at}.destination")
    dst = cfg.destination if cfg.destination is not None else pool[-1]
    if dst in sources:
        raise ConfigError(f"{at}.destination", f"host {dst} is a source too; a bulk flow goes "
                          "from one host to another (give sources and destination)")
    return dataclasses.replace(base, clients=sources, servers=(dst,), flows=cfg.flows,
                               start_s=cfg.start, packet_bytes=scenario.tcp.segment_size)
