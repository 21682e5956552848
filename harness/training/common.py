"""What every training architecture shares: the plug-in interface
(`Architecture`: plan / recipe / collect / predict), the planned job
(`JobPlan`), and the per-layer pieces every job has (its workers, its model
profile rescaled to a compute-to-network ratio R, its per-layer classes).

An architecture is one module of this package with one `Architecture`
subclass and its instance as `ARCHITECTURE` (harness/training/__init__.py
finds it). Nothing outside the package branches on the architecture: the
run, the sweep and the bench ask the plug-in."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import numpy as np
import pandas as pd

from harness.traffic import profiles, schedulers
from harness.config.errors import ConfigError
from harness.config.paths import PROFILES_DIR, resolve_data_file
from harness.io.recipe_tokens import token, token_list
# the architectures read their C++ tables with it (harness.analysis.tables: every ns-3 CSV)
from harness.analysis.tables import read_csv  # noqa: F401
from harness.config.units import INT64_MAX, NS3_TIME_MAX_S

# A job's settings are its architecture's model on harness.config.schema.training's
# TrainingConfig (and the background's BackgroundConfig): typed as Any here.


@dataclass(frozen=True)
class JobPlan:
    """One training job as planned, before ns-3 is touched. Subclasses add
    what their architecture decides (fused buffers, shards, ...)."""

    config: Any        # as simulated: byte sizes scaled
    hosts: tuple[int, ...]          # worker r on hosts[r]
    tos: int                        # the job's class (priority, "same" resolved)
    profile: profiles.Profile       # bytes scaled, compute rescaled to R
    link_bps: float                 # slowest host link of the job
    ports: tuple[int, int]          # first and last port the job listens on
    network_ms: float               # one iteration's communication at line rate (for R)
    layer_tos: tuple[int, ...] = ()  # IP ToS of each layer's gradients
    deadline_tos: int = -1          # class raised to when slack runs out; -1 none
    ideal_iteration_s: float = 0.0  # the analytic no-contention iteration
    # stragglers: per worker, the compute factor of iterations 0..n-1 (harness.training.stragglers)
    compute_factors: tuple[tuple[float, ...], ...] = ()
    index: int = 0  # the job's place in [[training]]: the `job` column of its tables

    def resolved(self) -> dict[str, Any]:
        """The plan's part of config.json["training"]. The keys of every
        architecture are written for every job (their empty values where
        unused, Architecture.plan_keys), so config.json keeps one shape."""
        from harness.training import UNUSED_PLAN_KEYS   # the registry (it imports this module)

        return {"hosts": list(self.hosts), "tos": self.tos, "layer_tos": list(self.layer_tos),
                **UNUSED_PLAN_KEYS, "deadline_tos": self.deadline_tos,
                "profile": self.profile.name, "compute_ms": self.profile.compute_ms,
                "ideal_iteration_s": self.ideal_iteration_s}

    @property
    def all_hosts(self) -> tuple[int, ...]:
        """Every host the job runs on: its workers' (and its servers')."""
        return self.hosts

    def tos_used(self) -> set[int]:
        """Every class the job's traffic may travel in."""
        return {self.tos, *self.layer_tos} | ({self.deadline_tos} if self.deadline_tos >= 0
                                              else set())


@dataclass
class JobTables:
    """What a job recorded, read once after the run (DataFrames only)."""

    iterations: pd.DataFrame        # job,worker,iteration,start_ns,end_ns
    transfers: pd.DataFrame         # one row per unit sent, with its traffic_class
    compute: pd.DataFrame           # job,worker,iteration,layer,phase,start_ns,end_ns
    errors: str                     # socket errors / protocol violations, one per line
    scheduler: pd.DataFrame | None = None  # the policy's adaptive state, if it has one
    # its TCP connections' delays (metrics.job_tcp_delays); None over RDMA
    tcp_delays: dict | None = None
    # its TCP connections' back-off spans (from_ns, to_ns: each timeout's
    # wait, TcpSocketDdnn::BackoffsOnPorts); None over RDMA
    tcp_backoffs: "np.ndarray | None" = None


