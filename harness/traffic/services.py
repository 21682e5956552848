"""Services (scenario `[[service]]`): what each sends, planned in pure Python
and seeded, and its lines in the scenario recipe (harness.engine.recipe),
which ns-3 plays with the applications of ns3-modules/services/.

Each service draws from random streams of its own (the seed, a label no
other traffic uses, and the service's place in the file), so its arrivals
do not depend on the training job, the background or the other services:
the two arms of an experiment (training `same` vs `low`) replay the very
same queries and requests.

The no-contention times (what a request takes alone on an idle network)
are here too, as arithmetic on the path's links: the zero-load checks of
tests/test_services.py hold the simulator to them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

# Stream label: service randomness never shares draws with anything else.
_SERVICE_STREAM = 0x5E4
#: Bytes on the wire per TCP segment besides its payload: PPP 2, IP 20, TCP 20,
#: the timestamp option 12 (what every socket of the harness negotiates).
TCP_FRAME_OVERHEAD = 54
#: Bytes on the wire per stream packet besides its UDP payload: PPP 2, IP 20, UDP 8.
UDP_FRAME_OVERHEAD = 30
#: A closed-loop client's requests are planned ahead, up to this many per
#: service (each answered one is replaced by the next in line).
MAX_REQUESTS = 1_000_000


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


def query_ideal_s(request: int, response: int, out: Path, back: Path, workers: int,
                  segment: int, persistent: bool) -> float:
    """A query's no-contention completion time (fan-in): the first request
    to its worker, that worker's first response packet up to the aggregator's
    link, then all N responses serialised through that link (the fan-in's
    bottleneck), and the last packet's propagation; plus a handshake on a new
    connection. `out`: aggregator -> a worker, `back`: a worker -> the aggregator."""
    first = min(response, segment) + TCP_FRAME_OVERHEAD
    up_to_last = sum(first * 8 / r + d for r, d in zip(back.rates_bps[:-1], back.delays_s[:-1]))
    fan_in = workers * tcp_wire_bytes(response, segment) * 8 / back.rates_bps[-1]
    return ((0 if persistent else handshake_s(out, back)) + transfer_s(request, out, segment)
            + up_to_last + fan_in + back.delays_s[-1])


def rpc_ideal_s(request: int, response: int, out: Path, back: Path, segment: int,
                persistent: bool) -> float:
    """An RPC's no-contention latency: its round trip plus both transfers."""
    return ((0 if persistent else handshake_s(out, back)) + transfer_s(request, out, segment)
            + transfer_s(response, back, segment))


def stream_ideal_s(packet: int, path: Path) -> float:
    """A stream packet's no-contention one-way delay: the path's delay."""
    wire = packet + UDP_FRAME_OVERHEAD
    return sum(wire * 8 / r + d for r, d in zip(path.rates_bps, path.delays_s))


@dataclass(frozen=True)
class ServicePlan:
    """One service as planned: who sends to whom, what, and its no-contention time."""

    index: int
    name: str
    kind: str                        # query | rpc | stream | poisson | bulk
    tos: int
    port: int                        # bulk: the first of its flows' ports
    clients: tuple[int, ...] = ()    # query: aggregators; stream, poisson: the source; bulk: sources
    servers: tuple[int, ...] = ()    # query: workers; stream, poisson, bulk: the destination
    persistent: bool = True
    outstanding: int = 0             # rpc closed loop: K; 0 = open loop
    target_s: float | None = None    # deadline (query, stream) or SLO (rpc)
    ideal_s: float = 0.0             # no-contention time (the largest over its pairs)
    rate_bps: float = 0.0            # stream, poisson: (mean) bitrate as simulated
    packet_bytes: int = 0            # stream, poisson: UDP payload; bulk: bytes per write
    flows: int = 0                   # bulk: flows per source
    start_s: float = 0.0             # bulk: when its flows start
    offered: float = 0.0             # query: queries/s per aggregator; rpc: QPS per client
    requests: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    def resolved(self) -> dict:
        """This service as run, for config.json."""
        out = {"name": self.name, "kind": self.kind, "tos": self.tos, "port": self.port,
               "clients": list(self.clients), "servers": list(self.servers),
               "ideal_s": self.ideal_s, "target_s": self.target_s}
        if self.kind in ("stream", "poisson"):
            out.update(rate_bps=self.rate_bps, packet_bytes=self.packet_bytes)
        elif self.kind == "bulk":
            out.update(flows_per_source=self.flows, start_s=self.start_s)
        else:
            out.update(persistent=self.persistent, outstanding=self.outstanding,
                       offered_per_client=self.offered, requests=int(len(self.requests)))
        return out


def _rngs(seed: int, index: int, n: int) -> list[np.random.Generator]:
    """n generators of service `index`: one per quantity, so that one's draws
    do not depend on how many another made (a longer run extends the same arrivals)."""
    seeds = np.random.SeedSequence([seed, _SERVICE_STREAM, index]).spawn(n)
    return [np.random.default_rng(s) for s in seeds]


