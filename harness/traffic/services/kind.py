"""The service-kind plug-in interface: what one kind of [[service]] (a
query, an RPC, a stream, ...) is to the rest of the harness.

A kind is a module of this package with a `KIND`, an instance of a
`ServiceKind` subclass. It declares, in one place, everything the harness
does with that kind: its `[[service]]` table (`settings`, on the base of
harness.config.schema.service), its plan (placement, sizes and rates as
simulated, no-contention time, what cannot work refused), its lines of the
scenario recipe, its entry of summary.json from the run's raw records, its
statistics in a sweep's tables (`stats`), the samples its changes pair, the
bytes it sends (the cost estimate), and its line on the console. Nothing
else of the harness names a kind.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar

import numpy as np
import pandas as pd

from harness.config.errors import ConfigError
from harness.io.recipe_tokens import component
from harness.traffic.services.wire import Path

if TYPE_CHECKING:
    from harness.analysis.services import ServiceStat
    from harness.analysis.tables import Run
    from harness.network.topology import Topology
    from harness.traffic.background import FlowSizeCdf

#: Stream label: service randomness never shares draws with anything else.
SERVICE_STREAM = 0x5E4
#: A service's (first) port when `port` is not given: this + its table's place.
DEFAULT_PORT_BASE = 7000
#: Samples of one run for the paired changes: statistic name -> values by pair key.
Samples = dict[str, pd.Series]


@dataclass(frozen=True)
class ServicePlan:
    """One service as planned: who sends to whom, and its no-contention
    time. Each kind's plan adds its own fields (a subclass of its module)."""

    index: int                       # its place among the scenario's [[service]] tables
    name: str
    kind: str
    tos: int
    port: int                        # its (first) port
    clients: tuple[int, ...] = ()    # the hosts that send (its kind says which)
    servers: tuple[int, ...] = ()    # the hosts that answer or receive
    target_s: float | None = None    # a deadline or an SLO
    ideal_s: float = 0.0             # no-contention time (the largest over its pairs)

    def resolved(self) -> dict:
        """This service as run, for config.json (a kind adds its own keys)."""
        return {"name": self.name, "kind": self.kind, "tos": self.tos, "port": self.port,
                "clients": list(self.clients), "servers": list(self.servers),
                "ideal_s": self.ideal_s, "target_s": self.target_s}


@dataclass(frozen=True)
class PlanContext:
    """What a service is planned against: the network as simulated and the run."""

    topology: "Topology"
    seed: int
    scale: int                       # the scale-down k (sizes and rates / k)
    segment: int                     # TCP's segment size (bytes)
    duration: float                  # the run's length (s)
    path: Callable[[int, int], Path]                 # the one-way path src -> dst
    cdf: Callable[[str, str], "FlowSizeCdf"]         # a size CDF by name, scaled to k


@dataclass(frozen=True)
class RecipeContext:
    """Where a service's recipe lines start: the window (ns), the first
    request id and the first application number that are its."""

    window_ns: tuple[int, int]
    first_request: int
    first_app: int


@dataclass(frozen=True)
class ServiceApp:
    """One of a service's applications after the run (ScenarioRecipe::GetServiceApp):
    its TypeId's name, the object (cppyy gives it its own class), and the
    bytes it had received at the window's start and end where its lines note them."""

    type_name: str
    app: Any
    received: tuple[int, int] | None = None


def app_line(plan: ServicePlan, host: int, type_id: str, attributes: dict,
             peer: int = -1, port: int = 0, stream: int = -1) -> str:
    """A `service-app` line: one application of the service on `host`, an ns-3
    TypeId and its attributes (harness.io.recipe_tokens.component); `peer`,
    the host it sends to (its address set as RemoteAddress, or Remote with
    `port`), `stream` its random stream (-1 none)."""
    return (f"service-app {plan.index} {host} {peer} {port} {stream} "
            + component(type_id, attributes))


@dataclass
class ServiceRecords:
    """The raw records of one run that a kind's summary reads: the request
    table (every request-and-response service's rows), and this service's
    own share of the per-application records, in recipe order."""

    requests: pd.DataFrame | None = None     # analysis.services.request_table, every service
    queries: pd.DataFrame | None = None      # analysis.services.query_table of it
    packets: list = field(default_factory=list)   # (its packets' table, sent count) per receiver
    flows: list = field(default_factory=list)     # (bytes at the window's start, at its end)