class Architecture:
    """A training architecture: the one interface the harness uses.

    check     config time: the policy's parameters for this architecture, and
              settings that belong to another architecture refused
    plan      everything decided in Python (placement, profile, classes,
              fusion, schedule), checked, as a JobPlan
    recipe    the planned job as lines of the scenario recipe (harness.engine.recipe),
              which ns-3's ScenarioRecipe installs (the C++ job replays the
              plan); `installed` finds that ns-3 job after the build
    collect   the job's tables, read once after the run
    no_contention  the plug-in's own no-contention model of the planned job
              (the oracle of its ns-3 job at zero background load), from
              which predict takes the ideal iteration time (ms)
    """

    name: ClassVar[str]
    summary: ClassVar[str]           # "ring-allreduce", for messages
    job_type: ClassVar[str]          # the C++ job's ns-3 TypeId ("ns3::RingAllreduceJob")
    settings: ClassVar[type]         # its settings model (harness.config.schema.training.TrainingConfig)
    unsupported_hint: ClassVar[str] = "is not available"  # a policy it does not take
    # its own keys of config.json["training"] (JobPlan.resolved), each with the
    # value written for a job of another architecture
    plan_keys: ClassVar[dict[str, Any]] = {}
    # (field, its choices) of its own settings, for `harness list`
    choices: ClassVar[tuple[tuple[str, tuple[str, ...]], ...]] = ()

    # ---- config time
    def supports(self, policy: schedulers.Policy) -> bool:
        return True

    def check(self, cfg: Any, given: dict[str, Any]) -> dict[str, Any]:
        """The policy's parameters (defaults filled in, checked)."""
        return schedulers.resolve(self.policy(cfg.policy).name, given)

    def policy(self, name: str, where: str = "training.policy") -> schedulers.Policy:
        pol = schedulers.policy(name, where)
        if not self.supports(pol):
            allowed = ", ".join(n for n, p in schedulers.POLICIES.items() if self.supports(p))
            raise ConfigError(where, f"{name!r} {self.unsupported_hint}; {self.summary} jobs "
                              f"allow: {allowed}")
        return pol

    # ---- placement (harness.training.placement)
    def given_hosts(self, cfg: Any) -> tuple[int, ...]:
        """The hosts its settings name: the workers' (and the servers')."""
        return cfg.hosts

    def hosts_needed(self, cfg: Any) -> int:
        """Hosts the job takes when placed without `hosts`."""
        return cfg.workers

    def placed(self, cfg: Any, hosts: tuple[int, ...]) -> Any:
        """Its settings on the `hosts_needed` hosts placement chose."""
        return cfg.model_copy(update={"hosts": hosts})

    # ---- scale-down (harness.engine.scaling)
    def scaled(self, cfg: Any, k: int) -> dict[str, Any]:
        """Its own byte settings / k, as updates of cfg (the common ones are
        harness.engine.scaling's)."""
        return {}

    # ---- plan time
    def plan(self, cfg: Any, topo, classes, background: Any,
             scale: int) -> JobPlan:
        hosts = worker_hosts(cfg, topo)
        cls = background.traffic_class if cfg.priority == "same" else cfg.priority
        tos = classes.tos(cls, "training.priority")
        job = self.place(cfg, topo, classes, hosts, tos, scale)
        lo, hi = job.ports
        if background.enabled and lo <= background.port <= hi:
            raise ConfigError("training.port", f"ports {lo}-{hi} of the job include "
                              f"the background port {background.port}")
        job = dataclasses.replace(job, layer_tos=layer_tos(cfg, job.profile, classes, tos))
        job = self.finish(job)
        return dataclasses.replace(job, ideal_iteration_s=self.predict(job) / 1e3)

    def place(self, cfg: Any, topo, classes, hosts: tuple[int, ...], tos: int,
              scale: int) -> JobPlan:
        """Where the job runs, its profile and its ports (architecture's part)."""
        raise NotImplementedError

    def finish(self, job: JobPlan) -> JobPlan:
        """What follows from the per-layer classes (fused buffers, ...)."""
        return job

    def predict(self, job: JobPlan) -> float:
        """The no-contention iteration time (ms): the mean of the model's
        iterations after the first (which starts without waiting)."""
        return float(self.no_contention(job, iterations=4).iteration_ms[1:].mean())

    def no_contention(self, job: JobPlan, iterations: int) -> AnalyticResult:
        """`iterations` iterations of the planned job without contention."""
        raise NotImplementedError

    def bytes_per_iteration(self, job: JobPlan) -> float:
        """Payload all workers send per iteration (a sweep's cost proxy)."""
        raise NotImplementedError

    # ---- ns-3, through the scenario recipe (harness.engine.recipe)
    def recipe(self, job: JobPlan, ack_tos: int) -> list[str]:
        """The job's lines of the recipe: job_line(), its per-layer table
        (layer_lines), its plan and policy, then `job-install`."""
        raise NotImplementedError

    def job_line(self) -> str:
        """The `job NAME TYPEID` line that opens the job's lines: ScenarioRecipe
        creates the job by its TypeId (through the C++ helper registered for
        it) and hands the `job-*` lines that follow to that helper."""
        return f"job {self.name} {self.job_type}"

    def installed(self, scenario_recipe, slot: int):
        """The ns-3 job the recipe installed as its `slot`-th job (cppyy gives
        the object its own class: the architecture's methods are there)."""
        return scenario_recipe.GetJob(slot)

    def collect(self, ns_job, job: JobPlan, tos_class: dict[int, str]) -> JobTables:
        raise NotImplementedError


