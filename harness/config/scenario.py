"""Scenario configuration: TOML loading, `--set` overrides, and the schema's
models (harness.config.schema) under the names every caller has always used.

Every error is a ConfigError that names the field (``background.rate``) and
what is allowed, and is raised before ns-3 is touched. Values with units
accept strings (``"10Gbps"``, ``"10us"``) or plain numbers in bit/s and
seconds. The keys, types, defaults and ranges of a scenario file are
declared once, in harness.config.schema.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

# ConfigError and the unit readers live in their own small modules; they are
# re-exported here, where every caller has always found them.
from harness.config.errors import ConfigError, ConfigTypeError, UnknownKeyError, shorten  # noqa: F401
from harness.config.units import (INT64_MAX, UINT16_MAX, UINT32_MAX, finite,  # noqa: F401
                           parse_bytes, parse_link_rate, parse_rate, parse_time)

from harness.config.paths import (CDF_DIR, PROFILES_DIR, SCENARIOS_DIR,  # noqa: F401
                           SWEEPS_DIR, TOPOLOGIES_DIR, WORKLOADS_DIR, builtin_names,
                           resolve_data_file)
# the schema: one model per table (harness.config.schema)
from harness.config.schema.background import BackgroundConfig, LoadStep, both_given  # noqa: F401
from harness.config.schema.network import (ALPHA_RANGE, BUFFER_MODELS, BUFFER_POOLS,  # noqa: F401
                                    QDISCS, BufferConfig, LinkChange, NetworkConfig)
from harness.config.schema.run import MAX_UTILIZATION_INTERVALS, RunConfig  # noqa: F401
from harness.config.schema.scenario import (ARCHITECTURES, Scenario, job_fields,  # noqa: F401
                                     scenario_from_dict, scenario_json_schema)
from harness.config.schema.tcp import (CONGESTION_CONTROLS, SEGMENT_OVERHEAD_BYTES,  # noqa: F401
                                TcpConfig)
from harness.config.schema.topology import TopologyConfig  # noqa: F401
from harness.config.schema.training import (JOB_PORT_STRIDE, PLACEMENTS,  # noqa: F401
                                     STRAGGLER_DISTRIBUTIONS, Slowdown, Straggler,
                                     TrainingConfig)

# what callers import from here (the schema's names, re-exported)
__all__ = [
    "ConfigError", "ConfigTypeError", "UnknownKeyError", "shorten", "INT64_MAX", "UINT16_MAX",
    "UINT32_MAX", "finite", "parse_bytes", "parse_link_rate", "parse_rate", "parse_time",
    "CDF_DIR", "PROFILES_DIR", "SCENARIOS_DIR", "SWEEPS_DIR", "TOPOLOGIES_DIR",
    "WORKLOADS_DIR", "builtin_names", "resolve_data_file", "BackgroundConfig", "LoadStep",
    "both_given", "ALPHA_RANGE", "BUFFER_MODELS", "BUFFER_POOLS", "QDISCS", "BufferConfig",
    "LinkChange", "NetworkConfig", "MAX_UTILIZATION_INTERVALS", "RunConfig", "ARCHITECTURES",
    "Scenario", "job_fields", "scenario_from_dict", "scenario_json_schema",
    "CONGESTION_CONTROLS", "SEGMENT_OVERHEAD_BYTES", "TcpConfig", "TopologyConfig",
    "JOB_PORT_STRIDE", "PLACEMENTS", "STRAGGLER_DISTRIBUTIONS", "Slowdown", "Straggler",
    "TrainingConfig",
    "read_text", "check_nesting", "parse_toml", "read_toml", "parse_override",
    "apply_overrides", "apply_values", "load_scenario", "default_scenario_dict",
    "read_scenario_dict", "resolve_scenario_file", "alternative_field",
    "check_alternatives", "merge_tables", "MAX_NESTING"]


# --------------------------------------------------------------------------
# files and overrides


def read_text(path: str | Path, what: str) -> str:
    """A UTF-8 text file's content; a missing, unreadable or non-UTF-8 file is a
    ConfigError naming `what`."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(what, f"file not found: {path}")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(what, f"{path} is not UTF-8 text (byte {e.start}); save it as "
                                "UTF-8") from None
    except OSError as e:
        raise ConfigError(what, f"cannot read {path}: {e.strerror or e}") from None


#: No scenario or grid nests tables or lists deeper than a few levels; the
#: limit keeps the parser and every recursive copy far from Python's stack.
MAX_NESTING = 32


