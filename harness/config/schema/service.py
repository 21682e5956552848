"""[[service]]: latency-critical services beside training and background,
one table each, its `kind` choosing its keys. What every kind has
(`ServiceBase`) and the checks across services are here; each kind's own
model is its plug-in's `settings` (harness.traffic.services: query, rpc,
stream, poisson, bulk), read through harness.config.registry. What each
sends is planned by its kind and played by the C++ applications of
ns3-modules/services/."""

from __future__ import annotations

import functools
from typing import Annotated, Any, Optional, Union

from pydantic import BeforeValidator, Field, TypeAdapter

from harness.config import registry
from harness.config.errors import ConfigError, ConfigTypeError, shorten
from harness.config.schema.base import (Hosts, Int, Section, Str, Toml, tagged, unit_string,
                                        validate)
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


def kinds() -> dict[str, type]:
    """A [[service]] table's `kind` -> its model (each kind's plug-in's `settings`)."""
    return {name: kind.settings for name, kind in registry.service_kinds().items()}


def service_type() -> Any:
    """One [[service]] table: the model its `kind` names (a tagged union of the kinds')."""
    return tagged("kind", None, kinds())


@functools.cache
def _validator(registered: tuple[str, ...]) -> tuple[TypeAdapter, Any]:
    """The adapter and type of a scenario's [[service]] tables, built once
    for the kinds registered."""
    tables = tuple[service_type(), ...]
    return TypeAdapter(tables), tables


def validate_services(value: Any) -> tuple:
    """Every [[service]] table validated by its kind's model (read through the
    registry when the first scenario is read, so that the kinds, above config,
    can be built on ServiceBase); an error names its field (`service[1].rate`)."""
    adapter, tables = _validator(tuple(kinds()))
    return validate(adapter, service_tables(value), tables)


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
    """Names unique, ports apart; each kind's own checks against the run."""
    names: dict[str, int] = {}
    ports: dict[int, int] = {}
    for i, s in enumerate(items):
        if s.name in names:
            raise ConfigError(f"service[{i}].name", f"{s.name!r} is the name of "
                              f"service[{names[s.name]}] too")
        names[s.name] = i
        kind = registry.service_kind(s.kind, f"service[{i}].kind")
        used = kind.ports(s, i)
        if used[-1] > 65535:
            raise ConfigError(f"service[{i}].port", f"its {len(used)} flows would listen on "
                              f"ports {used[0]}..{used[-1]}, beyond 65,535; give a lower port")
        for port in used:
            if port in ports:
                raise ConfigError(f"service[{i}].port", f"{port} is a port of "
                                  f"service[{ports[port]}] too; give each service its own")
            ports[port] = i
        kind.check(s, i, duration)
