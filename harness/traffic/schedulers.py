"""Communication-scheduling policies (docs/policies/index.md): the harness's table of them.

Each policy is implemented in C++ by one CommScheduler subclass per sending
side (ns3-modules/schedulers/<name>-scheduler.{h,cc}); this module says which class the
workers (pushes) and the shards (pulls) use, which parameters a scenario may
give in ``[training.scheduler]``, their defaults, and the checks that run
before any simulation. Adding a policy: its C++ file pair plus one entry in
POLICIES.

A policy is the same C++ class for every architecture that may use it:
parameter-server senders and the ring-allreduce job's queue of ready fused
buffers both ask a CommScheduler which unit goes next. `rings` marks the
policies a ring may use: fifo and priority (the queue of fused buffers),
bytescheduler and p3 (no fusion: layers cut into partitions, each allreduced
on its own, lowest layer first; one allreduce runs at a time, so the credit
is one partition). Which architecture takes which policy is the plug-in's
question (harness.training); this table only describes the policies, and
registers them with the configuration (harness.config.registry).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from harness.config import registry
from harness.config.errors import ConfigError, ConfigTypeError
from harness.config.units import UINT32_MAX, finite, parse_bytes, parse_rate

@dataclass(frozen=True)
class Param:
    """One scenario parameter of a policy and the C++ attribute it sets."""

    attribute: str
    default: Any
    kind: str                        # "bytes" | "int" | "float" | "fraction" | "rate" | "bool" | "candidates"
    doc: str
    sides: tuple[str, ...] = ("push", "pull")
    maximum: float | None = None     # the C++ attribute's checker ("int": uint32)


@dataclass(frozen=True)
class Policy:
    name: str
    summary: str
    push: str                        # CommScheduler TypeId at the workers
    pull: str                        # ... at the shards
    params: dict[str, Param] = field(default_factory=dict)
    order: str = "fifo"              # order it serves ready units (harness.training.ring.simulate's queue)
    rings: bool = False              # a ring-allreduce job may use it
    chunk_param: str | None = None   # the parameter that cuts tensors, if any
    chunk_aggregation: bool = False  # the shards aggregate per chunk (mercury)
    check: Callable[[dict, str], None] | None = None


def _credit_covers_partition(values: dict, where: str) -> None:
    if values["credit"] < values["partition"]:
        raise ConfigError(f"{where}.credit", f"{values['credit']} B is smaller than one "
                          f"partition ({values['partition']} B); give at least the partition")


def _candidates_valid(values: dict, where: str) -> None:
    for i, (partition, credit) in enumerate(values["candidates"]):
        if credit < partition:
            raise ConfigError(f"{where}.candidates[{i}]", f"credit {credit} B is smaller than "
                              f"its partition {partition} B")


def _mercury_credit(values: dict, where: str) -> None:
    if values["credit"] < values["chunk"]:
        raise ConfigError(f"{where}.credit", f"{values['credit']} B is smaller than one chunk "
                          f"({values['chunk']} B)")


_PARTITION = Param("PartitionBytes", 160_000, "bytes", "size tensors are cut into")
_CREDIT = Param("CreditBytes", 160_000, "bytes",
                "bytes committed and not yet received (at least one partition)")

POLICIES: dict[str, Policy] = {p.name: p for p in (
    Policy("fifo", "whole tensors in the order they became ready (wait-free backprop)",
           "ns3::FifoScheduler", "ns3::FifoScheduler", rings=True),
    Policy("priority", "whole tensors, lowest layer first, one at a time, no preemption",
           "ns3::PriorityScheduler", "ns3::PriorityScheduler", order="priority", rings=True),
    Policy("bytescheduler", "tensors cut into partitions, strict priority among them, "
           "at most `credit` bytes in flight",
           "ns3::ByteScheduler", "ns3::ByteScheduler",
           {"partition": _PARTITION, "credit": _CREDIT},
           order="priority", rings=True, chunk_param="partition", check=_credit_covers_partition),
    Policy("p3", "bytescheduler preset: 160 KB partitions, credit one partition (Jayarajan "
           "et al.)",
           "ns3::ByteScheduler", "ns3::ByteScheduler",
           {"partition": _PARTITION}, order="priority", rings=True, chunk_param="partition"),
    Policy("autobyte", "bytescheduler whose (partition, credit) is re-chosen every `interval` "
           "iterations from `candidates` by measured iteration time (a measured search in "
           "place of AutoByte's learned predictor)",
           "ns3::AutoByteScheduler", "ns3::AutoByteScheduler",
           {"candidates": Param("Candidates",
                                ((160_000, 160_000), (1_000_000, 1_000_000),
                                 (160_000, 640_000), (4_000_000, 8_000_000)),
                                "candidates", "[partition, credit] pairs; the first is used first"),
            "interval": Param("Interval", 10, "int", "iterations between decisions"),
            "min_gain": Param("MinGain", 0.05, "float", "relative gain a switch must promise",
                              maximum=1.0),
            "retune": Param("Retune", 0.2, "fraction",
                            "relative change of the current candidate's interval mean that "
                            "starts the search again (conditions changed); 0 = never")},
           check=_candidates_valid),
    Policy("prophet", "ready gradients grouped into blocks sized by the profiled gradient "
           "ready times and the measured bandwidth; one block in flight; gradient 0 at once",
           "ns3::ProphetScheduler", "ns3::FifoScheduler",
           {"bandwidth": Param("BandwidthBps", None, "rate",
                               "initial bandwidth estimate in bit/s (default: the host link)",
                               sides=("push",))}),
    Policy("tictac", "the shards pull in a fixed order per iteration, front layers first, "
           "each transfer committed right behind the previous one (pipelined; "
           "`one_at_a_time`: only once it has arrived); pushes are fifo",
           "ns3::FifoScheduler", "ns3::TicTacScheduler",
           {"one_at_a_time": Param("OneAtATime", False, "bool",
                                   "commit a transfer only when the previous one has arrived",
                                   sides=("pull",))}),
    Policy("random", "the shards pull in a random order per iteration and worker, pipelined "
           "(TensorFlow's arbitrary transfer order: TicTac's baseline); pushes are fifo",
           "ns3::FifoScheduler", "ns3::RandomOrderScheduler"),
    Policy("mercury", "~30 KB chunks, strict per-tensor priority, preemptive between chunks; "
           "per-chunk aggregation at the shards",
           "ns3::MercuryScheduler", "ns3::MercuryScheduler",
           {"chunk": Param("ChunkBytes", 30_000, "bytes", "size tensors are cut into"),
            "credit": Param("CreditBytes", 60_000, "bytes",
                            "bytes committed below the priority queue (at least one chunk)"),
            "preemptive": Param("Preemptive", True, "bool",
                                "false: the no-preemption variant")},
           chunk_param="chunk", chunk_aggregation=True, check=_mercury_credit),
    Policy("mercury-np", "mercury without preemption: a started tensor finishes first",
           "ns3::MercuryScheduler", "ns3::MercuryScheduler",
           {"chunk": Param("ChunkBytes", 30_000, "bytes", "size tensors are cut into"),
            "credit": Param("CreditBytes", 60_000, "bytes",
                            "bytes committed below the priority queue (at least one chunk)")},
           chunk_param="chunk", chunk_aggregation=True, check=_mercury_credit),
)}

#: Attributes a policy always sets, whatever the scenario says.
_FIXED = {"p3": {"CreditBytes": None},          # = the partition (one in flight)
          "mercury-np": {"Preemptive": "false"}}

RING_POLICIES = tuple(n for n, p in POLICIES.items() if p.rings)
for _policy in POLICIES.values():   # the configuration's key reference lists them
    registry.add_policy(_policy)


def policy(name: str, where: str = "training.policy") -> Policy:
    if name not in POLICIES:
        raise ConfigError(where, f"unknown policy {name!r}; allowed: {', '.join(POLICIES)}")
    return POLICIES[name]


def _value(param: Param, value: Any, where: str):
    if param.kind == "bytes":
        return parse_bytes(value, where)
    if param.kind == "int":  # uint32 attributes
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigTypeError(where, f"expected an integer >= 1, got {value!r}")
        if not 1 <= value <= (param.maximum or UINT32_MAX):
            raise ConfigError(where, f"must be in 1..{param.maximum or UINT32_MAX:,} "
                              f"(got {value!r})")
        return value
    if param.kind == "fraction":  # 0 allowed (off)
        number = finite(value, where)
        if number < 0:
            raise ConfigError(where, f"must be >= 0 (got {value!r})")
        return number
    if param.kind == "rate":
        return parse_rate(value, where)
    if param.kind == "float":
        number = finite(value, where)
        if not number > 0 or (param.maximum is not None and number > param.maximum):
            upper = f" and <= {param.maximum:g}" if param.maximum is not None else ""
            raise ConfigError(where, f"must be > 0{upper} (got {value!r})")
        return number
    if param.kind == "bool":
        if not isinstance(value, bool):
            raise ConfigTypeError(where, f"expected true or false, got {value!r}")
        return value
    if param.kind == "candidates":
        if not isinstance(value, (list, tuple)) or not value:
            raise ConfigError(where, "expected a non-empty list of [partition, credit] pairs")
        pairs = []
        for i, pair in enumerate(value):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ConfigError(f"{where}[{i}]", f"expected [partition, credit], got {pair!r}")
            pairs.append((parse_bytes(pair[0], f"{where}[{i}]"),
                          parse_bytes(pair[1], f"{where}[{i}]")))
        return tuple(pairs)
    raise AssertionError(param.kind)


def resolve(name: str, given: dict[str, Any], where: str = "training.scheduler",
            adjust: Callable[[dict, dict, str], None] | None = None) -> dict[str, Any]:
    """The policy's parameters: defaults overridden by `given`, each checked.
    `adjust(values, given, where)`: an architecture's own rule on them (the
    ring's credit), applied before the policy's checks."""
    pol = policy(name)
    for key in given:
        if key not in pol.params:
            allowed = ", ".join(pol.params) or "none"
            raise ConfigError(f"{where}.{key}", f"not a parameter of policy {name!r}; "
                              f"allowed: {allowed}")
    values = {k: _value(p, given[k], f"{where}.{k}") if k in given else p.default
              for k, p in pol.params.items()}
    if adjust is not None:
        adjust(values, given, where)
    if pol.check is not None:
        pol.check(values, where)
    return values


def chunk_bytes(name: str, values: dict[str, Any]) -> int | None:
    """Size the policy cuts tensors into (None: whole tensors)."""
    param = POLICIES[name].chunk_param
    return values[param] if param else None


def attributes(name: str, values: dict[str, Any], side: str,
               link_bps: float) -> tuple[str, list[str]]:
    """(TypeId, ["Name=Value", ...]) of the scheduler on `side` ("push"/"pull")."""
    pol = POLICIES[name]
    type_id = pol.push if side == "push" else pol.pull
    out = {}
    for key, param in pol.params.items():
        if side not in param.sides:
            continue
        value = values[key]
        if param.kind == "candidates":
            text = ",".join(f"{p}:{c}" for p, c in value)
        elif param.kind == "bool":
            text = "true" if value else "false"
        elif param.kind == "rate":  # bit/s; default: the host link
            text = repr(float(link_bps if value is None else value))
        else:
            text = str(value)
        out[param.attribute] = text
    for attribute, text in _FIXED.get(name, {}).items():
        out[attribute] = text if text is not None else str(values["partition"])
    return type_id, [f"{k}={v}" for k, v in out.items()]


def scale_bytes(name: str, values: tuple[tuple[str, Any], ...],
                k: int) -> tuple[tuple[str, Any], ...]:
    """The resolved parameters with sizes and rates / k (harness.engine.scaling): a
    partition or chunk takes as long to send on a k times slower link."""
    def scaled(param: Param, value: Any) -> Any:
        if value is None:
            return None
        if param.kind == "bytes":
            return max(1, round(value / k))
        if param.kind == "candidates":
            return tuple((max(1, round(p / k)), max(1, round(c / k))) for p, c in value)
        if param.kind == "rate":
            return value / k
        return value

    params = POLICIES[name].params
    return tuple((key, scaled(params[key], value)) for key, value in values)
