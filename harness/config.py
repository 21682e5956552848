"""Scenario configuration: typed dataclasses, TOML loading, `--set` overrides
and validation.

Every error is a ConfigError that names the field (``background.rate``) and
what is allowed, and is raised before ns-3 is touched. Values with units
accept strings (``"10Gbps"``, ``"10us"``) or plain numbers in bit/s and
seconds.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# ConfigError and the unit readers live in their own small modules; they are
# re-exported here, where every caller has always found them.
from harness.errors import ConfigError, ConfigTypeError, UnknownKeyError, shorten  # noqa: F401
from harness.units import (INT64_MAX, UINT16_MAX, UINT32_MAX, finite,  # noqa: F401
                           parse_bytes, parse_link_rate, parse_rate, parse_time)

from harness.paths import (CDF_DIR, PROFILES_DIR, SCENARIOS_DIR,  # noqa: F401
                           SWEEPS_DIR, TOPOLOGIES_DIR, WORKLOADS_DIR, builtin_names,
                           resolve_data_file)
from harness import training

QDISCS = ("pfifo_fast", "prio", "drr")
CONGESTION_CONTROLS = {"newreno": "ns3::TcpNewReno", "cubic": "ns3::TcpCubic",
                       "dctcp": "ns3::TcpDctcp"}


# --------------------------------------------------------------------------
# sections

# MTU minus TCP segment size in the reference study: 1500 - 1380 (IP and TCP
# headers with options, and headroom), kept for jumbo frames.
SEGMENT_OVERHEAD_BYTES = 120


# Each scenario field carries its one-line description, metadata["doc"]
# (and, where the TOML value is not the Python type, metadata["type"]; where
# the default is derived, metadata["default"]): harness.keys renders them as
# the key reference of the documentation (docs/user-guide/scenario-keys.md).


@dataclass(frozen=True)
class RunConfig:
    duration: float = field(default=3.0, metadata={
        "doc": "simulated seconds; with `min_iterations` only a cap, lengthened if needed",
        "type": "time"})
    warmup: float = field(default=0.5, metadata={
        "doc": "flows and iterations starting before this are not measured", "type": "time"})
    cooldown: float = field(default=0.5, metadata={
        "doc": "nor those starting in the last `cooldown`; the run ends sooner once the "
               "measured flows are done", "type": "time"})
    utilization_interval: float = field(default=0.1, metadata={
        "doc": "length of the link-utilisation intervals", "type": "time"})
    # measure at least this many complete training iterations: the run is made
    # long enough at the job's no-contention pace (harness.run.plan); 0 = off
    min_iterations: int = field(default=0, metadata={
        "doc": "end the run once every worker completed this many iterations started after "
               "warm-up (`duration` is then a cap); 0 = off"})

    @property
    def window(self) -> tuple[float, float]:
        """Flows and iterations inside [start, end] seconds are measured."""
        return self.warmup, self.duration - self.cooldown


@dataclass(frozen=True)
class TopologyConfig:
    file: str = field(default="single-tor", metadata={
        "doc": "a topology file: a name in topologies/ or a path"})
    # Keys of the topology file overridden by the scenario (e.g. hosts = 4).
    overrides: dict[str, Any] = field(default_factory=dict, metadata={
        "doc": "any key of the topology file, overriding the file's value"})


@dataclass(frozen=True)
class LinkChange:
    """From time `at` (s), the links of `hosts` (() = every link) run at `rate_bps`."""

    at: float = field(metadata={"doc": "when the change happens", "type": "time"})
    rate_bps: float = field(metadata={"doc": "the links' new rate (scaled by `scale`)",
                                      "type": "rate"})
    hosts: tuple[int, ...] = field(default=(), metadata={
        "doc": "hosts whose links change, both directions; empty = every link"})


@dataclass(frozen=True)
class LoadStep:
    """From time `at` (s), background flows arrive at `rate` flows/s per host,
    or at the rate that offers `load` per host link (one of the two)."""

    at: float = field(metadata={"doc": "when the step starts", "type": "time"})
    rate: float | None = field(default=None, metadata={
        "doc": "flows/s per host from `at` on (0 = no flows); give rate or load"})
    load: float | None = field(default=None, metadata={
        "doc": "offered load per host link from `at` on, below 1; give rate or load"})


@dataclass(frozen=True)
class Slowdown:
    """Worker `worker` (rank) computes `factor` times slower in [start, end) s."""

    worker: int = field(metadata={"doc": "the worker's rank"})
    start: float = field(metadata={"doc": "start of the period", "type": "time"})
    end: float = field(metadata={"doc": "end of the period (inside the run)", "type": "time"})
    factor: float = field(metadata={"doc": "compute takes this many times longer, > 0"})


STRAGGLER_DISTRIBUTIONS = ("fixed", "uniform", "lognormal")
PLACEMENTS = ("packed", "spread")
#: Jobs after the first without a `port` listen from the previous job's port + this.
JOB_PORT_STRIDE = 10


@dataclass(frozen=True)
class Straggler:
    """Workers `workers` (ranks; () = every worker) compute each iteration
    `factor` times slower, the factor drawn per worker and iteration from a
    seeded distribution (harness.training.stragglers): "fixed" (always
    `factor`), "uniform" in [factor_min, factor_max], or "lognormal"
    (median x e^(sigma Z), Z standard normal: below 1 in some iterations)."""

    workers: tuple[int, ...] = field(default=(), metadata={
        "doc": 'ranks of the straggling workers, or "all"', "type": 'list of integers or "all"',
        "default": '"all"'})
    distribution: str = field(default="fixed", metadata={
        "doc": "`fixed`, `uniform` or `lognormal`"})
    factor: float = field(default=1.0, metadata={"doc": "fixed: the factor, > 0"})
    factor_min: float = field(default=1.0, metadata={"doc": "uniform: lower end, > 0"})
    factor_max: float = field(default=1.0, metadata={"doc": "uniform: upper end, >= factor_min"})
    sigma: float = field(default=0.0, metadata={
        "doc": "lognormal: sigma of the normal exponent, below 2 (required)"})
    median: float = field(default=1.0, metadata={"doc": "lognormal: the median factor, > 0"})


@dataclass(frozen=True)
class BufferConfig:
    """How the bands of an egress share buffer space ([network.buffer]):
    "per_band" (each band its own limit of `size`), "shared" (the default: one limit of
    `size` for all bands of the port) or "dynamic" (a pool of `size`, the
    port's or the whole switch's, `pool`, where a band may hold up to alpha x
    the free pool; `alpha` for every band or per class, others 1). `size` in
    `unit` ("packets" or "bytes"); None = network.band_limit_packets packets."""

    # why shared is the default: docs/findings/what-the-answer-depends-on.md
    model: str = field(default="shared", metadata={
        "doc": "`shared` (one limit per port), `per_band` (one per band) or `dynamic` "
               "(a pool with dynamic thresholds)"})
    size: int | None = field(default=None, metadata={
        "doc": 'the limit or pool: packets (an integer) or bytes (e.g. "1.5MB")',
        "type": "integer or size", "default": "network.band_limit_packets packets"})
    unit: str = "packets"
    pool: str = field(default="port", metadata={
        "doc": "dynamic only: one pool per egress (`port`) or per switch (`switch`)"})
    alpha: float | dict[str, float] = field(default=1.0, metadata={
        "doc": "dynamic only: a band may hold alpha x the free pool; one number, or per "
               "class (e.g. { high = 8, low = 0.5 }; others 1); 1/64..64",
        "type": "number or table"})

    def size_in(self, band_limit_packets: int) -> tuple[int, str]:
        """(size, unit), the default filled in."""
        return (band_limit_packets, "packets") if self.size is None else (self.size, self.unit)


@dataclass(frozen=True)
class NetworkConfig:
    qdisc: str = field(default="pfifo_fast", metadata={
        "doc": "queue discipline of every egress: `pfifo_fast`, `prio` or `drr` (weighted "
               "deficit round robin)"})
    bands: int = field(default=3, metadata={  # prio: 2..4 (pfifo_fast: always 3)
        "doc": "prio and drr: number of bands, 2-4 (pfifo_fast has 3)"})
    band_limit_packets: int = field(default=1000, metadata={
        "doc": "packets: the buffer model's default `size` (a port's limit under `shared`, "
               "each band's under `per_band`)"})
    buffer: BufferConfig = field(default_factory=BufferConfig, metadata={  # every egress ...
        "doc": "how the bands of an egress share buffer space (the table below)",
        "type": "table"})
    host_buffer: BufferConfig | None = field(default=None, metadata={  # ... but the hosts'
        "doc": "the hosts' egresses, if they differ: the keys of `buffer`", "type": "table",
        "default": "`buffer`"})
    classes: dict[str, int] = field(default_factory=dict, metadata={  # {} = defaults
        "doc": "class name -> band; default per qdisc: `high` band 0, `low` the last",
        "type": "table"})
    ack_class: str = field(default="data", metadata={
        "doc": "class of pure ACKs: `data` (their data's class) or a class name"})
    mtu: int = field(default=1500, metadata={
        "doc": "bytes, 576-9000; 9000 = jumbo frames (fewer packets: faster, but another "
               "network)"})
    link_changes: tuple[LinkChange, ...] = field(default=(), metadata={
        "doc": "link rates changing during the run (the entries below)",
        "type": "list of tables"})
    # drr: class name -> weight (bands without a named class weigh 1)
    weights: dict[str, float] = field(default_factory=dict, metadata={
        "doc": "drr only: class name -> weight, e.g. { high = 3, low = 1 }; others weigh 1",
        "type": "table"})
    # ECN step marking: K packets for every band (int), or class name -> K
    # (bands without a named class do not mark); None = no marking
    ecn_threshold: int | dict[str, int] | None = field(default=None, metadata={
        "doc": "ECN step marking at K queued packets: one K for every band, or per class "
               "(e.g. { low = 20 }); scaled by `scale`", "type": "integer or table",
        "default": "no marking"})

    @property
    def marks_ecn(self) -> bool:
        return self.ecn_threshold is not None

    @property
    def hosts_buffer(self) -> BufferConfig:
        """The buffer model of the hosts' egresses."""
        return self.buffer if self.host_buffer is None else self.host_buffer