def poisson_times(rng: np.random.Generator, rate: float, duration: float) -> np.ndarray:
    """Poisson arrival times at `rate` in [0, duration), in seconds."""
    starts, t = [], 0.0
    while t < duration:  # chunked draws give the same sequence as one long draw
        gaps = rng.exponential(1.0 / rate, size=max(16, int(rate * duration)))
        chunk = t + np.cumsum(gaps)
        starts.append(chunk)
        t = chunk[-1]
    start = np.concatenate(starts) if starts else np.empty(0)
    return start[start < duration]


def query_requests(seed: int, index: int, aggregators, workers, rate: float, duration: float,
                   request: int, response: int, fanout: int | None = None) -> pd.DataFrame:
    """Every query of the service: each aggregator's Poisson arrivals at `rate`,
    one request to every worker per query (same start), or to `fanout`
    workers drawn without replacement for each query (from a stream of
    their own: the arrivals are the same with or without a fan-out).
    Columns: query, client, server, request_bytes, response_bytes, start_ns;
    by start."""
    # spawned streams are keyed by their place: one more leaves the first ones' draws alone
    rngs = _rngs(seed, index, len(aggregators) + (fanout is not None))
    parts = []
    for agg, rng in zip(aggregators, rngs):
        start = np.round(poisson_times(rng, rate, duration) * 1e9).astype(np.int64)
        parts.append(pd.DataFrame({"client": agg, "start_ns": start}))
    queries = pd.concat(parts, ignore_index=True).sort_values(
        ["start_ns", "client"], kind="stable", ignore_index=True)
    queries["query"] = np.arange(len(queries), dtype=np.int64)
    pool = np.asarray(workers, dtype=np.int64)
    asked = len(pool) if fanout is None else fanout
    rows = queries.loc[queries.index.repeat(asked)].reset_index(drop=True)
    if fanout is None:
        rows["server"] = np.tile(pool, len(queries))
    else:   # each query's workers in the order of `workers`
        picks = rngs[-1].random((len(queries), len(pool))).argsort(axis=1)[:, :fanout]
        rows["server"] = pool[np.sort(picks, axis=1)].ravel()
    rows["request_bytes"] = np.int64(request)
    rows["response_bytes"] = np.int64(response)
    return rows[["query", "client", "server", "request_bytes", "response_bytes", "start_ns"]]


def rpc_requests(seed: int, index: int, clients, servers, duration: float,
                 sizes, qps: float | None, count: int) -> pd.DataFrame:
    """Every request of an RPC service: open loop, each client's Poisson
    arrivals at `qps`; closed loop (qps None), `count` requests per client
    in line (start_ns -1). Servers uniform; `sizes(rng, n)` -> (request,
    response) byte arrays. Columns as query_requests' (query -1)."""
    rngs = _rngs(seed, index, 3 * len(clients))
    parts = []
    for i, client in enumerate(clients):
        arrivals, pick, size_rng = rngs[3 * i: 3 * i + 3]
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


def bulk_flows(s: ServicePlan) -> list[tuple[int, int]]:
    """A bulk service's flows as (source, port), in the recipe's order."""
    return [(src, s.port + i * s.flows + j) for i, src in enumerate(s.clients)
            for j in range(s.flows)]


def recipe_lines(services: tuple[ServicePlan, ...], window_ns: tuple[int, int]) -> list[str]:
    """The services in the scenario recipe: a ServiceLog, each request/response
    service's servers and clients, then every request (ids in order across
    services), each stream or Poisson source (sending until the window's
    end; a Poisson source draws from random stream = its service's place),
    and each bulk flow (its bytes noted at the window's start and end)."""
    lines = ["service-log"]
    next_id = 0
    for s in services:
        if s.kind in ("stream", "poisson"):
            lines.append(f"{s.kind} {s.clients[0]} {s.servers[0]} {s.port} {s.tos} "
                         f"{max(1, round(s.rate_bps))} {s.packet_bytes} 0 {window_ns[1]}"
                         + (f" {s.index}" if s.kind == "poisson" else ""))
            continue
        if s.kind == "bulk":
            lines += [f"bulk {src} {s.servers[0]} {port} {s.tos} {s.packet_bytes} "
                      f"{round(s.start_s * 1e9)} {window_ns[0]} {window_ns[1]}"
                      for src, port in bulk_flows(s)]
            continue
        lines += [f"service-server {h} {s.port} {s.tos}" for h in s.servers]
        lines += [f"service-client {s.index} {h} {s.port} {s.tos} {int(s.persistent)} "
                  f"{s.outstanding}" for h in s.clients]
        r = s.requests
        lines += [f"service-request {next_id + i} {s.index} {q} {c} {v} {a} {b} {t}"
                  for i, (q, c, v, a, b, t) in enumerate(zip(
                      r["query"], r["client"], r["server"], r["request_bytes"],
                      r["response_bytes"], r["start_ns"]))]
        next_id += len(r)
    return lines
