"""The findings pages' causes: ``finding-causes SWEEP``, what drives each
verdict of a kept sweep, from its kept attribution tables
(harness.analysis.cause_changes): per point and compared arm whose
training verdict is not a decided green, the iteration time's change split into
computing, TCP back-off and the rest of the wait with their intervals and
the part that dominates; then each decided change of the background's mean
FCT split into RTO back-off and queueing, and each service's request
latency change likewise. A sweep kept before the causes were measured
says so and how to rerun it."""

from __future__ import annotations

import math

import pandas as pd

from harness.analysis.cause_changes import CAUSE_PARTS, share_words
from harness.analysis.tables import POINT_LABEL, optional_table
from harness.findings import registry
from harness.outputs.words import short_name

#: the iteration time's parts in a page's words (training_causes' prefixes)
ITERATION_PART_WORDS = {"rto": "TCP back-off", "rest": "the rest of the wait",
                        "compute": "computing"}


#: a part smaller than this (0.1 % of the iteration) dominates nothing,
#: whatever its interval (computing's change is 0 up to rounding)
MIN_PART = 1e-3


def _percent(change: float, low: float, high: float) -> str:
    if not math.isfinite(change):
        return "n/a"
    interval = (f" [{100 * low:+.1f}, {100 * high:+.1f}]" if math.isfinite(low) else "")
    return f"{100 * change:+.1f} %{interval}"


def _decided_nonzero(low: float, high: float) -> bool:
    return math.isfinite(low) and math.isfinite(high) and (low > 0 or high < 0)


def dominant_part(row: dict) -> str:
    """The part of a training_causes row whose change is largest among those
    whose interval excludes 0, in words; "none decided" where none does."""
    decided = [(abs(row[f"{p}_change"]), p) for p in ITERATION_PART_WORDS
               if _decided_nonzero(row[f"{p}_low"], row[f"{p}_high"])
               and abs(row[f"{p}_change"]) >= MIN_PART]
    return ITERATION_PART_WORDS[max(decided)[1]] if decided else "none decided"


def _point(row: dict, keys: list[str]) -> str:
    """A point in words: a labelled point ([[points]]) by its label, any
    other by its axes' values."""
    if POINT_LABEL in keys:
        return str(row[POINT_LABEL])
    return "the cell" if not keys else ", ".join(f"{short_name(k)} {row[k]:g}" if isinstance(row[k], float)
                     else f"{short_name(k)} {row[k]}" for k in keys)


def _not_attributed(key: str) -> str:
    return (f"*Not attributed yet: the kept tables of `{key}` predate the causes "
            f"(`harness findings run` on its finding reruns them and keeps "
            "training_causes.parquet and causes.parquet).*\n")


def finding_causes(key: str) -> str:
    """What drives each decided verdict of the kept sweep `key`, as
    markdown: a table of training's decided verdicts and their parts, one
    of the background's decided mean-FCT changes and theirs, one of the
    services' latency changes (where kept)."""
    sweep, loaded = registry.load_kept(key)
    if loaded is None:
        return _not_attributed(key)
    training = optional_table(loaded.dir, "training_causes")
    flows = optional_table(loaded.dir, "causes")
    if training is None and flows is None:
        return _not_attributed(key)
    means = loaded.deltas_mean
    keys = [k for k in loaded.grid.get("axes", []) if k != "seed"]
    parts = []
    if training is not None and len(training):
        parts.append(_training_table(training, means, keys))
    if flows is not None and len(flows):
        parts.append(_flows_table(flows, keys))
    services = optional_table(loaded.dir, "service_causes")
    if services is not None and len(services):
        parts.append(_services_table(services, keys))
    return "\n\n".join(p for p in parts if p) + "\n"


def _verdicts(means: pd.DataFrame | None, keys: list[str]) -> dict[tuple, tuple[str, bool]]:
    if means is None:
        return {}
    rows = means[means["metric"] == "iteration_time"]
    return {(*(r[k] for k in keys), r["arm"]): (r["verdict"], bool(r["decided"]))
            for r in rows.to_dict("records")}


def _training_table(training: pd.DataFrame, means: pd.DataFrame | None, keys: list[str]) -> str:
    verdicts = _verdicts(means, keys)
    head = ("Training's verdicts other than a decided green, and what their iteration-time "
            "change is made of (each part over the reference's mean iteration, [95 % "
            "interval]; the parts add up to the change):")
    lines = [head, "",
             "| point | arm | verdict | change | TCP back-off | rest of the wait | computing "
             "| back-off's share | dominant |", "|---|---|---|---|---|---|---|---|---|"]
    shown = 0
    for r in training.to_dict("records"):
        verdict, decided = verdicts.get((*(r[k] for k in keys), r["arm"]), ("", False))
        if verdict in ("", "n/a", "too few samples") or (decided and verdict == "green"):
            continue   # nothing to explain: no change measured, or a decided green
        lines.append(f"| {_point(r, keys)} | `{r['arm']}` | {verdict} | "
                     f"{100 * r['change']:+.1f} % | "
                     f"{_percent(r['rto_change'], r['rto_low'], r['rto_high'])} | "
                     f"{_percent(r['rest_change'], r['rest_low'], r['rest_high'])} | "
                     f"{_percent(r['compute_change'], r['compute_low'], r['compute_high'])} | "
                     f"{share_words(r) or 'undecided'} | {dominant_part(r)} |")
        shown += 1
    if not shown:
        return "Every training verdict is a decided green: nothing to explain."
    return "\n".join(lines)


def _split_cells(r: dict, whole: str, reference: float) -> str:
    """A pair-by-pair split (cause_changes._split's columns: `whole`, rto,
    rest) as table cells, each over the reference's mean, and the
    back-off's share."""
    cells = [_percent(r[f"{part}_change_s"] / reference, r[f"{part}_low_s"] / reference,
                      r[f"{part}_high_s"] / reference) for part in (whole, *CAUSE_PARTS)]
    return " | ".join([*cells, share_words(r) or "undecided"])


def _flows_table(flows: pd.DataFrame, keys: list[str]) -> str:
    lines = ["The background's decided mean-FCT changes and what they are made of (flow "
             "pairs; RTO back-off: the flows' time without progress before timeouts):", "",
             "| point | arm | flows | change | RTO back-off | queueing and the rest "
             "| RTO back-off's share |", "|---|---|---|---|---|---|---|"]
    shown = 0
    for r in flows.to_dict("records"):
        ref = r["reference_fct_s"]
        if not (r["pairs"] and ref > 0 and _decided_nonzero(r["fct_low_s"], r["fct_high_s"])):
            continue
        lines.append(f"| {_point(r, keys)} | `{r['arm']}` | {r['size_class']} | "
                     f"{_split_cells(r, 'fct', ref)} |")
        shown += 1
    return "\n".join(lines) if shown else "No decided change of the background's mean FCT."


def _services_table(services: pd.DataFrame, keys: list[str]) -> str:
    lines = ["Each service's mean request latency change and what it is made of (request "
             "pairs; RTO back-off: the client connection's time without progress before "
             "timeouts):", "",
             "| point | arm | service | change | RTO back-off | queueing and the rest "
             "| RTO back-off's share |", "|---|---|---|---|---|---|---|"]
    for r in services.to_dict("records"):
        ref = r["reference_latency_s"]
        if r["pairs"] and ref > 0:
            lines.append(f"| {_point(r, keys)} | `{r['arm']}` | {r['service']} ({r['kind']}) | "
                         f"{_split_cells(r, 'latency', ref)} |")
    return "\n".join(lines)
