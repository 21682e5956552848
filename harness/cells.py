"""A sweep's cells: one scenario of one point and arm, named by the digest of
its resolved scenario. Shared by the sweep (which plans them) and the
executors (which run them, in another process); it knows neither.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness.config import Scenario


@dataclass(frozen=True)
class Cell:
    id: str                                # digest of the resolved scenario
    arm: str | None
    point: tuple[tuple[str, Any], ...]     # axis field -> value
    scenario: Scenario | None              # None: invalid (see error)
    error: str | None = None
    predicted_bytes: float = 0.0           # what it sends: a proxy for its cost
    reference: str | None = None           # the reference arm of its point

    def labels(self) -> dict[str, Any]:
        return {"cell": self.id, "arm": self.arm,
                **{f: point_value(v) for f, v in self.point}}


def point_value(value: Any) -> Any:
    """A point's value as a table cell and key: lists and tables (e.g.
    network.link_changes) as their JSON text."""
    if isinstance(value, (list, dict, tuple)):
        return json.dumps(value, sort_keys=True, default=str)
    return value


def cell_json(cell: Cell) -> dict:
    return {**cell.labels(), "point": dict(cell.point)}
