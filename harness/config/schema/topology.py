"""[topology] of a scenario, and the topology files it names
(topologies/*.toml): one model per `kind`, every key required."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from harness.config.errors import ConfigError
from harness.config.schema.base import Int, LinkRate, PositiveTime, Section, Str

# The harness computes next hops for every (node, destination host) pair in
# Python (ns-3 then holds the switches' ones), so planning grows with nodes x
# hosts: at 1,092 nodes (1,024 hosts on leaf-spine) 1.3 M pairs take 1.5-8 s
# (by machine load) and ~0.65 GiB; at this cap, ~4x that (and a packet-level
# run of such a fabric, days). Nothing else limits it: addresses are a /30
# per link in 10.0.0.0/8 (4 M links). See docs/performance/scaling.md.
MAX_NODES = 2048


def _at_most_nodes(value: int) -> int:
    if value > MAX_NODES:
        raise ConfigError("", f"must be <= {MAX_NODES} (got {value}): a topology has at most "
                          f"{MAX_NODES} nodes")
    return value


def Nodes(lo: int = 1) -> Any:  # noqa: N802 - a type
    """A number of nodes, lo..MAX_NODES."""
    return Annotated[Int(lo), AfterValidator(_at_most_nodes),
                     Field(json_schema_extra={"maximum": MAX_NODES})]


class TopologyFile(Section):
    """A topology file: `kind` and that kind's keys, all required."""


class SingleTor(TopologyFile):
    kind: Literal["single-tor"]
    hosts: Nodes(2) = Field(description="number of hosts on the one switch")
    link_rate: LinkRate = Field(description="host link rate")
    link_delay: PositiveTime = Field(description="host link delay")


class LeafSpine(TopologyFile):
    kind: Literal["leaf-spine"]
    leaves: Nodes() = Field(description="number of leaf (ToR) switches")
    spines: Nodes() = Field(description="number of spines")
    hosts_per_leaf: Nodes() = Field(description="hosts under each leaf")
    host_link_rate: LinkRate = Field(description="host-leaf rate")
    host_link_delay: PositiveTime = Field(description="host-leaf delay")
    fabric_link_rate: LinkRate = Field(description="leaf-spine rate")
    fabric_link_delay: PositiveTime = Field(description="leaf-spine delay")


class Custom(TopologyFile):
    kind: Literal["custom"]
    hosts: Nodes(2) = Field(description="number of hosts")
    switches: Nodes(0) = Field(description="number of switches")
    # node names are checked by harness.network.topology (they depend on hosts and switches)
    links: list[Any] = Field(description=(
        "list of links between node names (h0.., s0..): [a, b], [a, b, rate, delay] or "
        "{ a, b, rate, delay } (rate and delay: that link's own)"))
    link_rate: LinkRate = Field(description="rate of every link that gives none of its own")
    link_delay: PositiveTime = Field(description="delay of every link that gives none of its own")


KINDS: dict[str, type[TopologyFile]] = {"single-tor": SingleTor, "leaf-spine": LeafSpine,
                                        "custom": Custom}


def _any_kind_key(schema: dict[str, Any]) -> None:
    """In a scenario's [topology], any key of a topology file, as that file has it."""
    properties = schema["properties"]
    properties.pop("overrides", None)
    for model in KINDS.values():
        for key, sub in model.model_json_schema()["properties"].items():
            if key != "kind":
                properties.setdefault(key, sub)


class TopologyConfig(Section):
    """`file` names the topology; any other key overrides that file's value
    (checked against the file's kind when the topology is read)."""

    model_config = {**Section.model_config, "json_schema_extra": _any_kind_key}
    file: Str = Field("single-tor", description="a topology file: a name in topologies/ or a path")
    # Keys of the topology file overridden by the scenario (e.g. hosts = 4).
    overrides: dict[str, Any] = Field({}, description=(
        "any key of the topology file, overriding the file's value"))

    @model_validator(mode="before")
    @classmethod
    def _split(cls, data: Any) -> Any:
        """[topology] as written (file and the file's keys), or as Python
        gives it (file and overrides)."""
        if not isinstance(data, dict):
            return data
        given = data.get("overrides")
        rest = {k: v for k, v in data.items() if k != "file" and
                not (k == "overrides" and isinstance(given, dict))}
        return {**({"file": data["file"]} if "file" in data else {}),
                "overrides": {**(given if isinstance(given, dict) else {}), **rest}}
