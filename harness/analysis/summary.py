"""A sweep's summary table (summary.parquet), as its writer (harness.sweeps)
and its readers (analysis, outputs) share it: each cell's status and its
reason, and a point's values as the table's cells."""

from __future__ import annotations

import json
from typing import Any


def point_value(value: Any) -> Any:
    """A point's value as a table cell and key: lists and tables (e.g.
    network.link_changes) as their JSON text."""
    if isinstance(value, (list, dict, tuple)):
        return json.dumps(value, sort_keys=True, default=str)
    return value


def none_if_na(value: Any) -> Any:
    """A table's missing value (NaN: a field this point does not set) as None,
    the value a cell's point gives for it."""
    return None if isinstance(value, float) and value != value else value


# a cell's status, with its reason

OK = "ok"
STALLED = "stalled"        # ran, but its training completed no iteration in the window
FAILED = "failed"          # no result: the error says why
UNFINISHED = "unfinished"  # not run yet, or stopped by Ctrl-C
#: cells that ran and have their tables: a stalled one's background flows,
#: utilisation and its +inf iteration change against a reference stand
MEASURED = (OK, STALLED)
NOT_RUN_REASON = "not run yet, or stopped (Ctrl-C): --resume runs it"


def stall_reason(run: dict) -> str:
    """Why a cell is stalled, from its scenario's run table (warmup, duration,
    cooldown)."""
    end = run.get("duration", 0) - run.get("cooldown", 0)
    return ("measured no complete training iteration between warm-up and cool-down "
            f"({run.get('warmup')} s to {end:g} s): stalled, or the run is too short "
            "(run.min_iterations)")


def cell_status(ran: bool, error: str | None, training_stalled: bool = False) -> str:
    """failed (an error), unfinished (neither ran nor failed), stalled (ran,
    its training measured no iteration) or ok."""
    if error:
        return FAILED
    if not ran:
        return UNFINISHED
    return STALLED if training_stalled else OK


def with_status_reasons(summary):
    """A summary table with `status` and `reason` as this version writes them:
    a table written before stalled was a status of its own ("ok" with
    training_stalled and the stall in `error`) reads as stalled, and every
    cell that is not ok has its reason (failed: its error)."""
    import pandas as pd

    summary = summary.copy()
    missing = pd.Series(None, index=summary.index, dtype=object)
    if "training_stalled" in summary:
        stalled = (summary["status"] == OK) & summary["training_stalled"].eq(True)
        summary.loc[stalled, "status"] = STALLED
    reason = summary.get("reason", missing).astype(object)
    reason = reason.where(reason.notna(), summary.get("error", missing).astype(object))
    reason = reason.where(reason.notna() | (summary["status"] != UNFINISHED), NOT_RUN_REASON)
    summary["reason"] = reason.where(summary["status"] != OK, None)
    return summary
