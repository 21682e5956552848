"""[[service]]: latency-critical services beside training and background,
one table each, its `kind` choosing its keys: partition-aggregate queries
(`query`), request/response RPCs (`rpc`), constant-bitrate streams
(`stream`), Poisson UDP packets (`poisson`) and long-lived bulk TCP flows
(`bulk`). What each sends is planned in harness.traffic.services and
played by the C++ applications of ns3-modules/services/."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BeforeValidator, Field, model_validator

from harness.config.errors import ConfigError, ConfigTypeError, shorten
from harness.config.schema.base import (Bool, Bytes, Hosts, Int, Number, PositiveTime, Section,
                                        Str, Time, Toml, tagged, unit_string)
from harness.config.units import RATE_UNITS, UINT64_MAX, parse_rate

#: The smallest stream packet: its sequence number and send time (ns-3's SeqTsHeader).
STREAM_HEADER_BYTES = 12
#: The largest UDP payload of one IPv4 datagram.
MAX_UDP_PAYLOAD = 65507

#: A bitrate in bit/s (at least ns-3's 1 bit/s): 64e3 or "64kbps".
Bitrate = Annotated[float, BeforeValidator(
    lambda v: parse_rate(v, ""), json_schema_input_type=Union[
        Annotated[float, Field(ge=1, le=UINT64_MAX)], unit_string(RATE_UNITS)]),
    Field(le=UINT64_MAX), Toml("rate")]


KIND_DESCRIPTION = "query, rpc, stream, poisson or bulk: what the service is"
#: Bulk flows of service i listen from port BULK_PORT_BASE + BULK_PORT_STRIDE x i on.
BULK_PORT_BASE, BULK_PORT_STRIDE = 20000, 100


class ServiceBase(Section):
    """What every kind of service has."""

    name: Str = Field("", description=(
        "names the service in the summary and tables; default `<kind><i>` (i: its table's place)"))
    traffic_class: Str = Field("high", alias="class", description=(
        "traffic class of the service's packets (a class of network.classes)"))
    hosts: Hosts = Field((), description=(
        "hosts the placement rule picks from (see each kind); empty = every host"))
    port: Optional[Int(1, 65535)] = Field(None, description=(
        "the servers' (or the stream's) port; default 7000 + the table's place"))


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


class PoissonService(StreamService):
    """Poisson UDP packets: packets of `packet_size` at a mean of `bitrate`,
    with exponential gaps (a known M/D/1 input for queueing references)."""

    example = '{ kind = "poisson", bitrate = "300Mbps", packet_size = 1000 }'
    kind: Literal["poisson"] = Field(description=KIND_DESCRIPTION)
    bitrate: Bitrate = Field(description="the mean rate (UDP payload), e.g. \"300Mbps\"")


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

    @model_validator(mode="after")
    def _two_ends(self) -> BulkService:
        if self.destination is not None and self.destination in self.sources:
            raise ConfigError("destination", f"host {self.destination} is a source too; a bulk "
                              "flow goes from one host to another")
        return self


#: One [[service]] table: the model its `kind` names.
Service = tagged("kind", None, {"query": QueryService, "rpc": RpcService,
                                "stream": StreamService, "poisson": PoissonService,
                                "bulk": BulkService})
KINDS = ("query", "rpc", "stream", "poisson", "bulk")


def service_tables(value: Any) -> Any:
    """[[service]]: a list of tables (one [service] table is one service);
    each without a name is `<kind><i>`."""
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise ConfigTypeError("", "expected a list of tables ([[service]]), got "
                              f"{shorten(value)}")
    return [{"name": f"{s.get('kind')}{i}", **s}
            if isinstance(s, dict) and isinstance(s.get("kind"), str) and "name" not in s
            else s for i, s in enumerate(value)]


def check_services(items: tuple, duration: float) -> None:
    """Names unique, ports apart; a bulk service's start within the run."""
    names: dict[str, int] = {}
    ports: dict[int, int] = {}
    for i, s in enumerate(items):
        if s.name in names:
            raise ConfigError(f"service[{i}].name", f"{s.name!r} is the name of "
                              f"service[{names[s.name]}] too")
        names[s.name] = i
        used = service_ports(s, i)
        if used[-1] > 65535:
            raise ConfigError(f"service[{i}].port", f"its {len(used)} flows would listen on "
                              f"ports {used[0]}..{used[-1]}, beyond 65,535; give a lower port")
        for port in used:
            if port in ports:
                raise ConfigError(f"service[{i}].port", f"{port} is a port of "
                                  f"service[{ports[port]}] too; give each service its own")
            ports[port] = i
        if s.kind == "bulk" and s.start >= duration:
            raise ConfigError(f"service[{i}].start", f"{s.start:g} s is not before the run's "
                              f"end (run.duration = {duration:g} s); start the flows earlier")


def service_port(s: Any, i: int) -> int:
    """The service's (first) port: given, or 7000 + its place (bulk:
    BULK_PORT_BASE + BULK_PORT_STRIDE x its place, a range for its flows)."""
    if s.port is not None:
        return s.port
    return BULK_PORT_BASE + BULK_PORT_STRIDE * i if s.kind == "bulk" else 7000 + i


def service_ports(s: Any, i: int) -> range:
    """Every port the service listens on: one, or a bulk service's one per flow."""
    first = service_port(s, i)
    return range(first, first + (s.flows * max(1, len(s.sources)) if s.kind == "bulk" else 1))