@dataclass(frozen=True)
class TcpConfig:
    congestion_control: str = field(default="newreno", metadata={
        "doc": "`newreno`, `cubic` or `dctcp` (needs network.ecn_threshold)"})
    segment_size: int = field(default=1380, metadata={  # network.mtu - SEGMENT_OVERHEAD_BYTES
        "doc": "bytes per TCP segment, 500-8948", "default": "network.mtu - 120 (1380)"})
    initial_cwnd: int = field(default=10, metadata={"doc": "initial window, segments"})
    buffer_bytes: int = field(default=131072 * 256, metadata={  # 32 MiB
        "doc": "send and receive buffer of every socket, bytes (65,536 to 2^32 - 1)"})
    ecn: bool | None = field(default=None, metadata={  # TcpSocketBase::UseEcn
        "doc": "negotiate ECN; dctcp always does", "default": "on when the queues mark"})


@dataclass(frozen=True)
class BackgroundConfig:
    enabled: bool = field(default=True, metadata={"doc": "run background flows"})
    workload: str = field(default="websearch", metadata={
        "doc": "flow-size distribution: a CSV name in workloads/cdf/ or a path"})
    rate: float | None = field(default=None, metadata={
        "doc": "Poisson arrivals, flows/s per host (lambda); give rate or load"})
    load: float | None = field(default=None, metadata={
        "doc": "or the offered load per host link, 0 < load < 1"})
    traffic_class: str = field(default="high", metadata={
        "doc": "traffic class of the background flows"})
    hosts: tuple[int, ...] = field(default=(), metadata={
        "doc": "hosts that send and receive (at least 2); empty = every host"})
    port: int = field(default=9000, metadata={"doc": "the flows' destination port"})
    steps: tuple[LoadStep, ...] = field(default=(), metadata={
        "doc": "piecewise-constant arrival rate (the entries below)", "type": "list of tables"})