def check_nesting(value: Any, what: str, source: str = "", limit: int = MAX_NESTING) -> None:
    """Refuse tables and lists nested deeper than `limit` (walked without
    recursion, so the check itself cannot overflow the stack)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = (item.values() if isinstance(item, dict)
                    else item if isinstance(item, list) else ())
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > limit:
                    raise ConfigError(what, f"{source}tables and lists nest more than "
                                      f"{limit} levels deep; no scenario or grid needs that")
                stack.append((child, depth + 1))


def parse_toml(text: str, path: str | Path, what: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(what, f"{path} is not valid TOML: {e}") from None
    except RecursionError:  # the parser recurses per level of nesting
        raise ConfigError(what, f"{path}: tables and lists nest too deep (more than "
                          f"{MAX_NESTING} levels); no scenario or grid needs that") from None
    check_nesting(data, what, f"{path}: ")
    return data


def read_toml(path: str | Path, what: str) -> dict[str, Any]:
    return parse_toml(read_text(path, what), path, what)


def parse_override(text: str) -> tuple[list[str], Any]:
    """'background.rate=92' -> (['background', 'rate'], 92). Values are TOML
    literals (numbers, true/false, [lists], "strings"); bare words are strings."""
    if "=" not in text:
        raise ConfigError("--set", f"expected key=value, got {shorten(text)}")
    key, raw = text.split("=", 1)
    path = [p for p in key.strip().split(".")]
    if not all(path):
        raise ConfigError("--set", f"bad key {shorten(key)}")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    except RecursionError:
        raise ConfigError(f"--set {key.strip()}", f"the value nests more than {MAX_NESTING} "
                          "levels deep") from None
    check_nesting(value, f"--set {key.strip()}")
    return path, value


def apply_overrides(data: dict[str, Any], overrides: list[str],
                    notes: list[str] | None = None) -> dict[str, Any]:
    """`--set key=value` texts applied to a raw scenario dict (a new dict)."""
    return apply_values(data, [parse_override(text) for text in overrides], notes)


def apply_values(data: dict[str, Any], values, notes: list[str] | None = None) -> dict[str, Any]:
    """(path, value) pairs, e.g. (["background", "rate"], 92), applied to a raw
    scenario dict; returns a new dict. notes: collects what was adjusted
    (a shortened run's warm-up and cool-down, see _fit_window)."""
    values = [(list(path), value) for path, value in values]
    check_alternatives([".".join(path) for path, _ in values])
    original = data
    data = copy.deepcopy(data)  # plain data (TOML: no shared or odd objects)
    for path, value in values:
        node = data
        for depth, part in enumerate(path[:-1]):
            if isinstance(node, list):  # [[training]]: training.1.start
                node = _list_item(node, part, path, depth)
                continue
            child = node.setdefault(part, {})
            if isinstance(child, list) and path[depth + 1].isdigit():
                node = child
                continue
            if not isinstance(child, dict):
                hint = (f" (a list: address one entry, e.g. {part}.0.{path[depth + 1]})"
                        if isinstance(child, list) else "")
                raise ConfigError(".".join(path), f"{part} is not a table{hint}")
            node = child
        if isinstance(node, list):
            raise ConfigError(".".join(path), "a list entry is a table: set one of its keys")
        _drop_alternative(node, tuple(path))
        node[path[-1]] = value
    _fit_window(original, data, {tuple(p) for p, _ in values}, notes)
    return data


def _list_item(items: list, part: str, path: list[str], depth: int) -> dict:
    if not part.isdigit() or int(part) >= len(items) or not isinstance(items[int(part)], dict):
        raise ConfigError(".".join(path), f"{'.'.join(path[:depth])} has entries "
                          f"0-{len(items) - 1}; got {shorten(part)}")
    return items[int(part)]


def _fit_window(before: dict, after: dict, paths: set, notes: list[str] | None) -> None:
    """A run shortened with only run.duration given (`--set run.duration=0.3`)
    to less than the inherited warm-up + cool-down keeps their share of the
    run: both are scaled by new / old duration, and a note says so. Longer
    runs keep their warm-up and cool-down (a time for TCP and the queues to
    settle, not a fraction), as does anything that gives them explicitly."""
    if ("run", "duration") not in paths or ("run", "warmup") in paths \
            or ("run", "cooldown") in paths:
        return
    old, new = before.get("run", {}), after.get("run")
    if not isinstance(old, dict) or not isinstance(new, dict):
        return
    try:  # anything unreadable is reported by the validation that follows
        default = RunConfig.model_fields
        old_d = parse_time(old.get("duration", default["duration"].default), "run.duration")
        warmup = parse_time(old.get("warmup", default["warmup"].default), "run.warmup", True)
        cooldown = parse_time(old.get("cooldown", default["cooldown"].default), "run.cooldown",
                              True)
        new_d = parse_time(new["duration"], "run.duration")
    except ConfigError:
        return
    if warmup + cooldown < new_d or warmup + cooldown >= old_d:
        return
    scale = new_d / old_d
    new["warmup"], new["cooldown"] = warmup * scale, cooldown * scale
    if notes is not None:
        notes.append(f"run.duration = {new_d:g} s is shorter than the inherited warm-up + "
                     f"cool-down ({warmup:g} + {cooldown:g} s): both scaled with the "
                     f"duration to {warmup * scale:g} + {cooldown * scale:g} s; set "
                     "run.warmup and run.cooldown to choose them")


def load_scenario(path: str | Path | None = None, overrides: list[str] = (),
                  notes: list[str] | None = None) -> Scenario:
    """Read a scenario file (None: the built-in default), apply overrides, validate.
    notes: collects adjustments made to the overrides (see apply_values)."""
    data = read_scenario_dict(path) if path is not None else default_scenario_dict()
    return scenario_from_dict(apply_overrides(data, list(overrides), notes))


def default_scenario_dict() -> dict[str, Any]:
    return read_scenario_dict(SCENARIOS_DIR / "default.toml")


def read_scenario_dict(path: str | Path, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A scenario file as a plain dict. `base = "<scenario>"` makes it start from
    another scenario file (a name in workloads/scenarios, or a path relative to
    this file) whose tables it overrides key by key."""
    path = resolve_scenario_file(path, Path.cwd(), "scenario")
    if path in _seen:
        raise ConfigError("base", "scenario files include each other: "
                          + " -> ".join(str(p) for p in (*_seen, path)))
    data = read_toml(path, "scenario")
    if "base" not in data:
        return data
    base = data.pop("base")
    if not isinstance(base, str):
        raise ConfigError("base", f"expected a scenario name or path, got {shorten(base)}")
    base_path = resolve_scenario_file(base, path.parent, "base")
    return merge_tables(read_scenario_dict(base_path, (*_seen, path)), data)


def resolve_scenario_file(name: str | Path, relative_to: Path, what: str) -> Path:
    if not isinstance(name, (str, Path)) or not str(name):
        raise ConfigError(what, f"expected a scenario name or path, got {shorten(name)} (built-in: "
                          f"{', '.join(builtin_names(SCENARIOS_DIR, '.toml'))})")
    candidates = [Path(name), relative_to / name, SCENARIOS_DIR / name,
                  SCENARIOS_DIR / f"{name}.toml"]
    for c in candidates:
        if c.is_file():
            return c.resolve()
    raise ConfigError(what, f"scenario file not found: {name} (built-in: "
                      f"{', '.join(builtin_names(SCENARIOS_DIR, '.toml'))})")


# Keys that give one quantity two ways: setting one (in a derived file or with
# --set) drops the other inherited from the base.
_ALTERNATIVES = {("background", "rate"): "load", ("background", "load"): "rate"}


def alternative_field(field: str) -> str | None:
    """The other way of giving `field`'s quantity (background.load for
    background.rate and back), or None."""
    path = tuple(field.split("."))
    other = _ALTERNATIVES.get(path)
    return None if other is None else ".".join((*path[:-1], other))


def check_alternatives(fields, prefix: str = "") -> None:
    """Fields set together (one list of --set or API overrides, one grid
    table) may not give one quantity two ways; `prefix` names the table
    ("set.", "points[0].")."""
    fields = list(fields)
    for f in fields:
        other = alternative_field(f)
        if other is not None and other in fields:
            raise both_given(f"{prefix}{f}", f"{prefix}{other}")


def _drop_alternative(table: dict[str, Any], path: tuple[str, ...]) -> None:
    other = _ALTERNATIVES.get(path)
    if other is not None:
        table.pop(other, None)


def merge_tables(base: dict[str, Any], top: dict[str, Any],
                 _path: tuple[str, ...] = ()) -> dict[str, Any]:
    """`top` over `base`, recursing into tables present in both."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_tables(out[key], value, (*_path, key))
        else:
            if _ALTERNATIVES.get((*_path, key)) not in top:  # both in one file: an error later
                _drop_alternative(out, (*_path, key))
            out[key] = value
    return out
