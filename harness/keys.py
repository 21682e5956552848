"""Every key of a scenario file, read from the schema itself: its TOML key,
type, default and one-line description.

The descriptions are declared once, next to each field of the dataclasses in
harness.config (``field(..., metadata={"doc": ...})``, with ``"type"`` where
the TOML value is not the field's Python type and ``"default"`` where the
default is derived); the keys a section accepts are harness.config's
``_SECTION_KEYS`` (TOML key -> field). The documentation's key reference
(docs/user-guide/scenario-keys.md) is ``markdown()``, filled in by the site's
build hook (docs/hooks/generated.py), so the reference cannot drift from the
code.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from typing import Any

from harness import config, schedulers, topology, units
from harness.paths import TOPOLOGIES_DIR


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


#: Tables of a section read with their own keys: name in the reference ("[]":
#: each entry of a list) -> (its section, dataclass, TOML key -> field).
_SUBTABLES: dict[str, tuple[str, type, dict[str, str]]] = {
    "network.buffer": ("network", config.BufferConfig, {k: k for k in config._BUFFER_KEYS}),
    "network.link_changes[]": ("network", config.LinkChange,
                               {"at": "at", "rate": "rate_bps", "hosts": "hosts"}),
    "background.steps[]": ("background", config.LoadStep,
                           {"at": "at", "rate": "rate", "load": "load"}),
    "training.slowdowns[]": ("training", config.Slowdown,
                             {k: k for k in ("worker", "start", "end", "factor")}),
    "training.straggler": ("training", config.Straggler,
                           {k: k for k in ("workers", "distribution", "factor", "factor_min",
                                           "factor_max", "sigma", "median")}),
}

#: Section -> its dataclass (the keys are _SECTION_KEYS's).
_SECTION_CLASSES = {"run": config.RunConfig, "network": config.NetworkConfig,
                    "tcp": config.TcpConfig, "background": config.BackgroundConfig,
                    "training": config.TrainingConfig}

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
    "tcp": "Settings of every TCP socket; the timers follow from the network "
           "(see [The network](../model/network.md#tcp)).",
    "background": "The background (web-search) flows.",
    "background.steps[]": "Each entry of `background.steps`, in increasing `at`: "
                          "`{ at = 1.0, load = 0.3 }` or `{ at = 1.0, rate = 50 }`.",
    "training": "One training job (`[training]`), or one table per job in a list "
                "(`[[training]]`).",
    "training.slowdowns[]": "Each entry of `training.slowdowns`, e.g. `{ worker = 1, "
                            "start = 1.0, end = 1.5, factor = 3.0 }`; every key is "
                            "required, and periods of one worker may not overlap.",
    "training.straggler": 'The table `training.straggler`, e.g. `{ workers = [1], '
                          'distribution = "fixed", factor = 2 }`; each distribution takes '
                          'only its own keys.',
}

_TITLES = {"": "Top level", "network.buffer": "`[network.buffer]`, `[network.host_buffer]`",
           "network.link_changes[]": "`network.link_changes` entries",
           "background.steps[]": "`background.steps` entries",
           "training.slowdowns[]": "`training.slowdowns` entries",
           "training.straggler": "`training.straggler`"}

#: Words for the TOML value of a Python annotation (harness.config's fields).
_TYPES = {"float": "number", "int": "integer", "bool": "boolean", "str": "string",
          "tuple[int, ...]": "list of integers", "dict[str, int]": "table",
          "dict[str, float]": "table", "dict[str, Any]": "table"}

#: Top-level keys that are not Scenario fields.
_BASE = Key("base", "string", "none", "a scenario to start from (a name or a path); this "
            "file overrides what it gives", literal=False)


def _type(f: dataclasses.Field) -> str:
    if "type" in f.metadata:
        return f.metadata["type"]
    annotation = str(f.type).replace(" | None", "")
    return _TYPES.get(annotation, annotation)


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


def _default(f: dataclasses.Field) -> tuple[str, bool]:
    """(the default, whether it is a TOML value rather than words)."""
    if "default" in f.metadata:
        words = f.metadata["default"]
        return words, words.startswith('"')
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return "required", False
    if value is None:
        return "none", False
    if dataclasses.is_dataclass(value):
        return "the table below", False
    if value == () and _type(f) == "table":
        return "{}", True
    return _toml(value), True


def _key(cls: type, toml_key: str, field_name: str) -> Key:
    f = {f.name: f for f in dataclasses.fields(cls)}[field_name]
    default, literal = _default(f)
    return Key(toml_key, _type(f), default, f.metadata.get("doc", ""), literal)


def _section(name: str, keys: list[Key]) -> Section:
    return Section(name, _TITLES.get(name, f"`[{name}]`"), _INTROS.get(name, ""), tuple(keys))


def sections() -> list[Section]:
    """Every section of a scenario file with its keys, in the reference's order."""
    out = [_section("", [_BASE] + [_key(config.Scenario, k, k)
                                   for k in ("name", "seed", "scale")]),
           _section("run", [_key(config.RunConfig, k, f)
                            for k, f in config._SECTION_KEYS["run"].items()]),
           _section("topology", [_key(config.TopologyConfig, "file", "file"),
                                 dataclasses.replace(_key(config.TopologyConfig, "overrides",
                                                          "overrides"),
                                                     key="(a key of the file)",
                                                     type="as in the file", default="the file's",
                                                     literal=False)])]
    for name in ("network", "tcp", "background", "training"):
        cls = _SECTION_CLASSES[name]
        out.append(_section(name, [_key(cls, k, f)
                                   for k, f in config._SECTION_KEYS[name].items()]))
        for sub_name, (section, sub, fields) in _SUBTABLES.items():
            if section == name:
                out.append(_section(sub_name, [_key(sub, k, f) for k, f in fields.items()]))
    return out


def undocumented() -> list[str]:
    """Keys a scenario file accepts that have no description: [] when every
    key of _SECTION_KEYS, the top level and the sub-tables has one."""
    return [f"{s.name}.{k.key}".lstrip(".") for s in sections() for k in s.keys if not k.doc]


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
    """The keys of each kind of topology file (harness.topology.KIND_KEYS),
    with their values in the built-in files of that kind."""
    files: dict[str, list[tuple[str, dict]]] = {}
    for path in sorted(TOPOLOGIES_DIR.glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        files.setdefault(data.get("kind", ""), []).append((path.stem, data))
    lines = ["### Topology files", "",
             "A topology file (`topologies/*.toml`, or any path) has `kind` and that "
             "kind's keys, all required; `[topology]` in a scenario overrides any of them.",
             ""]
    for kind, meanings in topology.KIND_KEYS.items():
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
    (harness.schedulers.POLICIES)."""
    lines = ["| policy | architectures | parameter | kind | default | description |",
             "|---|---|---|---|---|---|"]
    for p in schedulers.POLICIES.values():
        archs = "ring, ps" if p.rings else "ps"
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
