"""Every key of a scenario file, read from the schema itself: its TOML key,
type, default and one-line description.

The descriptions are declared once, with each field of the models in
harness.config.schema (``Field(description=...)``, with a ``Toml`` marker where the
TOML value is not the field's Python type or the default is derived); the
keys a table accepts are its model's fields. The documentation's key
reference (docs/user-guide/scenario-keys.md) is ``markdown()``, filled in by
the site's build hook (docs/hooks/generated.py), so the reference cannot
drift from the code.
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from harness.config import registry, scenario as config, units
from harness.config.paths import TOPOLOGIES_DIR
from harness.config.schema.base import Toml
from harness.config.schema.topology import KINDS
from harness.config.schema.network import LossConfig, MarkingProfile, PfcConfig
from harness.config.schema.rdma import RdmaConfig
from harness.config.schema.run import QueueSamples
from harness.config.schema.service import ServiceBase, kinds as service_kinds
from harness.config.schema.training import STRAGGLERS


@dataclass(frozen=True)
class Key:
    key: str       # the TOML key
    type: str      # its TOML type, in words
    default: str   # its default, as TOML (or in words where it is derived)
    doc: str       # one line
    literal: bool = True  # `default` is a TOML value (not words)


@dataclass(frozen=True)
class Section:
    name: str      # "" (top level), "run", "network.buffer", "network.link_changes[]", ...
    title: str
    intro: str
    keys: tuple[Key, ...]


def _training_models() -> list[type[BaseModel]]:
    """Every architecture's settings model (the keys of [training])."""
    return [a.settings for a in registry.architectures().values()]


#: Section -> its models, in the reference's order (several: the union of
#: their keys, e.g. every architecture's); "[]": each entry of a list.
_SECTIONS: dict[str, list[type[BaseModel]]] = {
    "run": [config.RunConfig],
    "run.queue_samples": [QueueSamples],
    "network": [config.NetworkConfig],
    "network.buffer": [config.BufferConfig],
    "network.link_changes[]": [config.LinkChange],
    "network.loss": [LossConfig],
    "network.ecn_profile": [MarkingProfile],
    "network.pfc": [PfcConfig],
    "tcp": [config.TcpConfig],
    "rdma": [RdmaConfig],
    "background": [config.BackgroundConfig],
    "background.steps[]": [config.LoadStep],
    "training": _training_models(),
    "training.slowdowns[]": [config.Slowdown],
    "training.straggler": list(STRAGGLERS.values()),
    "service[]": list(service_kinds().values()),
}

_INTROS = {
    "": "Keys at the top of the file, before any table. `base` is read before the "
        "rest: the file starts from that scenario and overrides only what it gives.",
    "run": "How long the run lasts and what is measured: flows and iterations that "
           "start in [`warmup`, `duration` - `cooldown`].",
    "topology": "`file` names the topology; any key of that file may be overridden here "
                "(e.g. `hosts = 6`). The keys of each kind of topology file are listed "
                "under [Topology files](#topology-files).",
    "network": "Queue discipline, classes and buffers of every egress (hosts and switches).",
    "network.buffer": "`[network.buffer]` (every egress) and `[network.host_buffer]` (the "
                      "hosts', if they differ) take the same keys.",
    "network.link_changes[]": 'Each entry of `network.link_changes`, e.g. `{ at = 2.0, '
                              'rate = "1Gbps", hosts = [4] }`; `at` and `rate` are required.',
    "network.ecn_profile": "RED-like ECN marking, as DCQCN deployments configure switches "
                           "(see [The lossless fabric](../model/lossless.md)).",
    "network.pfc": "Priority Flow Control: the lossless classes and their thresholds "
                   "(see [The lossless fabric](../model/lossless.md)).",
    "rdma": "The RDMA queue pairs of jobs with `transport = \"rdma\"`: DCQCN's constants "
            "(see [The lossless fabric](../model/lossless.md)).",
    "tcp": "Settings of every TCP socket; the timers follow from the network "
           "(see [The network](../model/network.md#tcp)).",
    "background": "The background (web-search) flows.",
    "background.steps[]": "Each entry of `background.steps`, in increasing `at`: "
                          "`{ at = 1.0, load = 0.3 }` or `{ at = 1.0, rate = 50 }`.",
    "training": "One training job (`[training]`), or one table per job in a list "
                "(`[[training]]`). Keys marked with an architecture's name (e.g. ring:) belong to "
                "that `architecture` only; another architecture's key is an error unless it has its default.",
    "training.slowdowns[]": "Each entry of `training.slowdowns`, e.g. `{ worker = 1, "
                            "start = 1.0, end = 1.5, factor = 3.0 }`; every key is "
                            "required, and periods of one worker may not overlap.",
    "run.queue_samples": "The table `run.queue_samples`, e.g. `{ interval = \"10us\", hosts = "
                         "[2] }`: the backlog of chosen egresses read every `interval` in ns-3 "
                         "(each band's packets and bytes), written as the run's "
                         "`queue_samples` table ([Runs](runs.md)); left out, nothing is sampled "
                         "and the scenario's digest is as before.",
    "network.loss": "The table `network.loss`, e.g. `{ rate = 1e-3, hosts = [1] }`: random "
                    "packet loss on hosts' links ([The network](../model/network.md#random-loss)); "
                    "left out, no loss.",
    "training.straggler": 'The table `training.straggler`, e.g. `{ workers = [1], '
                          'distribution = "fixed", factor = 2 }`; each distribution takes '
                          'only its own keys, and requires them (`median` excepted).',
}

