"""[training]: what every training job has (TrainingConfig), whatever its
architecture; each architecture's plug-in (harness/training/ring.py, ps.py)
declares its settings model on this base, with `architecture` and the keys
only it takes, and the scenario chooses one by `architecture`."""

from __future__ import annotations

import contextlib
import re
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import AfterValidator, BeforeValidator, Field, TypeAdapter, model_validator

from harness.config import registry
from harness.config.errors import ConfigError, shorten
from harness.config.schema.base import Bool, Hosts, Int, Number, Section, Str, Time, Toml, tagged
from harness.config.schema.topology import MAX_NODES
from harness.config.units import INT64_MAX

PLACEMENTS = ("packed", "spread")
#: Jobs after the first without a `port` listen from the previous job's port + this.
JOB_PORT_STRIDE = 10


class Slowdown(Section):
    """Worker `worker` (rank) computes `factor` times slower in [start, end) s."""

    example = "{ worker = 1, start = 1.0, end = 1.5, factor = 2.0 }"
    worker: Int(0) = Field(description="the worker's rank")
    start: Time = Field(description="start of the period")
    end: Time = Field(description="end of the period (inside the run)")
    factor: Number(gt=0) = Field(description="compute takes this many times longer, > 0")

    @model_validator(mode="after")
    def _ordered(self) -> Slowdown:
        if self.end <= self.start:
            raise ConfigError("end", f"must be after start ({self.end:g} s <= {self.start:g} s)")
        return self


def _apart(slowdowns: tuple[Slowdown, ...]) -> tuple[Slowdown, ...]:
    for i, s in enumerate(slowdowns):
        for j, other in enumerate(slowdowns[:i]):
            if other.worker == s.worker and s.start < other.end and other.start < s.end:
                raise ConfigError(f"[{i}]", f"overlaps training.slowdowns[{j}] (worker "
                                  f"{s.worker})")
    return slowdowns


# --------------------------------------------------------------------------
# stragglers: one model per distribution (harness.training.stragglers draws)

def _workers(value: Any) -> Any:
    if value == "all":
        return ()
    if not isinstance(value, list) or not value:
        raise ConfigError("", f'expected a list of worker ranks or "all", got {shorten(value)}')
    return value


def _each_once(workers: tuple) -> tuple:
    if len(set(workers)) != len(workers):
        raise ConfigError("", "lists a worker twice")
    return workers


Workers = Annotated[tuple[Int(0), ...], BeforeValidator(_workers, json_schema_input_type=Union[
    Annotated[list[Int(0)], Field(min_length=1)], Literal["all"]]), AfterValidator(_each_once),
    Toml('list of integers or "all"', '"all"')]


class Straggler(Section):
    """Workers `workers` (ranks; () = every worker) compute each iteration
    `factor` times slower, the factor drawn per worker and iteration from a
    seeded distribution (harness.training.stragglers)."""

    example = '{ workers = [1], distribution = "lognormal", sigma = 0.2 }'
    workers: Workers = Field((), description='ranks of the straggling workers, or "all"')


_DISTRIBUTION = "`fixed`, `uniform` or `lognormal`"


class FixedStraggler(Straggler):
    """Always `factor`."""

    distribution: Literal["fixed"] = Field("fixed", description=_DISTRIBUTION)
    factor: Number(gt=0) = Field(description="fixed: the factor, > 0")


class UniformStraggler(Straggler):
    """Uniform in [factor_min, factor_max]."""

    distribution: Literal["uniform"] = Field(description=_DISTRIBUTION)
    factor_min: Number(gt=0) = Field(description="uniform: lower end, > 0")
    factor_max: Number(gt=0) = Field(description="uniform: upper end, >= factor_min")

    @model_validator(mode="after")
    def _ordered(self) -> UniformStraggler:
        if self.factor_max < self.factor_min:
            raise ConfigError("factor_max", f"must be >= factor_min ({self.factor_max:g} < "
                              f"{self.factor_min:g})")
        return self


class LognormalStraggler(Straggler):
    """median x e^(sigma Z), Z standard normal: below 1 in some iterations."""

    distribution: Literal["lognormal"] = Field(description=_DISTRIBUTION)
    sigma: Number(ge=0, lt=2) = Field(description=(
        "lognormal: sigma of the normal exponent, below 2 (required)"))
    median: Number(gt=0) = Field(1.0, description="lognormal: the median factor, > 0")


