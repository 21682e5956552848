"""Services (scenario `[[service]]`): latency-critical traffic beside the
training job and the background, one plug-in module per kind.

A kind is a module of this package with a `KIND` (harness.traffic.services.kind:
its table's model, plan, recipe lines, summary, statistics, paired samples,
cost and console line), and its C++ applications in ns3-modules/services/.
Nothing else names it: the registry below is every such module of the
package, registered with the configuration (harness.config.registry), which
reads a [[service]] table through it without importing this package.

- kind.py: the interface, the plan's common fields, what kinds share;
- wire.py: bytes on the wire and the no-contention arithmetic;
- requests.py: what the request-and-response kinds (query, rpc) share;
- query.py, rpc.py, stream.py, poisson.py, bulk.py: the kinds;
- planning.py: every service of a scenario planned, and its recipe lines;
- results.py: the run's raw service records as its tables and summary.

Each service draws from random streams of its own (the seed, a label no
other traffic uses, and the service's place in the file), so its arrivals
do not depend on the training job, the background or the other services:
the two arms of an experiment (training `same` vs `low`) replay the very
same queries and requests.
"""

from __future__ import annotations

import importlib
import pkgutil

from harness.config import registry
from harness.traffic.services.kind import ServiceKind, ServicePlan
from harness.traffic.services.wire import TCP_FRAME_OVERHEAD, Path, tcp_wire_bytes


def _plug_ins() -> list[ServiceKind]:
    """The KIND of every module of this package, in the registry's order."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        kind = getattr(importlib.import_module(f"{__name__}.{module.name}"), "KIND", None)
        if kind is not None:
            found.append(kind)
    return found


# read through harness.config.registry.service_kinds(), in the kinds' order
for _kind in _plug_ins():
    registry.add_service_kind(_kind)

__all__ = ["TCP_FRAME_OVERHEAD", "Path", "ServiceKind", "ServicePlan", "tcp_wire_bytes"]