class ServiceKind:
    """A kind of [[service]]: override what the kind does (see the module's doc)."""

    name: ClassVar[str]              # the `kind` of its tables
    summary: ClassVar[str]           # one line, for `harness list`
    order: ClassVar[int] = 100       # its place in messages and docs (the built-ins: 10, 20, ...)
    settings: ClassVar[type]         # its [[service]] table's model
    #: Whether its requests go through the run's ServiceLog (its rows are
    #: read for every such service; the rest read their own applications).
    uses_service_log: ClassVar[bool] = False
    #: The `identity` column on which two runs pair only what both received
    #: (a stream's lost packets are not in its table); None: all of it.
    received_key: ClassVar[str | None] = None
    #: Its statistics in summary.parquet, those with a change (deltas) first.
    stats: ClassVar[tuple["ServiceStat", ...]] = ()
    #: its latency as a run's service-latency figure draws it: (what the
    #: axis calls it, the key of samples() holding it in seconds); None: none
    latency: ClassVar[tuple[str, str] | None] = None

    # ---- the scenario
    def ports(self, cfg: Any, index: int) -> range:
        """Every port the service listens on (one by default)."""
        first = cfg.port if cfg.port is not None else DEFAULT_PORT_BASE + index
        return range(first, first + 1)

    def check(self, cfg: Any, index: int, duration: float) -> None:
        """Checks of the table against the run (e.g. a start within it)."""

    def plan(self, base: ServicePlan, cfg: Any, at: str, pool: tuple[int, ...],
             ctx: PlanContext) -> ServicePlan:
        """The service as simulated: `base` (index, name, kind, tos, port)
        completed; every ConfigError names its field under `at`."""
        raise NotImplementedError

    def recipe_lines(self, plan: ServicePlan, at: "RecipeContext") -> list[str]:
        """Its lines of the scenario recipe: its applications (`app_line`,
        each an ns-3 TypeId and its attributes), and what they need."""
        raise NotImplementedError

    def rdma_hosts(self, plan: ServicePlan) -> tuple[int, ...]:
        """The hosts whose RDMA stack (queue pairs, DCQCN) it uses; none by default."""
        return ()

    def planned_requests(self, plan: ServicePlan) -> int:
        """How many requests its recipe lines add to the ServiceLog."""
        return 0

    def read_records(self, apps: list["ServiceApp"]) -> ServiceRecords:
        """Its share of the raw records, read from its applications (in its
        lines' order) once the run is over; the request log is read for all."""
        return ServiceRecords()

    # ---- the run's results
    def summarize(self, plan: ServicePlan, records: ServiceRecords,
                  window: tuple[float, float]) -> dict:
        """Its entry of summary.json's `services` (with `kind`)."""
        raise NotImplementedError

    def console_line(self, name: str, s: dict) -> str:
        """Its line of `harness run`'s summary."""
        raise NotImplementedError

    # ---- a sweep's changes (harness.analysis.service_changes)
    def samples(self, run: "Run", service: str) -> Samples:
        """Each changed statistic's samples of one run, indexed by the key
        that pairs them across arms (a request id, a packet's number)."""
        return {}

    def identity(self, run: "Run", service: str) -> pd.DataFrame | None:
        """What the service sent, as planned: two runs pair only where it is the same."""
        return None

    # ---- cost
    def sent_bytes(self, plan: ServicePlan, seconds: float) -> float:
        """Payload bytes it sends in the first `seconds` (the cost estimate)."""
        return 0.0

    def table_rows(self, plan: ServicePlan, seconds: float) -> float:
        """Rows it adds to the run's tables in `seconds` (the output-size estimate)."""
        return 0.0


# --------------------------------------------------------------------------
# what the kinds share

def rngs(seed: int, index: int, n: int) -> list[np.random.Generator]:
    """n generators of service `index`: one per quantity, so that one's draws
    do not depend on how many another made (a longer run extends the same arrivals)."""
    seeds = np.random.SeedSequence([seed, SERVICE_STREAM, index]).spawn(n)
    return [np.random.default_rng(s) for s in seeds]


def place(given: tuple[int, ...], default: tuple[int, ...], topo: "Topology", where: str,
          what: str) -> tuple[int, ...]:
    """The hosts of a role: those given (each checked), else the placement
    rule's `default`; none left is an error naming the role."""
    for j, h in enumerate(given):
        topo.check_host(h, f"{where}[{j}]")
    hosts = given or default
    if not hosts:
        raise ConfigError(where, f"no {what} left: the placement rule found none among the "
                          "service's hosts; list them, or give more hosts")
    return hosts


def one_host(given: int | None, default: tuple[int, ...], topo: "Topology", where: str,
             what: str) -> int:
    """A role of one host: given (checked), else the placement rule's first
    of `default` (none left is an error naming the role)."""
    if given is not None:
        topo.check_host(given, where)
        return given
    return place((), default, topo, where, what)[0]


def free(pool: tuple[int, ...], *taken) -> tuple[int, ...]:
    """The hosts of `pool` that no other role of the service has: the
    placement rule never puts a host in two roles, so a role left to it
    beside one given goes to the hosts the given one leaves."""
    used = {h for role in taken for h in ((role,) if isinstance(role, int) else role or ())}
    return tuple(h for h in pool if h not in used)


def scaled(size: int, k: int) -> int:
    """A size / k, at least 1 byte (the time-preserving scale-down)."""
    return max(1, round(size / k))


def refuse_busy(where: str, share: float, what: str, limit: str) -> None:
    """A load its links cannot carry even at zero load is an error."""
    if share >= 1:
        raise ConfigError(where, f"{what} would keep a link {share:.0%} busy at zero load, "
                          f"more than it can serve; {limit}")


def ms(seconds: float | None) -> str:
    """A time on the console: "1.234 ms", or "-" (too few samples, or none given)."""
    return "-" if seconds is None else f"{seconds * 1e3:.3f} ms"


def tail_ms(seconds: float | None, q: float, what: str) -> str:
    """A tail quantile on the console; "-" says why: too few samples for it."""
    from harness.analysis.services import TAIL_SAMPLES

    return ms(seconds) if seconds is not None else f"- (under {TAIL_SAMPLES[q]:,} {what})"


def share(fraction: float | None) -> str:
    """A fraction on the console: "12.34%", or "-"."""
    return "-" if fraction is None else f"{fraction:.2%}"


def rows(table: pd.DataFrame | None, service: str) -> pd.DataFrame | None:
    """A service's rows of a run's services or streams table (None: none)."""
    if table is None or table.empty:
        return None
    return table[table["service_name"] == service]


def targets(run: "Run", service: str) -> dict:
    """The service's entry of the run's summary.json (its deadline, SLO)."""
    return (run.summary.get("services") or {}).get(service) or {}


def replace(plan: ServicePlan, cls: type, **fields: Any) -> Any:
    """`plan`'s common fields in a kind's own plan type, with `fields`."""
    common = {f.name: getattr(plan, f.name) for f in dataclasses.fields(ServicePlan)}
    return cls(**{**common, **fields})