STRAGGLERS = {"fixed": FixedStraggler, "uniform": UniformStraggler,
              "lognormal": LognormalStraggler}
STRAGGLER_DISTRIBUTIONS = tuple(STRAGGLERS)
#: Every key a straggler had when it was one table: the digest and config.json
#: keep that shape (to_dict fills in what another distribution has).
STRAGGLER_SHAPE = {"workers": (), "distribution": "fixed", "factor": 1.0, "factor_min": 1.0,
                   "factor_max": 1.0, "sigma": 0.0, "median": 1.0}
AnyStraggler = tagged("distribution", "fixed", STRAGGLERS)


# --------------------------------------------------------------------------
# the job

def _scheduler(value: Any) -> Any:
    """[training.scheduler] as given: checked, and its defaults filled in, by
    the job's plug-in (TrainingConfig._plug_in)."""
    if not isinstance(value, dict):
        raise ConfigError("", f"expected a table of the policy's parameters, got "
                          f"{shorten(value)}")
    return tuple(sorted(value.items()))


def _layer_classes(value: Any) -> tuple[tuple[str, int, int], ...]:
    """{ high = "0-9", low = "10-49" } -> (("high", 0, 9), ("low", 10, 49)); a range
    is "first-last" or one layer index; ranges may not overlap."""
    if not isinstance(value, dict):
        raise ConfigError("", f'expected a table of class = "first-last", got {shorten(value)}')
    out = []
    for cls, rng in value.items():
        text = str(rng).strip() if isinstance(rng, (str, int)) and not isinstance(rng, bool) \
            else None
        m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", text or "")
        if not m or (m.group(2) is not None and int(m.group(2)) < int(m.group(1))):
            raise ConfigError(cls, f'expected a layer range "first-last" (e.g. "0-9") or a '
                              f"layer index, got {shorten(rng)}")
        first = int(m.group(1))
        out.append((cls, first, int(m.group(2)) if m.group(2) is not None else first))
    out.sort(key=lambda t: t[1])
    for (c1, _, last1), (c2, first2, _) in zip(out, out[1:]):
        if first2 <= last1:
            raise ConfigError("", f"ranges of {c1!r} and {c2!r} overlap")
    return tuple(out)


def _job_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ConfigError("", f"use letters, digits, _ . - (got {shorten(name)})")
    return name