@dataclass(frozen=True)
class TrainingConfig:
    """One training job: ring allreduce or parameter servers (docs/model/training.md)."""

    enabled: bool = field(default=False, metadata={
        "doc": "run the job (in a [[training]] list: default true)"})
    architecture: str = field(default="ring", metadata={
        "doc": "`ring` (ring allreduce) or `ps` (parameter servers)"})
    profile: str = field(default="resnet50-like", metadata={
        "doc": "model profile: a CSV name in workloads/profiles/ or a path"})
    ratio: float | None = field(default=None, metadata={  # compute-to-network ratio R
        "doc": "compute-to-network ratio R: compute rescaled to R x the job's network time",
        "default": "the profile's compute"})
    model_bytes: int | None = field(default=None, metadata={  # M in R = T / (M 2(1-1/N) 8 / link)
        "doc": "M in R's definition, bytes", "default": "the profile's bytes"})
    workers: int = field(default=4, metadata={
        "doc": "workers (at least 2), on hosts 0.. unless `hosts` or `placement` is given"})
    hosts: tuple[int, ...] = field(default=(), metadata={
        "doc": "the workers' hosts (sets `workers`)"})
    policy: str = field(default="fifo", metadata={  # harness.schedulers.POLICIES
        "doc": "communication-scheduling policy; a ring takes fifo, priority, bytescheduler, p3"})
    # the policy's parameters, from [training.scheduler], checked and with
    # defaults filled in: ((name, value), ...)
    scheduler: tuple[tuple[str, Any], ...] = field(default=(), metadata={
        "doc": "[training.scheduler]: the policy's parameters (the table below)",
        "type": "table", "default": "the policy's"})
    barrier: bool = field(default=False, metadata={
        "doc": "ring: forward of layer 0 waits for every gradient of the last iteration"})
    priority: str = field(default="same", metadata={
        "doc": "the job's traffic class; `same` = the background's class"})
    # per-layer classes overriding `priority`: ((class, first, last), ...), from
    # TOML `layer_classes = { high = "0-9" }` (layers 0..9 in high, the rest `priority`)
    layer_classes: tuple[tuple[str, int, int], ...] = field(default=(), metadata={
        "doc": 'class -> layer range, e.g. { high = "0-9" }; other layers in `priority`',
        "type": "table"})
    fusion_buffer: int | None = field(default=None, metadata={
        "doc": "ring: tensor-fusion buffer, bytes", "default": "largest layer + 1"})
    port: int = field(default=5000, metadata={  # ps: port + class index
        "doc": "first port of the job (ps: one port per traffic class it uses)"})
    # parameter servers
    servers: int = field(default=1, metadata={"doc": "ps: number of shards K"})
    server_placement: str = field(default="dedicated", metadata={
        "doc": "ps: `dedicated` (the first hosts without a worker) or `colocated` "
               "(on workers 0..K-1)"})
    server_hosts: tuple[int, ...] = field(default=(), metadata={
        "doc": "ps: the shards' hosts (sets `servers`; a worker's host = co-located)"})
    aggregation: str = field(default="tensor", metadata={
        "doc": "ps: `tensor` or `chunk` (pulls overlap pushes)"})
    aggregation_chunk: int | None = field(default=None, metadata={
        "doc": "ps, chunk aggregation: the unit", "type": "size",
        "default": "the policy's chunk, else 64 KiB"})
    deadline_class: str | None = field(default=None, metadata={
        "doc": "ps: raise a transfer not yet in TCP to this class when its slack runs out",
        "default": "off"})
    # pulls of an iteration wait until every tensor of it is aggregated on every
    # shard (TensorFlow's synchronous PS, TicTac's setting): pulls do not overlap pushes
    pull_barrier: bool = field(default=False, metadata={
        "doc": "ps: an iteration's pulls wait until every tensor is aggregated on every "
               "shard (TensorFlow's synchronous PS)"})
    slowdowns: tuple[Slowdown, ...] = field(default=(), metadata={
        "doc": "periods in which a worker computes slower (the entries below)",
        "type": "list of tables"})
    straggler: Straggler | None = field(default=None, metadata={
        "doc": "workers computing slower by a random factor per iteration (the table below)",
        "type": "table", "default": "none"})
    # ps: each sender commits chunks at least this far apart (s): the framework's
    # per-operation cost, which makes small partitions expensive on fast links
    chunk_overhead: float = field(default=0.0, metadata={
        "doc": "ps: each sender commits chunks at least this far apart (a per-operation cost)",
        "type": "time"})
    # several jobs ([[training]]): the job's name in tables and summary, when its
    # workers start (s), and where they go when `hosts` is not given: "packed"
    # (fill one leaf switch, then the next) or "spread" (round-robin over leaves)
    name: str = field(default="", metadata={
        "doc": "[[training]]: the job's name (letters, digits, _ . -; unique)",
        "default": '"job<i>"'})
    start: float = field(default=0.0, metadata={
        "doc": "[[training]]: when the job's workers start", "type": "time"})
    placement: str | None = field(default=None, metadata={
        "doc": "[[training]]: instead of `hosts`, `packed` (a leaf with room for the whole "
               "job, else leaf after leaf) or `spread` (one host per leaf in turn)",
        "default": "`packed` with several jobs"})

    @property
    def scheduler_params(self) -> dict[str, Any]:
        return dict(self.scheduler)


