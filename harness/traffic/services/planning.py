"""Every [[service]] of a scenario planned on the network as simulated
(each by its kind: hosts placed and checked, sizes and rates scaled, the
no-contention time, what cannot work refused, its requests drawn), and the
services' lines of the scenario recipe (harness.engine.recipe)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from harness.config import registry
from harness.traffic.services.kind import PlanContext, RecipeContext, ServicePlan
from harness.traffic.services.wire import Path

if TYPE_CHECKING:
    from harness.network.topology import Topology


def plan(scenario: Any, topo: "Topology", classes, duration: float,
         cdf: Callable) -> tuple[ServicePlan, ...]:
    """Every [[service]] of the scenario, planned (none: ()); `cdf(name,
    where)` is a size CDF by name, scaled as the scenario is."""
    if not scenario.services:
        return ()
    from harness.network import routing   # not at import: the registry imports this package

    table = routing.next_hops(topo)

    def path(src: int, dst: int) -> Path:
        links = [topo.links[i] for i in routing.path_links(topo, src, dst, table)]
        return Path(tuple(l.rate_bps for l in links), tuple(l.delay_s for l in links))

    ctx = PlanContext(topology=topo, seed=scenario.seed, scale=scenario.scale,
                      segment=scenario.tcp.segment_size, duration=duration, path=path, cdf=cdf)
    out = []
    for i, cfg in enumerate(scenario.services):
        at = f"service[{i}]"
        pool = cfg.hosts or tuple(range(topo.n_hosts))
        for j, h in enumerate(cfg.hosts):
            topo.check_host(h, f"{at}.hosts[{j}]")
        kind = registry.service_kinds()[cfg.kind]
        base = ServicePlan(index=i, name=cfg.name, kind=cfg.kind, port=kind.ports(cfg, i)[0],
                           tos=classes.tos(cfg.traffic_class, f"{at}.class"))
        out.append(kind.plan(base, cfg, at, pool, ctx))
    return tuple(out)


def recipe_lines(services: tuple[ServicePlan, ...], window_ns: tuple[int, int]) -> list[str]:
    """The services in the scenario recipe: a ServiceLog, then each
    service's own lines in file order (request ids and application numbers
    in order across services)."""
    lines = ["service-log"]
    requests = apps = 0
    for s in services:
        kind = registry.service_kinds()[s.kind]
        own = kind.recipe_lines(s, RecipeContext(window_ns, requests, apps))
        lines += own
        requests += kind.planned_requests(s)
        apps += sum(line.startswith("service-app ") for line in own)
    return lines


def sent_bytes(services: tuple[ServicePlan, ...], seconds: float) -> float:
    """Payload bytes the services send in the first `seconds` (the cost estimate)."""
    return sum(registry.service_kinds()[s.kind].sent_bytes(s, seconds) for s in services)


def table_rows(services: tuple[ServicePlan, ...], seconds: float) -> float:
    """Rows the services add to the run's tables in `seconds`."""
    return sum(registry.service_kinds()[s.kind].table_rows(s, seconds) for s in services)