def _service_intro() -> str:
    """[[service]]'s intro: each kind's own keys (kinds with the same keys together)."""
    common = set(ServiceBase.model_fields) | {"kind"}
    groups: dict[tuple, list[str]] = {}
    for kind, model in service_kinds().items():
        own = tuple(info.alias or name for name, info in model.model_fields.items()
                    if name not in common)
        groups.setdefault(own, []).append(f"`{kind}`")
    listed = [f"{' or '.join(names)} ({', '.join(keys)})" for keys, names in groups.items()]
    return ("One table per latency-critical service ([Services](services.md)); `kind` "
            f"chooses its keys: {', '.join(listed[:-1])} or {listed[-1]}; name, class, hosts "
            "and port are every kind's. A key of another kind is an error.")


_INTROS["service[]"] = _service_intro()   # each kind's own keys, from the kinds' models

_TITLES = {"": "Top level", "service[]": "`[[service]]`", "network.buffer": "`[network.buffer]`, `[network.host_buffer]`",
           "network.link_changes[]": "`network.link_changes` entries",
           "network.loss": "`[network.loss]`",
           "run.queue_samples": "`[run.queue_samples]`",
           "background.steps[]": "`background.steps` entries",
           "training.slowdowns[]": "`training.slowdowns` entries",
           "training.straggler": "`training.straggler`"}

#: Words for the TOML value of a Python type.
_TYPES = {float: "number", int: "integer", bool: "boolean", str: "string"}

#: Top-level keys that are not Scenario fields.
_BASE = Key("base", "string", "none", "a scenario to start from (a name or a path); this "
            "file overrides what it gives", literal=False)


def _markers(info: FieldInfo) -> list[Toml]:
    """The field's Toml markers: its own, then those of the types it is made of."""
    found = [m for m in info.metadata if isinstance(m, Toml)]
    stack = [info.annotation]
    while stack:
        tp = stack.pop(0)
        found += [m for m in getattr(tp, "__metadata__", ()) if isinstance(m, Toml)]
        stack += typing.get_args(tp)
    return found


def _bare(tp: Any) -> Any:
    """The type without Annotated and Optional."""
    while True:
        if typing.get_origin(tp) is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif typing.get_origin(tp) in (typing.Union, types.UnionType):
            rest = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(rest) != 1:
                return tp
            tp = rest[0]
        else:
            return tp


def _type(info: FieldInfo) -> str:
    words = next((m.type for m in _markers(info) if m.type), None)
    if words:
        return words
    tp = _bare(info.annotation)
    origin = typing.get_origin(tp)
    if origin is Literal:
        return "string"
    if origin in (tuple, list):
        item = _bare(typing.get_args(tp)[0])
        return "list of tables" if isinstance(item, type) and issubclass(item, BaseModel) \
            else f"list of {_TYPES.get(item, 'value')}s"
    if origin is dict or (isinstance(tp, type) and issubclass(tp, BaseModel)):
        return "table"
    return _TYPES.get(tp, str(tp))


def _toml(value: Any) -> str:
    """A default value as it would be written in TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, int):
        return f"{value:_}"  # TOML reads 160_000
    return repr(value)


def _default(info: FieldInfo) -> tuple[str, bool]:
    """(the default, whether it is a TOML value rather than words)."""
    words = next((m.default for m in _markers(info) if m.default), None)
    if words:
        return words, words.startswith('"')
    if info.is_required():
        return "required", False
    value = info.get_default(call_default_factory=True)
    if value is None:
        return "none", False
    if isinstance(value, BaseModel):
        return "the table below", False
    if value == () and _type(info) == "table":
        return "{}", True
    return _toml(value), True


def _keys(models: list[type[BaseModel]]) -> list[Key]:
    """The keys of `models` (the union, in order; a field of several once)."""
    out: dict[str, Key] = {}
    for model in models:
        for name, info in model.model_fields.items():
            key = info.alias or name
            if key not in out:
                default, literal = _default(info)
                out[key] = Key(key, _type(info), default, info.description or "", literal)
    return list(out.values())


def _section(name: str, keys: list[Key]) -> Section:
    return Section(name, _TITLES.get(name, f"`[{name}]`"), _INTROS.get(name, ""), tuple(keys))


def sections() -> list[Section]:
    """Every section of a scenario file with its keys, in the reference's order."""
    top = _keys([config.Scenario])
    out = [_section("", [_BASE] + [k for k in top if k.key in ("name", "seed", "scale")])]
    file = next(k for k in _keys([config.TopologyConfig]) if k.key == "file")
    overrides = next(k for k in _keys([config.TopologyConfig]) if k.key == "overrides")
    out.append(_section("topology", [file, dataclasses.replace(
        overrides, key="(a key of the file)", type="as in the file", default="the file's",
        literal=False)]))
    for name, models in _SECTIONS.items():
        keys = _keys(models)
        if name == "training":   # `architecture` next to `enabled`, as files have it
            keys.sort(key=lambda k: (k.key != "enabled", k.key != "architecture"))
        out.append(_section(name, keys))
    return out[:1] + [out[2], out[1]] + out[3:]   # run, then topology