class TrainingConfig(Section):
    """One training job: ring allreduce or parameter servers
    (docs/model/training.md). The keys every architecture takes; each
    plug-in's model adds `architecture` and its own."""

    enabled: Bool = Field(False, description=(
        "run the job (in a [[training]] list: default true)"))
    profile: Str = Field("resnet50-like", description=(
        "model profile: a CSV name in workloads/profiles/ or a path"))
    ratio: Annotated[Optional[Number(gt=0)], Toml(default="the profile's compute")] = Field(
        None, description="compute-to-network ratio R: compute rescaled to R x the job's "
        "network time")
    # M in R = T / (M 2(1-1/N) 8 / link)
    model_bytes: Annotated[Optional[Int(1, INT64_MAX)], Toml(default="the profile's bytes")] = \
        Field(None, description="M in R's definition, bytes")
    workers: Int(2, MAX_NODES) = Field(4, description=(
        "workers (at least 2), on hosts 0.. unless `hosts` or `placement` is given"))
    hosts: Hosts = Field((), description="the workers' hosts (sets `workers`)")
    policy: Str = Field("fifo", description=(  # harness.traffic.schedulers.POLICIES
        "communication-scheduling policy; a ring takes fifo, priority, bytescheduler, p3"))
    # the policy's parameters, checked and with defaults filled in: ((name, value), ...)
    scheduler: Annotated[tuple[tuple[str, Any], ...], BeforeValidator(
        _scheduler, json_schema_input_type=dict[str, Any]), Toml("table", "the policy's")] = \
        Field((), description="[training.scheduler]: the policy's parameters (the table below)")
    barrier: Bool = Field(False, description=(
        "ring: forward of layer 0 waits for every gradient of the last iteration"))
    priority: Str = Field("same", description=(
        "the job's traffic class; `same` = the background's class"))
    # per-layer classes overriding `priority`: ((class, first, last), ...)
    layer_classes: Annotated[tuple[tuple[str, int, int], ...], BeforeValidator(
        _layer_classes, json_schema_input_type=dict[str, Union[
            Int(0), Annotated[str, Field(pattern=r"^\s*\d+(\s*-\s*\d+)?\s*$")]]]),
        Toml("table")] = Field((), description=(
            'class -> layer range, e.g. { high = "0-9" }; other layers in `priority`'))
    # the deadline-aware class: slack = time until the forward pass needs the
    # gradients (no waiting) minus their transfer at line rate
    deadline_class: Annotated[Optional[Str], Toml(default="off")] = Field(None, description=(
        "raise what runs out of slack to this class (ring: a fused buffer waiting for or "
        "in its allreduce; ps: a transfer not yet in TCP)"))
    # RDMA queue pairs (RoCEv2, ns3-modules/rdma) instead of TCP connections: [rdma]
    transport: Literal["tcp", "rdma"] = Field("tcp", description=(
        "what the gradients travel over: `tcp`, or `rdma` (RoCEv2 queue pairs, rate-paced, "
        "DCQCN: the [rdma] table)"))
    port: Int(1, 65535) = Field(5000, description=(  # ps: port + class index
        "first port of the job (ps: one port per traffic class it uses)"))
    slowdowns: Annotated[tuple[Slowdown, ...], AfterValidator(_apart),
                         Toml("list of tables")] = Field((), description=(
                             "periods in which a worker computes slower (the entries below)"))
    straggler: Annotated[Optional[AnyStraggler], Toml("table", "none")] = Field(
        None, description="workers computing slower by a random factor per iteration (the "
        "table below)")
    # several jobs ([[training]]): the job's name in tables and summary, when its
    # workers start (s), and where they go when `hosts` is not given
    name: Annotated[Str, AfterValidator(_job_name), Toml(default='"job<i>"')] = Field(
        "", description="[[training]]: the job's name (letters, digits, _ . -; unique)",
        json_schema_extra={"pattern": "^[A-Za-z0-9_.-]+$"})
    start: Time = Field(0.0, description="[[training]]: when the job's workers start")
    placement: Annotated[Optional[Literal[PLACEMENTS]],
                         Toml(default="`packed` with several jobs")] = Field(
        None, description="[[training]]: instead of `hosts`, `packed` (a leaf with room for "
        "the whole job, else leaf after leaf) or `spread` (one host per leaf in turn)")

    @property
    def scheduler_params(self) -> dict[str, Any]:
        return dict(self.scheduler)

    @model_validator(mode="before")
    @classmethod
    def _others_at_default(cls, data: Any) -> Any:
        """A key of another architecture at its default is left out: a job
        moved to this architecture (an override of its base scenario) keeps
        its base's `servers = 1`; any other value is refused (an unknown key)."""
        if not isinstance(data, dict):
            return data
        own = {info.alias or name for name, info in cls.model_fields.items()}
        return {k: v for k, v in data.items() if k in own or not _default_elsewhere(cls, k, v)}

    @model_validator(mode="after")
    def _plug_in(self) -> TrainingConfig:
        if self.given("hosts"):
            if len(self.hosts) < 2:
                raise ConfigError("hosts", "a job needs at least 2 workers")
            self._finish(workers=len(self.hosts))
            if self.given("placement"):
                raise ConfigError("placement", "give either hosts or placement, not both")
        values = registry.architecture(self.architecture).check(self, self.scheduler_params)
        self._finish(scheduler=tuple(sorted(values.items())))
        return self


def _default_elsewhere(model: type[TrainingConfig], key: str, value: Any) -> bool:
    """`value` is another architecture's default for its `key`."""
    for other in (a.settings for a in registry.architectures().values()):
        info = other.model_fields.get(key)
        if other is model or info is None or info.is_required():
            continue
        try:
            if TypeAdapter(info.rebuild_annotation()).validate_python(value) == info.default:
                return True
        except ValueError:  # ValidationError, or a ConfigError of a validator
            pass
    return False


@contextlib.contextmanager
def job_fields(index: int, n_jobs: int):
    """With several jobs, an error of `training.x` inside this block names
    its job: `training[1].x` (the readers and plug-ins name `training.x`)."""
    try:
        yield
    except ConfigError as e:
        if n_jobs == 1 or not (e.field == "training" or e.field.startswith("training.")):
            raise
        message = e.message
        raise type(e)(f"training[{index}]{e.field[len('training'):]}", message) from None
