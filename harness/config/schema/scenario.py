"""The scenario: its sections, the checks across them, its digest, and the
JSON Schema of scenario files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated, Any, Union

from pydantic import BeforeValidator, Field, TypeAdapter, model_validator
from pydantic.json_schema import GenerateJsonSchema

from harness.config import registry
from harness.config.errors import ConfigError, ConfigTypeError, shorten
from harness.config.schema.background import BackgroundConfig
from harness.config.schema.base import Int, Section, Str, tagged, validate
from harness.config.schema.network import NetworkConfig
from harness.config.schema.run import RunConfig
from harness.config.schema.service import check_services, service_type, validate_services
from harness.config.schema.rdma import RdmaConfig
from harness.config.schema.tcp import BEHAVIOUR_REVISIONS, SEGMENT_OVERHEAD_BYTES, TcpConfig
from harness.config.schema.topology import TopologyConfig
from harness.config.schema.training import (JOB_PORT_STRIDE, STRAGGLER_SHAPE, TrainingConfig,
                                     job_fields)
from harness.config.units import INT64_MAX, UINT32_MAX

ARCHITECTURES = tuple(registry.architectures())  # the plug-ins' registry
#: A job's settings: the model its `architecture` names (default "ring").
Job = tagged("architecture", registry.DEFAULT_ARCHITECTURE,
             {name: a.settings for name, a in registry.architectures().items()})


def _jobs(value: Any) -> Any:
    """[training] (one job) or [[training]] (a list of jobs). In a list every
    job runs unless `enabled = false` and has a name (default "job<i>")."""
    if isinstance(value, dict):
        return [value]
    if not isinstance(value, list):
        raise ConfigTypeError("", "expected a table ([training]) or a list of tables "
                              f"([[training]]), got {shorten(value)}")
    if not value:
        raise ConfigError("", "an empty list of jobs; leave [[training]] out instead")
    return [{"enabled": True, "name": f"job{i}", **job} if isinstance(job, dict) else job
            for i, job in enumerate(value)]


class Scenario(Section):
    name: Str = Field("scenario", description="names the run and sweep directories")
    seed: Int(0, INT64_MAX) = Field(1, description=(
        "everything random (flow schedule, stragglers) follows from it"))
    # time-preserving scale-down factor k: rates and sizes / k, times kept
    # (harness.engine.scaling); 1 = the network as written
    scale: Int(1, 1000) = Field(1, description=(
        "time-preserving scale-down factor k, 1-1000: rates and sizes / k, times kept"))
    # every section is validated, given or not ([background] needs a rate or a load)
    run: RunConfig = Field({}, validate_default=True, description=(
        "how long the run lasts and what is measured"))
    topology: TopologyConfig = Field({}, validate_default=True, description=(
        "the topology file and any of its keys overridden"))
    network: NetworkConfig = Field({}, validate_default=True, description=(
        "queue discipline, classes and buffers of every egress"))
    tcp: TcpConfig = Field({}, validate_default=True, description=(
        "settings of every TCP socket"))
    rdma: RdmaConfig = Field({}, validate_default=True, description=(
        "the RDMA queue pairs of jobs with transport = \"rdma\" (DCQCN)"))
    background: BackgroundConfig = Field({}, validate_default=True, description=(
        "the background (web-search) flows"))
    #: every training job, enabled or not, in file order
    jobs: Annotated[tuple[Job, ...], BeforeValidator(
        _jobs, json_schema_input_type=Union[Job, Annotated[list[Job], Field(min_length=1)]])] = \
        Field({}, alias="training", validate_default=True, description=(
            "one job ([training]) or a list of jobs ([[training]])"))
    #: [[service]]: every latency-critical service, in file order (none by default)
    # each table validated by its kind's model, through the registry (scenario_json_schema
    # puts the kinds' models in the JSON Schema)
    services: Annotated[tuple[Any, ...], BeforeValidator(
        validate_services, json_schema_input_type=list[dict])] = Field((), alias="service", description=(
            "latency-critical services, one [[service]] table each (query, rpc, stream)"))

    @property
    def training(self) -> TrainingConfig:
        """The first training job (the only one without [[training]])."""
        return self.jobs[0]

    @property
    def more_training(self) -> tuple[TrainingConfig, ...]:
        """[[training]]: the jobs after the first."""
        return self.jobs[1:]

    def replace(self, **changes: Any) -> Scenario:
        """A copy with `changes`; `training` and `more_training` replace jobs."""
        jobs = (changes.pop("training", self.training),
                *changes.pop("more_training", self.more_training))
        return self.model_copy(update={**changes, "jobs": jobs})

    @model_validator(mode="after")
    def _across_sections(self) -> Scenario:
        self._finish(jobs=_apart(self.jobs))
        tcp = self.tcp
        if not tcp.given("segment_size"):
            # MTU 1500 -> 1380 B (the study's); jumbo frames (mtu = 9000) -> 8880 B
            tcp = tcp.model_copy(update={
                "segment_size": self.network.mtu - SEGMENT_OVERHEAD_BYTES})
            self._finish(tcp=tcp)
        if tcp.initial_cwnd * tcp.segment_size > UINT32_MAX:
            # ns-3 starts the window at InitialCwnd x SegmentSize bytes, in a uint32
            raise ConfigError("tcp.initial_cwnd", f"{tcp.initial_cwnd} segments of "
                              f"{tcp.segment_size} B exceed ns-3's congestion window (a uint32 "
                              f"of bytes): at most {UINT32_MAX // tcp.segment_size:,} segments")
        _check_ecn(self.network, tcp)
        _check_times(self)
        check_services(self.services, self.run.duration)
        return self

    def to_dict(self) -> dict[str, Any]:
        """The resolved scenario as plain data, in the shape the digest and
        config.json have always had: `training` (the first job) and
        `more_training`, each job with every architecture's keys (another
        architecture's at their defaults), a straggler with every
        distribution's."""
        data = self.model_dump()
        if not data["services"]:  # absent: config.json and the digest as before services
            del data["services"]
        jobs = [_job_dict(raw) for raw in data.pop("jobs")]
        return {**data, "training": jobs[0], "more_training": tuple(jobs[1:])}

    def digest_data(self) -> dict[str, Any]:
        """What digest() hashes: to_dict() without the settings that do not
        apply, and the behaviour revision of the congestion control."""
        data = self.to_dict()
        for section, defaults in _DEFAULTS.items():
            _leave_out_unused(data[section], section, defaults)
        # run.queue_samples' keys added since digests were frozen, likewise
        samples = data["run"].get("queue_samples")
        if samples is not None and not samples.get("egresses"):
            samples.pop("egresses", None)
        for job in data["more_training"]:
            _leave_out_unused(job, "more_training", _JOB_SHAPE)
        if not data["more_training"]:
            del data["more_training"]
        # [rdma] came after digests were frozen: in the digest only where a key is not
        # at its default
        data["rdma"] = {k: v for k, v in data["rdma"].items() if v != _RDMA_DEFAULTS[k]}
        if not data["rdma"]:
            del data["rdma"]
        # the marking profile's egresses came after its first digests: in them
        # only where not every egress marks
        profile = data["network"].get("ecn_profile")
        if profile and profile.get("egresses") == "all":
            del profile["egresses"]
        # a bulk service's transport came after its digests were frozen: in
        # the digest only over RDMA
        if "services" in data:
            data["services"] = tuple({k: v for k, v in svc.items()
                                      if not (k == "transport" and v == "tcp")}
                                     for svc in data["services"])
        revision = BEHAVIOUR_REVISIONS.get(self.tcp.congestion_control)
        if revision is not None:
            data["tcp"]["revision"] = revision
        return data

    def digest(self) -> str:
        """Hash of the resolved scenario: identical inputs, identical digest."""
        blob = json.dumps(self.digest_data(), sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


def _job_dict(raw: dict[str, Any]) -> dict[str, Any]:
    if raw["straggler"] is not None:
        raw["straggler"] = {**STRAGGLER_SHAPE, **raw["straggler"]}
    return {**_JOB_SHAPE, **raw}


#: Every key of every architecture at its default (config.json keeps one shape).
_JOB_SHAPE = {name: info.get_default(call_default_factory=True)
              for a in registry.architectures().values()
              for name, info in a.settings.model_fields.items() if not info.is_required()}

#: The keys of each section that always enter the digest: those it had when
#: digests were frozen (less the few added earlier and already left out when
#: unused). Any other key (a new option, a new architecture's) enters only
#: when not at its default, so a scenario that does not use it keeps its
#: digest, and a sweep started before it can still be resumed. Nothing to
#: register: the file never grows. (network.buffer is in it: its default
#: changed from per_band to shared, so a scenario run before means something
#: else now and must not be taken for a finished cell of a resumed sweep.)
_DIGEST_KEYS = json.loads((Path(__file__).parent / "digest-keys.json").read_text())

_RDMA_DEFAULTS = RdmaConfig.model_construct().model_dump()

_DEFAULTS = {"training": _JOB_SHAPE, **{name: model.model_construct().model_dump() for name, model
                                        in (("run", RunConfig), ("topology", TopologyConfig),
                                            ("network", NetworkConfig), ("tcp", TcpConfig),
                                            ("background", BackgroundConfig))}}


def _leave_out_unused(values: dict[str, Any], section: str, defaults: dict[str, Any]) -> None:
    """Drop from `values` the keys not in _DIGEST_KEYS[section] at their default."""
    frozen = _DIGEST_KEYS[section]
    for key in [k for k in values if k not in frozen and values[k] == defaults[k]]:
        del values[key]


def _apart(jobs: tuple[TrainingConfig, ...]) -> tuple[TrainingConfig, ...]:
    """Jobs after the first without a `port` listen JOB_PORT_STRIDE ports after
    the previous one; names are unique."""
    out: list[TrainingConfig] = []
    for i, job in enumerate(jobs):
        with job_fields(i, len(jobs)):
            if out and not job.given("port"):
                port = out[-1].port + JOB_PORT_STRIDE
                if port > 65535:  # named as what the harness chose, not as a value written
                    raise ConfigError("training.port", f"not given, so training[{i - 1}].port "
                                      f"+ {JOB_PORT_STRIDE} = {port}, above 65,535; give "
                                      f"training[{i}].port (1..65535) or a lower "
                                      f"training[{i - 1}].port")
                job = job.model_copy(update={"port": port})
            for j, other in enumerate(out):
                if other.name == job.name:
                    raise ConfigError("training.name", f"{job.name!r} is the name of "
                                      f"training[{j}] too")
        out.append(job)
    return tuple(out)


def _check_ecn(net: NetworkConfig, tcp: TcpConfig) -> None:
    """DCTCP needs queues that mark ECN (and ECN on, which it always is);
    ECN-capable ACKs need ECN."""
    ecn = tcp.congestion_control == "dctcp" or (net.marks_ecn if tcp.ecn is None else tcp.ecn)
    if tcp.ecn_acks and not (ecn and net.marks_ecn):
        raise ConfigError("tcp.ecn_acks", "ECN-capable ACKs need ECN: queues that mark "
                          "(network.ecn_threshold) and TCP negotiating it (tcp.ecn not false)")
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


def _check_times(cfg: Scenario) -> None:
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


_SCENARIO = TypeAdapter(Scenario)


def scenario_from_dict(data: dict[str, Any]) -> Scenario:
    """Validate a raw scenario dict (e.g. parsed TOML) into a Scenario."""
    if not isinstance(data, dict):
        raise ConfigError("", "a scenario is a TOML table")
    single = not isinstance(data.get("training"), list)

    def rename(field: str) -> str:   # one [training] table: its job is `training`
        return "training" + field[len("training[0]"):] \
            if single and field.startswith("training[0]") else field

    return validate(_SCENARIO, data, Scenario, rename)


# --------------------------------------------------------------------------
# JSON Schema

class _TomlSchema(GenerateJsonSchema):
    """TOML has no null: an optional key is one that may be left out."""

    def nullable_schema(self, schema):
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema):
        out = super().default_schema(schema)
        if out.get("default", ...) is None:
            del out["default"]
        return out


def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema of scenario files (`harness schema`,
    docs/schema/scenario.schema.json): what editors check a TOML file against."""
    schema = Scenario.model_json_schema(schema_generator=_TomlSchema)
    # [[service]]: the kinds' models, read through the registry (Scenario names none)
    services = TypeAdapter(list[service_type()]).json_schema(
        schema_generator=_TomlSchema, ref_template="#/$defs/{model}")
    schema["$defs"] = dict(sorted({**schema.get("$defs", {}),
                                   **services.pop("$defs", {})}.items()))
    schema["properties"]["service"] = {**schema["properties"]["service"], **services}
    schema["properties"] = {"base": {"type": "string", "description": (
        "a scenario to start from (a name or a path); this file overrides what it gives")},
        **schema["properties"]}
    schema["title"] = "ddnn-harness scenario"
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
