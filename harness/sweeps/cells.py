"""A sweep's cells: one scenario of one point and arm, named by the digest of
its resolved scenario. Shared by the sweep (which plans them) and the
executors (which run them, in another process); it knows neither. A cell's
status in the summary table: harness.analysis.summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.analysis.summary import point_value
from harness.config.scenario import Scenario


@dataclass(frozen=True)
class Cell:
    id: str                                # digest of the resolved scenario
    arm: str | None
    point: tuple[tuple[str, Any], ...]     # axis field -> value
    scenario: Scenario | None              # None: invalid (see error)
    error: str | None = None
    predicted_bytes: float = 0.0           # what it sends: a proxy for its cost
    reference: str | None = None           # the reference arm of its point
    output_bytes: int = 0                  # its run directory's size, roughly (free space)
    short: str | None = None               # why it cannot measure an iteration (planning.short_window)

    def labels(self) -> dict[str, Any]:
        return {"cell": self.id, "arm": self.arm,
                **{f: point_value(v) for f, v in self.point}}


def cell_json(cell: Cell) -> dict:
    return {**cell.labels(), "point": dict(cell.point)}