# --------------------------------------------------------------------------
# what the no-contention models share (each plug-in owns its model: ring.simulate,
# ps.simulate_ps, sharded.simulate_sharded)

@dataclass
class AnalyticResult:
    """A no-contention model's result; all times in milliseconds.

    ``iteration_ms``: iteration times (length ``iterations``).
    ``iteration_start_ms``: start of forward layer 0, length ``iterations + 1``.
    ``timeline``: one row per collective or transfer (the model's own columns).
    ``compute``: one row per compute phase (iteration, layer or group, phase,
    start_ms, end_ms).
    """

    iteration_ms: np.ndarray
    timeline: "object"  # pandas.DataFrame
    compute: "object"  # pandas.DataFrame
    iteration_start_ms: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    buffers: tuple = ()  # the ring's fused buffers (harness.traffic.fusion.Buffer)
    params: dict = dataclasses.field(default_factory=dict)


def allreduce_ms(
    size_bytes: int,
    n_workers: int,
    link_bps: float,
    payload_efficiency: float = 1.0,
    step_latency_s: float = 0.0,
) -> float:
    """Ring-allreduce time (ms) of one buffer of ``size_bytes``: N partitions
    (S // N, the first S % N one byte larger), 2(N-1) steps of the largest at
    the link's payload rate plus the step latency (harness.training.ring's
    model; the sharded job's collectives are half of it)."""
    largest = size_bytes // n_workers + (1 if size_bytes % n_workers else 0)
    step_s = largest * 8.0 / (link_bps * payload_efficiency) + step_latency_s
    return 2 * (n_workers - 1) * step_s * 1e3


def forward_spans(t0: float, fp_ms, sync_prev: list[float] | None) -> list[tuple[float, float]]:
    """(start, end) of each layer's forward pass from t0: layer i waits for
    forward of i-1 and, after iteration 0, for its parameters (sync_prev[i])."""
    spans = []
    cur = t0
    for i, f in enumerate(fp_ms):
        start = cur if (sync_prev is None or i == 0) else max(cur, sync_prev[i])
        cur = start + f
        spans.append((start, cur))
    return spans


def scaled_bytes(value: int | None, k: int) -> int | None:
    """A byte setting / k, at least 1 (harness.engine.scaling)."""
    return None if value is None else max(1, round(value / k))


def worker_hosts(cfg: Any, topo) -> tuple[int, ...]:
    hosts = cfg.hosts or tuple(range(cfg.workers))
    for i, h in enumerate(hosts):
        topo.check_host(h, f"training.hosts[{i}]" if cfg.hosts else "training.workers")
    return hosts


