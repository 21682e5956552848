"""Do a native run (its raw tables, --tables) and a harness run (its run
directory) agree? Events, flows (completion, bytes, end time, flow by flow),
training iterations, per-band queue counters and link bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from harness.analysis.tables import read_csv

_QUEUE_KEYS = ["link", "from_node", "to_node", "band"]
_QUEUE_COUNTERS = ["enqueued_packets", "enqueued_bytes", "dequeued_packets", "dequeued_bytes",
                   "dropped_packets", "dropped_bytes", "max_backlog_packets"]


def _csv(path: Path) -> pd.DataFrame | None:
    if not path.is_file():
        return None
    return read_csv(path.read_text())   # the C++ tables' CSV, as the harness reads it


def _flows(run_dir: Path, tables: Path) -> dict:
    native = _csv(tables / "flows.csv")
    harness_file = run_dir / "flows.parquet"
    if native is None:
        return {"harness": int(len(pd.read_parquet(harness_file))), "native": 0}
    harness = pd.read_parquet(harness_file).set_index("id").sort_index()
    native = native.set_index("id").sort_index()
    end_ns = (harness["start_s"] + harness["fct_s"].fillna(0)).mul(1e9).round().astype("int64")
    end_ns = end_ns.where(harness["completed"], -1)
    same = (len(harness) == len(native)
            and bool((harness.index == native.index).all())
            and bool((harness["received_bytes"] == native["received_bytes"]).all())
            and bool((end_ns == native["end_ns"]).all()))
    return {"harness_completed": int(harness["completed"].sum()),
            "native_completed": int((native["end_ns"] >= 0).sum()),
            "harness_flows": int(len(harness)), "native_flows": int(len(native)),
            "identical": same}


def _iterations(run_dir: Path, tables: Path) -> dict | None:
    native = _csv(tables / "iterations.csv")
    if native is None:
        return None
    harness = pd.read_parquet(run_dir / "iterations.parquet")
    cols = ["worker", "iteration", "start_ns", "end_ns"]
    a = harness[cols].sort_values(cols[:2]).reset_index(drop=True)
    b = native[cols].sort_values(cols[:2]).reset_index(drop=True)
    return {"harness": int(len(a)), "native": int(len(b)),
            "identical": len(a) == len(b) and bool((a.to_numpy() == b.to_numpy()).all())}


def _queues(run_dir: Path, tables: Path) -> bool:
    harness = pd.read_parquet(run_dir / "queues.parquet")
    native = _csv(tables / "queues.csv")
    cols = _QUEUE_KEYS + _QUEUE_COUNTERS
    a = harness[cols].sort_values(_QUEUE_KEYS).reset_index(drop=True)
    b = native[cols].sort_values(_QUEUE_KEYS).reset_index(drop=True)
    return len(a) == len(b) and bool((a.to_numpy() == b.to_numpy()).all())


def agreement(run_dir: Path, native: dict, tables: Path) -> dict:
    """Compare one harness run directory with one native run (its printed
    counters and the raw tables it wrote into `tables`)."""
    summary = json.loads((run_dir / "summary.json").read_text())
    harness_bytes = int(pd.read_parquet(run_dir / "utilization.parquet")["bytes"].sum())
    native_bytes = int(_csv(tables / "utilization.csv")["bytes"].sum())
    out = {
        "harness_events": int(summary["events"]),
        "native_events": int(native["events"]),
        "event_difference": int(native["events"]) - int(summary["events"]),
        "flows": _flows(run_dir, tables),
        "iterations": _iterations(run_dir, tables),
        "queues_identical": _queues(run_dir, tables),
        "link_bytes": {"harness": harness_bytes, "native": native_bytes},
    }
    out["agree"] = (out["event_difference"] == 0
                    and out["flows"].get("identical", True)
                    and (out["iterations"] is None or out["iterations"]["identical"])
                    and out["queues_identical"] and harness_bytes == native_bytes)
    return out
