"""Training jobs: one plug-in module per architecture, registered here.

Adding an architecture: a module of this package with an `Architecture`
subclass (harness.training.common: check / plan / recipe / collect /
predict, and `job_type`, its C++ job's TypeId) and its C++ job, workers and
helper in ns3-modules/jobs/ (docs/architecture/extending.md), plus one line
below."""

from __future__ import annotations

from harness.errors import ConfigError
from harness.training import ps, ring
from harness.training.common import NO_JOB, Architecture, JobPlan, JobTables

#: The registry: scenario name (training.architecture) -> plug-in.
ARCHITECTURES: dict[str, Architecture] = {a.name: a for a in (
    ring.ARCHITECTURE,
    ps.ARCHITECTURE,
)}


def architecture(name: str, where: str = "training.architecture") -> Architecture:
    if name not in ARCHITECTURES:
        raise ConfigError(where, f"unknown architecture {name!r}; allowed: "
                          f"{', '.join(ARCHITECTURES)}")
    return ARCHITECTURES[name]


__all__ = ["ARCHITECTURES", "NO_JOB", "Architecture", "JobPlan", "JobTables", "architecture"]