def load(cfg: Any, network_ms: Callable[[float], float],
         scale: int = 1) -> profiles.Profile:
    """The job's profile, its bytes / `scale` (harness.engine.scaling: cfg's byte
    fields are scaled already); with `ratio`, every layer's compute is scaled so the
    iteration's compute is R x network_ms(`model_bytes`) (default: the
    profile's bytes), the job's network time per iteration: the ring time
    for ring allreduce, harness.training.ps.network_time_ms for parameter servers.
    For the resnet50-like family compute is linear in T, so scaling equals
    regenerating (sizes stay as in the file)."""
    path = resolve_data_file(cfg.profile, PROFILES_DIR, ".csv", "training.profile")
    try:
        profile = profiles.load_profile(path)
    except profiles.ProfileError as e:
        raise ConfigError("training.profile", str(e)) from None
    if max(profile.layer_bytes) > INT64_MAX:
        raise ConfigError("training.profile", f"{path}: a layer of more than {INT64_MAX:,} B")
    profile = profiles.scaled(profile, scale)
    if cfg.ratio is not None:
        model_bytes = cfg.model_bytes or profile.model_bytes
        factor = cfg.ratio * network_ms(model_bytes) / profile.compute_ms
        profile = dataclasses.replace(profile, name=f"{profile.name}-R{cfg.ratio:g}",
                                      fp_ms=tuple(t * factor for t in profile.fp_ms),
                                      bp_ms=tuple(t * factor for t in profile.bp_ms))
    # ns-3 runs each layer's compute as an int64 count of nanoseconds
    longest_ms = max(*profile.fp_ms, *profile.bp_ms)
    if longest_ms * 1e6 > INT64_MAX:
        field = "training.ratio" if cfg.ratio is not None else "training.profile"
        raise ConfigError(field, f"a layer's compute time ({longest_ms / 1e3:.3g} s) is beyond "
                          f"the longest time ns-3 represents ({NS3_TIME_MAX_S:.3g} s)")
    return profile


def layer_tos(cfg: Any, profile: profiles.Profile, classes,
              default_tos: int) -> tuple[int, ...]:
    """IP ToS of each layer's gradients: `layer_classes` where given, else the
    job's class."""
    tos = [default_tos] * profile.n_layers
    for cls, first, last in cfg.layer_classes:
        where = f"training.layer_classes.{cls}"
        if last >= profile.n_layers:
            raise ConfigError(where, f"layer {last} does not exist; profile "
                              f"{profile.name!r} has layers 0-{profile.n_layers - 1}")
        tos[first:last + 1] = [classes.tos(cls, where)] * (last - first + 1)
    return tuple(tos)


def deadline_tos(cfg: Any, classes) -> int:
    """The deadline-aware class's ToS (training.deadline_class), -1 if off."""
    if cfg.deadline_class is None:
        return -1
    return classes.tos(cfg.deadline_class, "training.deadline_class")


def deadline_lines(job: JobPlan) -> list[str]:
    """The job attributes of the deadline-aware class (TrainingJob's
    DeadlineTos and the link rate its slack is estimated at); none when off."""
    if job.deadline_tos < 0:
        return []
    return [recipe_attribute("DeadlineTos", str(job.deadline_tos)),
            recipe_attribute("LinkBps", str(int(job.link_bps)))]


def recipe_attribute(name: str, value: str) -> str:
    """A `job-attribute` line (TrainingJobHelper::SetJobAttribute, a StringValue)."""
    return f"job-attribute {name} {token(value, f'job attribute {name}')}"


def recipe_scheduler(side: str, type_id: str, attributes) -> str:
    """A `job-scheduler` line: the policy's CommScheduler and its attributes."""
    return " ".join(["job-scheduler", side, type_id,
                     *(token(a, "scheduler attribute") for a in attributes)])


def layer_lines(job: JobPlan) -> list[str]:
    """The per-layer table every C++ job takes (TrainingJobHelper): bytes,
    forward and backward ns, ToS of each layer, the workers' slowdowns and
    their per-iteration compute factors (stragglers); the job's id and start
    time when it is one of several."""
    p = job.profile
    lines = []
    if job.index:
        lines.append(recipe_attribute("JobId", str(job.index)))
    if job.config.start:
        lines.append(f"job-start {round(job.config.start * 1e9)}")
    lines.append("job-layers " + " ".join(token_list(v) for v in (
        p.layer_bytes, [round(t * 1e6) for t in p.fp_ms], [round(t * 1e6) for t in p.bp_ms])))
    lines.append(f"job-layer-classes {token_list(job.layer_tos)}")
    lines += [f"job-slowdown {slow.worker} {round(slow.start * 1e9)} {round(slow.end * 1e9)} "
              f"{float(slow.factor)!r}" for slow in job.config.slowdowns]
    lines += [f"job-compute-factors {rank} {token_list([float(f) for f in factors])}"
              for rank, factors in enumerate(job.compute_factors) if factors]
    return lines