@dataclass(frozen=True)
class Scenario:
    name: str = field(default="scenario", metadata={
        "doc": "names the run and sweep directories"})
    seed: int = field(default=1, metadata={
        "doc": "everything random (flow schedule, stragglers) follows from it"})
    # time-preserving scale-down factor k: rates and sizes / k, times kept
    # (harness.scaling); 1 = the network as written
    scale: int = field(default=1, metadata={
        "doc": "time-preserving scale-down factor k, 1-1000: rates and sizes / k, times kept"})
    run: RunConfig = field(default_factory=RunConfig)
    topology: TopologyConfig = field(default_factory=TopologyConfig)
    network: NetworkConfig = field(default_factory=NetworkConfig)
    tcp: TcpConfig = field(default_factory=TcpConfig)
    background: BackgroundConfig = field(default_factory=BackgroundConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    # [[training]] as a list: the jobs after the first (`training`)
    more_training: tuple[TrainingConfig, ...] = ()

    @property
    def jobs(self) -> tuple[TrainingConfig, ...]:
        """Every training job of the scenario, enabled or not, in file order."""
        return (self.training, *self.more_training)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def digest(self) -> str:
        """Hash of the resolved scenario: identical inputs, identical digest."""
        data = self.to_dict()
        # Fields added after sweeps were already being run enter the digest
        # only when used, so a scenario that does not use them keeps its digest
        # (and a sweep started before them can still be resumed).
        for section, key in _DIGEST_WHEN_USED:
            if data[section][key] == dataclasses.asdict(_DEFAULT_SECTIONS[section])[key]:
                del data[section][key]
        if not data["more_training"]:
            del data["more_training"]
        blob = json.dumps(data, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


_DIGEST_WHEN_USED = (("training", "pull_barrier"), ("training", "slowdowns"),
                     ("training", "straggler"),
                     ("training", "chunk_overhead"), ("training", "name"),
                     ("training", "start"), ("training", "placement"),
                     ("background", "steps"), ("network", "link_changes"),
                     ("network", "weights"), ("network", "ecn_threshold"), ("tcp", "ecn"),
                     ("network", "host_buffer"))
# network.buffer is always in the digest: its default changed from per_band to
# shared, so a scenario run before means something else now and must not be
# taken for a finished cell of a resumed sweep.
_DEFAULT_SECTIONS = {"training": TrainingConfig(), "background": BackgroundConfig(),
                     "network": NetworkConfig(), "tcp": TcpConfig()}


# --------------------------------------------------------------------------
# reading raw dicts into sections

_SECTION_KEYS = {
    "run": {"duration": "duration", "warmup": "warmup", "cooldown": "cooldown",
            "utilization_interval": "utilization_interval", "min_iterations": "min_iterations"},
    "network": {k: k for k in ("qdisc", "bands", "band_limit_packets", "classes",
                               "ack_class", "mtu", "link_changes", "weights",
                               "ecn_threshold", "buffer", "host_buffer")},
    "tcp": {k: k for k in ("congestion_control", "segment_size", "initial_cwnd",
                           "buffer_bytes", "ecn")},
    "background": {"enabled": "enabled", "workload": "workload", "rate": "rate",
                   "load": "load", "class": "traffic_class", "hosts": "hosts",
                   "port": "port", "steps": "steps"},
    "training": {k: k for k in ("enabled", "architecture", "profile", "ratio", "workers",
                                "hosts", "policy", "scheduler", "barrier", "priority",
                                "layer_classes", "fusion_buffer", "model_bytes", "port",
                                "servers", "server_placement", "server_hosts", "aggregation",
                                "aggregation_chunk", "deadline_class", "pull_barrier",
                                "slowdowns", "chunk_overhead", "straggler", "name", "start",
                                "placement")},
}
_TOP_KEYS = ("name", "seed", "scale", "run", "topology", "network", "tcp", "background", "training")
ARCHITECTURES = tuple(training.ARCHITECTURES)  # the plug-ins' registry
SERVER_PLACEMENTS = ("dedicated", "colocated")
AGGREGATIONS = ("tensor", "chunk")


def _check_keys(data: dict, allowed, where: str) -> None:
    for key in data:
        if key not in allowed:
            prefix = f"{where}." if where else ""
            raise UnknownKeyError(f"{prefix}{key}",
                                  f"unknown key; allowed: {', '.join(sorted(allowed))}")


def _int(value: Any, where: str, minimum: int | None = None, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigTypeError(where, f"expected an integer, got {shorten(value)}")
    if minimum is not None and value < minimum:
        raise ConfigError(where, f"must be >= {minimum:,} (got {value:,})")
    if maximum is not None and value > maximum:
        raise ConfigError(where, f"must be <= {maximum:,} (got {value:,})")
    return value


def _float(value: Any, where: str, positive: bool = True) -> float:
    number = finite(value, where)  # inf, nan and 1e400 are errors too
    if positive and not number > 0:
        raise ConfigError(where, f"must be > 0 (got {value})")
    return number


def _str(value: Any, where: str, choices=None) -> str:
    if not isinstance(value, str):
        raise ConfigTypeError(where, f"expected a string, got {shorten(value)}")
    if choices is not None and value not in choices:
        raise ConfigError(where, f"unknown value {shorten(value)}; allowed: {', '.join(choices)}")
    return value


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigTypeError(where, f"expected true or false, got {shorten(value)}")
    return value


def _finite(value: Any, where: str, minimum: float = 0.0, strict: bool = False,
            below: float | None = None) -> float:
    """A finite number >= minimum (> minimum when strict; < below if given)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigTypeError(where, f"expected a number, got {shorten(value)}")
    value = float(value)
    if not math.isfinite(value):
        raise ConfigError(where, f"must be a finite number (got {value})")
    if value < minimum or (strict and value == minimum):
        raise ConfigError(where, f"must be {'>' if strict else '>='} {minimum:g} (got {value:g})")
    if below is not None and value >= below:
        raise ConfigError(where, f"must be < {below:g} (got {value:g})")
    return value


def _time_value(value: Any, where: str) -> float:
    """A time in the run: seconds >= 0 (a number or "1.5s", "200ms"), finite."""
    if isinstance(value, str):
        return parse_time(value, where, allow_zero=True)
    return _finite(value, where)


def _table_list(value: Any, where: str, keys: tuple[str, ...], required: tuple[str, ...],
                example: str) -> list[dict]:
    """A list of tables with only `keys`, each with every key in `required`."""
    if not isinstance(value, list):
        raise ConfigTypeError(where, f"expected a list of tables, e.g. {example}; "
                                     f"got {shorten(value)}")
    out = []
    for i, item in enumerate(value):
        here = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise ConfigTypeError(here, f"expected a table, e.g. {example}; got {shorten(item)}")
        _check_keys(item, keys, here)
        for key in required:
            if key not in item:
                raise ConfigError(f"{here}.{key}", f"missing; each entry needs "
                                  f"{', '.join(required)} (e.g. {example})")
        out.append(item)
    return out


def _link_changes(value: Any, where: str = "network.link_changes") -> tuple[LinkChange, ...]:
    example = '{ at = 1.0, rate = "500Mbps", hosts = [4] }'
    out = []
    for i, item in enumerate(_table_list(value, where, ("at", "rate", "hosts"), ("at", "rate"),
                                         example)):
        here = f"{where}[{i}]"
        rate = parse_link_rate(item["rate"], f"{here}.rate")
        if not math.isfinite(rate):
            raise ConfigError(f"{here}.rate", f"must be finite (got {shorten(item['rate'])})")
        hosts = _host_list(item["hosts"], f"{here}.hosts") if "hosts" in item else ()
        if "hosts" in item and not hosts:  # () is "every link": an empty list must not be
            raise ConfigError(f"{here}.hosts", "is empty, which names no host; list the "
                              "hosts whose links change, or leave hosts out for every link")
        out.append(LinkChange(_time_value(item["at"], f"{here}.at"), rate, hosts))
    return tuple(out)


def _load_steps(value: Any, where: str = "background.steps") -> tuple[LoadStep, ...]:
    example = "{ at = 1.0, load = 0.3 }"
    out = []
    for i, item in enumerate(_table_list(value, where, ("at", "rate", "load"), ("at",),
                                         example)):
        here = f"{where}[{i}]"
        if ("rate" in item) == ("load" in item):
            raise ConfigError(f"{here}.rate", "give either rate (flows/s per host) or load "
                              "(0..1) for each step")
        at = _time_value(item["at"], f"{here}.at")
        if "rate" in item:
            out.append(LoadStep(at, rate=_finite(item["rate"], f"{here}.rate")))
        else:
            out.append(LoadStep(at, load=_finite(item["load"], f"{here}.load", below=1.0)))
        if i and at <= out[i - 1].at:
            raise ConfigError(f"{here}.at", f"steps must be in increasing time order "
                              f"({at:g} s after {out[i - 1].at:g} s)")
    return tuple(out)


def _slowdowns(value: Any, where: str = "training.slowdowns") -> tuple[Slowdown, ...]:
    example = "{ worker = 1, start = 1.0, end = 1.5, factor = 2.0 }"
    out = []
    keys = ("worker", "start", "end", "factor")
    for i, item in enumerate(_table_list(value, where, keys, keys, example)):
        here = f"{where}[{i}]"
        s = Slowdown(_int(item["worker"], f"{here}.worker", 0),
                     _time_value(item["start"], f"{here}.start"),
                     _time_value(item["end"], f"{here}.end"),
                     _finite(item["factor"], f"{here}.factor", strict=True))
        if s.end <= s.start:
            raise ConfigError(f"{here}.end", f"must be after start ({s.end:g} s <= {s.start:g} s)")
        for j, other in enumerate(out):
            if other.worker == s.worker and s.start < other.end and other.start < s.end:
                raise ConfigError(here, f"overlaps {where}[{j}] (worker {s.worker})")
        out.append(s)
    return tuple(out)


def _straggler(value: Any, where: str = "training.straggler") -> Straggler:
    """{ workers = [1, 3] | "all", distribution = "lognormal", sigma = 0.2 }, or
    distribution "uniform" with factor_min, factor_max, or "fixed" with factor."""
    needs = {"fixed": ("factor",), "uniform": ("factor_min", "factor_max"),
             "lognormal": ("sigma",)}
    example = '{ workers = [1], distribution = "lognormal", sigma = 0.2 }'
    if not isinstance(value, dict):
        raise ConfigTypeError(where, f"expected a table, e.g. {example}; got {shorten(value)}")
    dist = _str(value.get("distribution", "fixed"), f"{where}.distribution",
                STRAGGLER_DISTRIBUTIONS)
    _check_keys(value, ("workers", "distribution", *needs[dist],
                        *(("median",) if dist == "lognormal" else ())), where)
    for key in needs[dist]:
        if key not in value:
            raise ConfigError(f"{where}.{key}", f"missing; distribution {dist!r} needs "
                              f"{', '.join(needs[dist])} (e.g. {example})")
    workers = value.get("workers", "all")
    out: dict[str, Any] = {"distribution": dist}
    if workers != "all":
        if not isinstance(workers, list) or not workers:
            raise ConfigTypeError(f"{where}.workers", 'expected a list of worker ranks or '
                                  f'"all", got {shorten(workers)}')
        out["workers"] = tuple(_int(w, f"{where}.workers[{i}]", 0) for i, w in enumerate(workers))
        if len(set(out["workers"])) != len(workers):
            raise ConfigError(f"{where}.workers", "lists a worker twice")
    for key in ("factor", "factor_min", "factor_max", "median"):
        if key in value:
            out[key] = _finite(value[key], f"{where}.{key}", strict=True)
    if "sigma" in value:
        out["sigma"] = _finite(value["sigma"], f"{where}.sigma", below=2.0)
    s = Straggler(**out)
    if s.factor_max < s.factor_min:
        raise ConfigError(f"{where}.factor_max", f"must be >= factor_min ({s.factor_max:g} < "
                          f"{s.factor_min:g})")
    return s


def _check_times(cfg: "Scenario") -> None:
    """Every time of a changing condition falls inside the run [0, duration)."""
    duration = cfg.run.duration
    times = [(f"network.link_changes[{i}].at", c.at) for i, c in
             enumerate(cfg.network.link_changes)]
    times += [(f"background.steps[{i}].at", s.at) for i, s in enumerate(cfg.background.steps)]
    for j, job in enumerate(cfg.jobs):
        at = "training" if len(cfg.jobs) == 1 else f"training[{j}]"
        for i, s in enumerate(job.slowdowns):
            times += [(f"{at}.slowdowns[{i}].start", s.start)]
            if s.end > duration:
                raise ConfigError(f"{at}.slowdowns[{i}].end", f"{s.end:g} s is after the end "
                                  f"of the run (run.duration = {duration:g} s)")
    for where, t in times:
        if t >= duration:
            raise ConfigError(where, f"{t:g} s is not inside the run [0, {duration:g}) s "
                              "(run.duration)")
    for j, job in enumerate(cfg.jobs):
        with job_fields(j, len(cfg.jobs)):
            _check_job_times(job, duration)


def _check_job_times(job: TrainingConfig, duration: float) -> None:
    if job.start >= duration:
        raise ConfigError("training.start", f"{job.start:g} s is not inside the run "
                          f"[0, {duration:g}) s (run.duration)")
    straggler = job.straggler
    for i, w in enumerate(straggler.workers if straggler is not None else ()):
        if w >= job.workers:
            raise ConfigError(f"training.straggler.workers[{i}]", f"no worker {w}; the job "
                              f"has workers 0-{job.workers - 1}")
    for i, s in enumerate(job.slowdowns):
        if s.worker >= job.workers:
            raise ConfigError(f"training.slowdowns[{i}].worker", f"no worker {s.worker}; the "
                              f"job has workers 0-{job.workers - 1}")


@contextlib.contextmanager
def job_fields(index: int, n_jobs: int):
    """With several jobs, an error of `training.x` inside this block names
    its job: `training[1].x` (the readers and plug-ins name `training.x`)."""
    try:
        yield
    except ConfigError as e:
        if n_jobs == 1 or not (e.field == "training" or e.field.startswith("training.")):
            raise
        message = str(e)[len(e.field) + 2:]
        raise type(e)(f"training[{index}]{e.field[len('training'):]}", message) from None


def _section(data: Any, name: str) -> dict:
    if not isinstance(data, dict):
        raise ConfigError(name, f"expected a table ([{name}]), got {shorten(data)}")
    _check_keys(data, _SECTION_KEYS[name], name)
    return {_SECTION_KEYS[name][k]: v for k, v in data.items()}


# LinkUtilizationTracker keys its counters by interval << 40 | ToS << 32 |
# application: 24 bits of interval number.
MAX_UTILIZATION_INTERVALS = 2**24 - 2


def _run(data: Any) -> RunConfig:
    d = _section(data, "run")
    out: dict[str, Any] = {}
    if "min_iterations" in d:
        out["min_iterations"] = _int(d.pop("min_iterations"), "run.min_iterations", 0, 1000)
    cfg = RunConfig(**out, **{k: parse_time(v, f"run.{k}", allow_zero=k in ("warmup", "cooldown"))
                              for k, v in d.items()})
    if cfg.warmup + cfg.cooldown >= cfg.duration:
        raise ConfigError("run.duration", f"must exceed warmup + cooldown "
                          f"({cfg.warmup:g} + {cfg.cooldown:g} s), got {cfg.duration:g} s; "
                          "set run.warmup and run.cooldown too")
    interval = cfg.utilization_interval
    if round(interval * 1e9) < 1:
        raise ConfigError("run.utilization_interval", f"{interval:g} s rounds to 0 ns; ns-3 "
                          "counts time in whole nanoseconds (at least 1e-9 s)")
    if cfg.duration / interval > MAX_UTILIZATION_INTERVALS:
        raise ConfigError("run.utilization_interval", f"{cfg.duration:g} s in intervals of "
                          f"{interval:g} s are more than the utilisation tracker's "
                          f"{MAX_UTILIZATION_INTERVALS:,} intervals; use at least "
                          f"{cfg.duration / MAX_UTILIZATION_INTERVALS:.3g} s")
    return cfg


def _topology(data: Any) -> TopologyConfig:
    if not isinstance(data, dict):
        raise ConfigError("topology", f"expected a table ([topology]), got {shorten(data)}")
    data = dict(data)
    file = _str(data.pop("file", TopologyConfig.file), "topology.file")
    return TopologyConfig(file=file, overrides=data)  # checked against the file's kind


def _network(data: Any) -> NetworkConfig:
    d = _section(data, "network")
    out: dict[str, Any] = {}
    if "qdisc" in d:
        out["qdisc"] = _str(d["qdisc"], "network.qdisc", QDISCS)
    if "bands" in d:
        out["bands"] = _int(d["bands"], "network.bands", 2, 4)
    if "band_limit_packets" in d:
        # a uint32 packet count in ns-3's QueueSize
        out["band_limit_packets"] = _int(d["band_limit_packets"], "network.band_limit_packets",
                                         1, UINT32_MAX)
    if "mtu" in d:
        out["mtu"] = _int(d["mtu"], "network.mtu", 576, 9000)
    if "link_changes" in d:
        out["link_changes"] = _link_changes(d["link_changes"])
    if "ack_class" in d:
        out["ack_class"] = _str(d["ack_class"], "network.ack_class")
    if "classes" in d:
        classes = d["classes"]
        if not isinstance(classes, dict) or not classes:
            raise ConfigError("network.classes",
                              "expected a non-empty table of class name -> band number")
        out["classes"] = {str(k): _int(v, f"network.classes.{k}", 0) for k, v in classes.items()}
    if "weights" in d:
        out["weights"] = _weights(d["weights"], out.get("qdisc", NetworkConfig.qdisc))
    for key in ("buffer", "host_buffer"):
        if key in d:
            out[key] = _buffer(d[key], f"network.{key}")
            if out[key].size is not None and "band_limit_packets" in d:
                raise ConfigError(f"network.{key}.size", "give the buffer's size here or "
                                  "network.band_limit_packets (its default), not both")
    if "ecn_threshold" in d:
        limit = ("network.band_limit_packets",
                 out.get("band_limit_packets", NetworkConfig.band_limit_packets))
        buffer = out.get("buffer")
        if buffer is not None and buffer.size is not None and buffer.unit == "packets":
            limit = ("network.buffer.size", buffer.size)
        out["ecn_threshold"] = _ecn_threshold(d["ecn_threshold"], *limit)
    return NetworkConfig(**out)


BUFFER_MODELS = ("per_band", "shared", "dynamic")
BUFFER_POOLS = ("port", "switch")
_BUFFER_KEYS = ("model", "size", "pool", "alpha")
#: Choudhury and Hahne's alpha spans 1/64..64 in switch ASICs; beyond, a band
#: could hold the whole pool (or nothing) and the model stops meaning anything.
ALPHA_RANGE = (1 / 64, 64.0)


def _buffer(data: Any, where: str) -> BufferConfig:
    """[network.buffer]: model, size (packets as an integer, or bytes as
    "150KB"), pool and alpha (dynamic thresholds only)."""
    if not isinstance(data, dict):
        raise ConfigTypeError(where, f"expected a table with keys {', '.join(_BUFFER_KEYS)} "
                              f"(e.g. {{ model = \"shared\" }}), got {shorten(data)}")
    _check_keys(data, _BUFFER_KEYS, where)
    out: dict[str, Any] = {}
    if "model" in data:
        out["model"] = _str(data["model"], f"{where}.model", BUFFER_MODELS)
    model = out.get("model", BufferConfig.model)
    if "size" in data:
        size = data["size"]
        if isinstance(size, str):
            # ns-3 keeps a QueueSize as a uint32
            out["size"] = parse_bytes(size, f"{where}.size", maximum=UINT32_MAX)
            out["unit"] = "bytes"
            if out["size"] < 1500:
                raise ConfigError(f"{where}.size", f"{size!r} holds no full packet; use at "
                                  "least \"1500B\" or a packet count (an integer)")
        else:
            out["size"] = _int(size, f"{where}.size", 1, UINT32_MAX)
    for key in ("pool", "alpha"):
        if key in data and model != "dynamic":
            raise ConfigError(f"{where}.{key}", f"applies to model = \"dynamic\" only (got "
                              f"{model!r}); leave it out or set {where}.model = \"dynamic\"")
    if "pool" in data:
        out["pool"] = _str(data["pool"], f"{where}.pool", BUFFER_POOLS)
    if "alpha" in data:
        out["alpha"] = _alpha(data["alpha"], f"{where}.alpha")
    return BufferConfig(**out)


def _alpha(value: Any, where: str) -> float | dict[str, float]:
    """A dynamic-threshold factor for every band, or { class = alpha, ... }."""
    lo, hi = ALPHA_RANGE

    def one(v: Any, here: str) -> float:
        a = _finite(v, here, strict=True)
        if not lo <= a <= hi:
            raise ConfigError(here, f"must be within 1/64..64 (a band may hold alpha x the "
                              f"free pool; switch ASICs use 1/16..8), got {v}")
        return a

    return _per_class(value, where, one, "a number (e.g. 1) or a non-empty table of class "
                      "name -> alpha (e.g. { high = 8, low = 0.5 })")


def _per_class(value: Any, where: str, one, expected: str):
    """A setting for every band, `one(value, where)`, or per class, a table
    { class = value, ... } read with `one` for each; `expected` describes both."""
    if isinstance(value, dict):
        if not value:
            raise ConfigError(where, f"expected {expected}")
        return {str(k): one(v, f"{where}.{k}") for k, v in value.items()}
    return one(value, where)


def _weights(value: Any, qdisc: str, where: str = "network.weights") -> dict[str, float]:
    """{ high = 3, low = 1 }: class name -> DRR weight (a finite number > 0).
    Class names are checked against the classes in harness.qdisc.class_table."""
    if qdisc != "drr":
        raise ConfigError(where, f'applies to network.qdisc = "drr" only (got {shorten(qdisc)}); '
                          f"set network.qdisc = \"drr\" or leave weights out")
    if not isinstance(value, dict) or not value:
        raise ConfigTypeError(where, "expected a non-empty table of class name -> weight, "
                              f"e.g. {{ high = 3, low = 1 }}; got {shorten(value)}")
    return {str(k): _finite(v, f"{where}.{k}", strict=True) for k, v in value.items()}


def _ecn_threshold(value: Any, limit_field: str, band_limit: int,
                   where: str = "network.ecn_threshold") -> int | dict[str, int]:
    """K in packets for every band, or { class = K, ... } for some bands:
    1 <= K <= the band's limit in packets (`limit_field`)."""
    def one(v: Any, here: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ConfigTypeError(here, f"expected a queue length in packets (an integer "
                                  f"1..{limit_field} = {band_limit:,}), got {shorten(v)}")
        if v > band_limit:
            raise ConfigError(here, f"{v:,} packets is beyond the band's limit "
                              f"({limit_field} = {band_limit:,}): it would never mark")
        return _int(v, here, 1)

    return _per_class(value, where, one, "packets (e.g. 20) or a non-empty table of class "
                      "name -> packets (e.g. { low = 20 })")


def _tcp(data: Any) -> TcpConfig:
    d = _section(data, "tcp")
    out: dict[str, Any] = {}
    if "congestion_control" in d:
        out["congestion_control"] = _str(d["congestion_control"], "tcp.congestion_control",
                                         tuple(CONGESTION_CONTROLS))
    if "segment_size" in d:
        out["segment_size"] = _int(d["segment_size"], "tcp.segment_size", 500, 8948)
    if "initial_cwnd" in d:
        # checked against the segment size in scenario_from_dict: ns-3 keeps the
        # window in bytes as a uint32
        out["initial_cwnd"] = _int(d["initial_cwnd"], "tcp.initial_cwnd", 1, UINT32_MAX)
    if "buffer_bytes" in d:
        # ns-3's TcpSocket SndBufSize / RcvBufSize are uint32
        out["buffer_bytes"] = _int(d["buffer_bytes"], "tcp.buffer_bytes", 65536, UINT32_MAX)
    if "ecn" in d:
        out["ecn"] = _bool(d["ecn"], "tcp.ecn")
    return TcpConfig(**out)


def _check_ecn(net: NetworkConfig, tcp: TcpConfig) -> None:
    """DCTCP needs queues that mark ECN (and ECN on, which it always is)."""
    if tcp.congestion_control != "dctcp":
        return
    if not net.marks_ecn:
        raise ConfigError("tcp.congestion_control", "\"dctcp\" needs ECN marking in the "
                          "queues, or it runs without its congestion signal: set "
                          "network.ecn_threshold (K packets, e.g. 20, or per class "
                          "{ low = 20 }), or use newreno or cubic")
    if tcp.ecn is False:
        raise ConfigError("tcp.ecn", "\"dctcp\" always negotiates ECN (ns-3's TcpDctcp turns "
                          "it on); leave tcp.ecn out or set it to true")


def _host_list(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise ConfigTypeError(where, f"expected a list of host indices, got {shorten(value)}")
    hosts = tuple(_int(h, f"{where}[{i}]", 0) for i, h in enumerate(value))
    if len(set(hosts)) != len(hosts):
        raise ConfigError(where, "lists a host twice")
    return hosts


def _background(data: Any) -> BackgroundConfig:
    d = _section(data, "background")
    out: dict[str, Any] = {}
    if "enabled" in d:
        out["enabled"] = _bool(d["enabled"], "background.enabled")
    if "workload" in d:
        out["workload"] = _str(d["workload"], "background.workload")
    if "rate" in d:
        out["rate"] = _float(d["rate"], "background.rate")
    if "load" in d:
        out["load"] = _float(d["load"], "background.load")
        if out["load"] >= 1:
            raise ConfigError("background.load", f"must be < 1 (got {out['load']})")
    if "rate" in out and "load" in out:
        raise both_given("background.rate", "background.load")
    if "traffic_class" in d:
        out["traffic_class"] = _str(d["traffic_class"], "background.class")
    if "hosts" in d:
        out["hosts"] = _host_list(d["hosts"], "background.hosts")
        if len(out["hosts"]) == 1:
            raise ConfigError("background.hosts", "needs at least 2 hosts (source != destination)")
    if "port" in d:
        out["port"] = _int(d["port"], "background.port", 1, 65535)
    if "steps" in d:
        out["steps"] = _load_steps(d["steps"])
    cfg = BackgroundConfig(**out)
    if cfg.enabled and cfg.rate is None and cfg.load is None:
        raise ConfigError("background.rate",
                          "background is enabled: give rate (flows/s per host) or load (0..1)")
    return cfg


def _training(data: Any) -> TrainingConfig:
    d = _section(data, "training")
    out: dict[str, Any] = {}
    if "enabled" in d:
        out["enabled"] = _bool(d["enabled"], "training.enabled")
    if "profile" in d:
        out["profile"] = _str(d["profile"], "training.profile")
    if "ratio" in d:
        out["ratio"] = _float(d["ratio"], "training.ratio")
    if "workers" in d:
        out["workers"] = _int(d["workers"], "training.workers", 2)
    if "architecture" in d:
        out["architecture"] = _str(d["architecture"], "training.architecture", ARCHITECTURES)
    if "hosts" in d:
        out["hosts"] = _host_list(d["hosts"], "training.hosts")
        if len(out["hosts"]) < 2:
            raise ConfigError("training.hosts", "a job needs at least 2 workers")
        out["workers"] = len(out["hosts"])
    if "policy" in d:
        out["policy"] = _str(d["policy"], "training.policy")
    if "servers" in d:
        out["servers"] = _int(d["servers"], "training.servers", 1)
    if "server_placement" in d:
        out["server_placement"] = _str(d["server_placement"], "training.server_placement",
                                       SERVER_PLACEMENTS)
    if "server_hosts" in d:
        out["server_hosts"] = _host_list(d["server_hosts"], "training.server_hosts")
        out["servers"] = len(out["server_hosts"])
    if "aggregation" in d:
        out["aggregation"] = _str(d["aggregation"], "training.aggregation", AGGREGATIONS)
    if "aggregation_chunk" in d:
        out["aggregation_chunk"] = parse_bytes(d["aggregation_chunk"], "training.aggregation_chunk")
    if "deadline_class" in d:
        out["deadline_class"] = _str(d["deadline_class"], "training.deadline_class")
    if "barrier" in d:
        out["barrier"] = _bool(d["barrier"], "training.barrier")
    if "pull_barrier" in d:
        out["pull_barrier"] = _bool(d["pull_barrier"], "training.pull_barrier")
    if "slowdowns" in d:
        out["slowdowns"] = _slowdowns(d["slowdowns"])
    if "straggler" in d:
        out["straggler"] = _straggler(d["straggler"])
    if "chunk_overhead" in d:
        out["chunk_overhead"] = _time_value(d["chunk_overhead"], "training.chunk_overhead")
    if "name" in d:
        out["name"] = _str(d["name"], "training.name")
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", out["name"]):
            raise ConfigError("training.name",
                              f"use letters, digits, _ . - (got {shorten(out['name'])})")
    if "start" in d:
        out["start"] = _time_value(d["start"], "training.start")
    if "placement" in d:
        out["placement"] = _str(d["placement"], "training.placement", PLACEMENTS)
        if "hosts" in d:
            raise ConfigError("training.placement", "give either hosts or placement, not both")
    if "priority" in d:
        out["priority"] = _str(d["priority"], "training.priority")
    if "layer_classes" in d:
        out["layer_classes"] = _layer_classes(d["layer_classes"], "training.layer_classes")
    if "model_bytes" in d:
        out["model_bytes"] = _int(d["model_bytes"], "training.model_bytes", 1, INT64_MAX)
    if "fusion_buffer" in d:
        out["fusion_buffer"] = _int(d["fusion_buffer"], "training.fusion_buffer", 1, INT64_MAX)
    if "port" in d:
        out["port"] = _int(d["port"], "training.port", 1, 65535)
    return _training_policy(TrainingConfig(**out), d.get("scheduler", {}))


def _training_jobs(data: Any) -> tuple[TrainingConfig, ...]:
    """[training] (one job) or [[training]] (a list of jobs). In a list every
    job runs unless `enabled = false`, has a name (default "job<i>", unique),
    and, without a `port`, listens JOB_PORT_STRIDE ports after the previous job."""
    if not isinstance(data, list):
        return (_training(data),)
    if not data:
        raise ConfigError("training", "an empty list of jobs; leave [[training]] out instead")
    jobs: list[TrainingConfig] = []
    for i, raw in enumerate(data):
        with job_fields(i, len(data)):
            if not isinstance(raw, dict):
                raise ConfigTypeError("training",
                                      f"expected a table of the job, got {shorten(raw)}")
            raw = {"enabled": True, "name": f"job{i}", **raw}
            if "port" not in raw and jobs:
                port = jobs[-1].port + JOB_PORT_STRIDE
                if port > 65535:  # named as what the harness chose, not as a value written
                    raise ConfigError("training.port", f"not given, so training[{i - 1}].port "
                                      f"+ {JOB_PORT_STRIDE} = {port}, above 65,535; give "
                                      f"training[{i}].port (1..65535) or a lower "
                                      f"training[{i - 1}].port")
                raw["port"] = port
            job = _training(raw)
            for j, other in enumerate(jobs):
                if other.name == job.name:
                    raise ConfigError("training.name", f"{job.name!r} is the name of "
                                      f"training[{j}] too")
            jobs.append(job)
    return tuple(jobs)


def _training_policy(cfg: TrainingConfig, scheduler: Any) -> TrainingConfig:
    """The architecture's checks of the job, and the policy's parameters filled in."""
    if not isinstance(scheduler, dict):
        raise ConfigError("training.scheduler", f"expected a table of the policy's "
                          f"parameters, got {shorten(scheduler)}")
    values = training.architecture(cfg.architecture).check(cfg, scheduler)
    return dataclasses.replace(cfg, scheduler=tuple(sorted(values.items())))


def _layer_classes(value: Any, where: str) -> tuple[tuple[str, int, int], ...]:
    """{ high = "0-9", low = "10-49" } -> (("high", 0, 9), ("low", 10, 49)); a range
    is "first-last" or one layer index; ranges may not overlap."""
    if not isinstance(value, dict):
        raise ConfigError(where, f'expected a table of class = "first-last", got {shorten(value)}')
    out = []
    for cls, rng in value.items():
        text = str(rng).strip() if isinstance(rng, (str, int)) and not isinstance(rng, bool) \
            else None
        m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", text or "")
        if not m or (m.group(2) is not None and int(m.group(2)) < int(m.group(1))):
            raise ConfigError(f"{where}.{cls}", f'expected a layer range "first-last" '
                              f'(e.g. "0-9") or a layer index, got {shorten(rng)}')
        first = int(m.group(1))
        out.append((cls, first, int(m.group(2)) if m.group(2) is not None else first))
    out.sort(key=lambda t: t[1])
    for (c1, _, last1), (c2, first2, _) in zip(out, out[1:]):
        if first2 <= last1:
            raise ConfigError(where, f"ranges of {c1!r} and {c2!r} overlap")
    return tuple(out)


def scenario_from_dict(data: dict[str, Any]) -> Scenario:
    """Validate a raw scenario dict (e.g. parsed TOML) into a Scenario."""
    if not isinstance(data, dict):
        raise ConfigError("", "a scenario is a TOML table")
    _check_keys(data, _TOP_KEYS, "")
    out: dict[str, Any] = {}
    if "name" in data:
        out["name"] = _str(data["name"], "name")
    if "seed" in data:
        out["seed"] = _int(data["seed"], "seed", 0, INT64_MAX)
    if "scale" in data:
        out["scale"] = _int(data["scale"], "scale", 1, 1000)
    readers = {"run": _run, "topology": _topology, "network": _network, "tcp": _tcp,
               "background": _background}
    for key, reader in readers.items():
        out[key] = reader(data.get(key, {}))
    out["training"], *more = _training_jobs(data.get("training", {}))
    out["more_training"] = tuple(more)
    tcp_raw = data.get("tcp", {})
    if not isinstance(tcp_raw, dict) or "segment_size" not in tcp_raw:
        # MTU 1500 -> 1380 B (the study's); jumbo frames (mtu = 9000) -> 8880 B
        out["tcp"] = dataclasses.replace(
            out["tcp"], segment_size=out["network"].mtu - SEGMENT_OVERHEAD_BYTES)
    tcp = out["tcp"]
    if tcp.initial_cwnd * tcp.segment_size > UINT32_MAX:
        # ns-3 starts the window at InitialCwnd x SegmentSize bytes, in a uint32
        raise ConfigError("tcp.initial_cwnd", f"{tcp.initial_cwnd} segments of "
                          f"{tcp.segment_size} B exceed ns-3's congestion window (a uint32 "
                          f"of bytes): at most {UINT32_MAX // tcp.segment_size:,} segments")
    _check_ecn(out["network"], tcp)
    scenario = Scenario(**out)
    _check_times(scenario)
    return scenario


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
        old_d = parse_time(old.get("duration", RunConfig.duration), "run.duration")
        warmup = parse_time(old.get("warmup", RunConfig.warmup), "run.warmup", True)
        cooldown = parse_time(old.get("cooldown", RunConfig.cooldown), "run.cooldown", True)
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


def both_given(field: str, other: str) -> ConfigError:
    """The error of a quantity given two ways at once (one file, one list of
    overrides, one grid table): nothing says which of the two was meant."""
    first, second = sorted((field, other), key=lambda f: f.rsplit(".", 1)[-1] != "rate")
    return ConfigError(first, f"given together with {second}; give one of them: "
                       "rate (flows/s per host) or load (offered load per host link, "
                       "0 < load < 1)")


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