def models() -> list[type[BaseModel]]:
    """Every model whose keys the reference lists."""
    return [config.Scenario, config.TopologyConfig, *(m for ms in _SECTIONS.values() for m in ms)]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _table(keys: tuple[Key, ...]) -> list[str]:
    lines = ["| key | type | default | description |", "|---|---|---|---|"]
    for k in keys:
        key = k.key if k.key.startswith("(") else f"`{k.key}`"
        default = f"`{k.default}`" if k.literal else k.default
        lines.append(f"| {key} | {_cell(k.type)} | {_cell(default)} | {_cell(k.doc)} |")
    return lines


def _units() -> list[str]:
    def names(table: dict) -> str:
        return ", ".join(f"`{u}`" for u in table)

    return ["Types with units take a plain number or a string with a unit:",
            "",
            f"- **time**: seconds, or e.g. `\"10us\"`, `\"200ms\"` "
            f"(units {names(units.TIME_UNITS)})",
            f"- **rate**: bit/s, or e.g. `\"10Gbps\"` (units {names(units.RATE_UNITS)})",
            f"- **size**: bytes (an integer), or e.g. `\"160KB\"`, `\"1MiB\"` "
            f"(units {names(units.BYTE_UNITS)}; KB = 1000 B, KiB = 1024 B)"]


def _topology_files() -> list[str]:
    """The keys of each kind of topology file (harness.config.schema.topology.KINDS),
    with their values in the built-in files of that kind."""
    files: dict[str, list[tuple[str, dict]]] = {}
    for path in sorted(TOPOLOGIES_DIR.glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        files.setdefault(data.get("kind", ""), []).append((path.stem, data))
    lines = ["### Topology files", "",
             "A topology file (`topologies/*.toml`, or any path) has `kind` and that "
             "kind's keys, all required; `[topology]` in a scenario overrides any of them.",
             ""]
    for kind, model in KINDS.items():
        meanings = {n: info.description for n, info in model.model_fields.items() if n != "kind"}
        builtins = files.get(kind, [])
        lines += [f"`kind = \"{kind}\"`" + (f" (built in: "
                  f"{', '.join(f'`{n}`' for n, _ in builtins)})" if builtins else ""), ""]
        lines.append("| key | meaning |" + "".join(f" `{n}` |" for n, _ in builtins))
        lines.append("|---|---|" + "---|" * len(builtins))
        for key, meaning in meanings.items():
            values = "".join(f" {_cell(_toml(d[key])) if key in d else ''} |"
                             for _, d in builtins)
            lines.append(f"| `{key}` | {_cell(meaning)} |{values}")
        lines.append("")
    return lines


def policies_markdown() -> str:
    """[training.scheduler]: each policy's parameters, defaults and meaning
    (harness.traffic.schedulers.POLICIES, as registered)."""
    lines = ["| policy | architectures | parameter | kind | default | description |",
             "|---|---|---|---|---|---|"]
    for p in registry.policies().values():
        archs = ", ".join(registry.architectures_taking(p))
        if not p.params:
            lines.append(f"| `{p.name}` | {archs} | (none) | | | |")
        for i, (name, param) in enumerate(p.params.items()):
            if param.default is None:
                default = "see description"
            elif param.kind == "candidates":
                default = f"`{_toml([list(c) for c in param.default])}`"
            else:
                default = f"`{_toml(param.default)}`"
            sides = "" if param.sides == ("push", "pull") else f" ({', '.join(param.sides)} only)"
            first = f"`{p.name}` | {archs}" if i == 0 else " | "
            lines.append(f"| {first} | `{name}` | {param.kind} | {default} | "
                         f"{_cell(param.doc)}{sides} |")
    return "\n".join(lines)


def markdown() -> str:
    """The key reference as Markdown (the body of docs/user-guide/scenario-keys.md)."""
    lines = _units() + [""]
    for s in sections():
        lines += [f"## {s.title}", ""]
        if s.intro:
            lines += [s.intro, ""]
        lines += _table(s.keys) + [""]
        if s.name == "topology":
            lines += _topology_files()
        if s.name == "training":
            lines += ["### `[training.scheduler]`", "",
                      "The parameters of the job's `policy` (any other key is an error); "
                      "sizes as bytes or e.g. `\"160KB\"`. What each policy does: "
                      "[Policies](../policies/index.md).", "",
                      policies_markdown(), ""]
    return "\n".join(lines)
