"""Training jobs: one plug-in module per architecture, found here.

An architecture is a module of this package with an `ARCHITECTURE`: an
instance of its `Architecture` subclass (harness.training.common: check /
plan / recipe / collect / no_contention, and `job_type`, its C++ job's
TypeId), and its C++ job, workers and helper in ns3-modules/jobs/
(docs/architecture/extending.md). Nothing else names it: the registry below
is every such module of the package, and each is registered with the
configuration (harness.config.registry), which reads a job's settings
through it without importing this package. Beside the plug-ins, what they
share: common (the Architecture base and the no-contention models' parts),
placement (where each job's workers go) and stragglers (the per-worker,
per-iteration compute factors)."""

from __future__ import annotations

import importlib
import pkgutil

from harness.config import registry
from harness.config.registry import DEFAULT_ARCHITECTURE, architecture, architectures_taking
from harness.training.common import Architecture, JobPlan, JobTables


def _plug_ins() -> list[Architecture]:
    """The ARCHITECTURE of every module of this package: the default first,
    then by name (the order of messages, docs and warm-ups)."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        plug_in = getattr(importlib.import_module(f"{__name__}.{module.name}"),
                          "ARCHITECTURE", None)
        if plug_in is not None:
            found.append(plug_in)
    return sorted(found, key=lambda a: (a.name != DEFAULT_ARCHITECTURE, a.name))


#: The registry: scenario name (training.architecture) -> plug-in.
ARCHITECTURES: dict[str, Architecture] = {a.name: a for a in _plug_ins()}
for _plug_in in ARCHITECTURES.values():
    registry.add_architecture(_plug_in)

#: config.json["training"] holds every architecture's own keys for every job:
#: each at its empty value where the job's architecture has no such key.
UNUSED_PLAN_KEYS = {key: value for a in ARCHITECTURES.values()
                    for key, value in a.plan_keys.items()}

#: config.json["training"] of a scenario without a training job.
NO_JOB = {"hosts": [], "tos": 0, "layer_tos": [], **UNUSED_PLAN_KEYS, "profile": None,
          "compute_ms": None, "ideal_iteration_s": None}

__all__ = ["ARCHITECTURES", "DEFAULT_ARCHITECTURE", "NO_JOB", "UNUSED_PLAN_KEYS",
           "Architecture", "JobPlan", "JobTables", "architecture", "architectures_taking"]
