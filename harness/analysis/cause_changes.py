"""What a compared arm's change of the background's completion times is
made of, flow by flow: the attribution table of a sweep (causes.parquet)
that `harness explain SWEEP` prints.

Both arms of a seed replay the same background flows (common random
numbers, as harness.analysis.run_changes pairs them), so each flow's
completion time splits the same way in both: the time it waited without
progress before retransmission timeouts (the sender's count in ns-3:
timeout_wait_s, harness.analysis.metrics.TCP_DELAYS), and the rest
(queueing behind other packets, serialisation, propagation, the window's
own pace). Over the flows both arms measured and completed, per size class
and pooled over seeds, the arm's mean FCT less the reference's is exactly
the change of the first plus the change of the second; each carries its
Student t interval over the flow pairs (stats.mean_difference), and the
timeouts' share of the change its interval by the delta method
(stats.share_of_difference), given only where the change itself is
decided. The remainder is not a residue of a model: it is measured, as the
FCT less the wait, and named "queueing and the rest".

Beside them, each arm's counts over all its measured flows: timeouts, the
spurious ones among them (the segment had reached the receiver), the flows
that timed out, fast retransmits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from harness.analysis.metrics import JOB_TCP_DELAYS
from harness.analysis.run_changes import flow_pairs, iteration_units, time_blocks
from harness.analysis.service_changes import same_plans, services_of
from harness.config import registry
from harness.analysis.stats import (FCT_CLASSES, MIN_FLOW_PAIRS, Interval, block_part_change,
                                    block_part_share, judge, mean_difference,
                                    share_of_difference)

if TYPE_CHECKING:
    from harness.analysis.tables import Run

#: the size classes attributed (each, and every flow)
CAUSE_CLASSES = FCT_CLASSES
#: each arm's counts over its measured flows (a flows-table column each)
COUNTS = ("timeouts", "spurious_timeouts", "fast_retransmits")
#: the parts a change is split into besides its whole, each a column prefix
#: (and the map's cause layer: `harness plot --metric fct_all_rto`, ...)
CAUSE_PARTS = ("rto", "rest")


def _measured(flows: pd.DataFrame, cls: str) -> pd.DataFrame:
    part = flows[flows["measured"]]
    return part if cls == "all" else part[part["size_class"] == cls]


def _split(whole: str, d_whole: np.ndarray, d_wait: np.ndarray, seeds: int) -> dict:
    """A change's parts from its pairs' differences (arm - reference): the
    whole (`whole`_change_s, _low_s, _high_s), the wait before timeouts
    (rto_) and the rest (rest_), each with its Student t interval, and the
    wait's share of the whole (rto_share, _low, _high)."""
    row: dict = {}
    for part, values in zip((whole, *CAUSE_PARTS), (d_whole, d_wait, d_whole - d_wait)):
        iv = mean_difference(values, seeds, MIN_FLOW_PAIRS["mean"])
        row.update({f"{part}_change_s": iv.change, f"{part}_low_s": iv.low,
                    f"{part}_high_s": iv.high})
    share = share_of_difference(d_wait, d_whole, seeds, MIN_FLOW_PAIRS["mean"])
    row.update(rto_share=share.change, rto_share_low=share.low, rto_share_high=share.high)
    return row


def fct_causes(reference: list["Run"], arm: list["Run"]) -> list[dict]:
    """One row per size class (CAUSE_CLASSES): pairs (flows both arms of a
    seed measured and completed), seeds, reference_fct_s (the reference's mean FCT
    over them); per part (fct: the whole change, rto: the timeouts' wait,
    rest: queueing and the rest) {part}_change_s, _low_s, _high_s (arm -
    reference, seconds, mean over the pairs); rto_share, _low, _high (the
    wait's share of the change); and per arm (reference_, arm_) the COUNTS
    and flows_with_timeouts over its measured flows. [] where the runs'
    flows carry no TCP delays (run before they were counted)."""
    runs = [*reference, *arm]
    if not runs or any(r.flows is None or "timeout_wait_s" not in r.flows for r in runs):
        return []
    seeds = len(reference)
    pairs = [flow_pairs(ref, a) for ref, a in zip(reference, arm)]   # as the FCT changes pair them
    rows = []
    for cls in CAUSE_CLASSES:
        fct, wait, ref_fct = [], [], []
        for r, x in pairs:
            if cls != "all":
                mask = (r["size_class"] == cls).to_numpy()
                r, x = r[mask], x[mask]
            fct.append(x["fct_s"].to_numpy(float) - r["fct_s"].to_numpy(float))
            wait.append(x["timeout_wait_s"].to_numpy(float)
                        - r["timeout_wait_s"].to_numpy(float))
            ref_fct.append(r["fct_s"].to_numpy(float))
        d_fct, d_wait = np.concatenate(fct), np.concatenate(wait)
        row: dict = {"size_class": cls, "pairs": len(d_fct), "seeds": seeds,
                     "reference_fct_s": float(np.mean(np.concatenate(ref_fct)))
                     if len(d_fct) else float("nan"),
                     **_split("fct", d_fct, d_wait, seeds)}
        for side, side_runs in (("reference", reference), ("arm", arm)):
            measured = [_measured(run.flows, cls) for run in side_runs]
            for count in COUNTS:
                row[f"{side}_{count}"] = int(sum(m[count].sum() for m in measured))
            row[f"{side}_flows_with_timeouts"] = int(sum((m["timeouts"] > 0).sum()
                                                         for m in measured))
        rows.append(row)
    return rows


def _answered(services: pd.DataFrame, service: str) -> pd.DataFrame:
    rows = services[(services["service_name"] == service) & services["measured"]]
    return rows[rows["answered"]].set_index("id")


def service_causes(reference: list["Run"], arm: list["Run"]) -> list[dict]:
    """Per [[service]] of requests (queries, RPCs) whose requests both arms
    of every seed sent alike: what its mean request latency's change is
    made of, request by request as fct_causes splits flows: the client
    connection's wait without progress before its timeouts
    (client_timeout_wait_ns) and the rest, over the requests both arms
    measured and answered. Keys: service, kind, pairs, seeds,
    reference_latency_s, latency_/rto_/rest_ change_s, _low_s, _high_s,
    rto_share, _low, _high, and per arm (reference_, arm_) client_timeouts
    and requests_with_timeouts over its measured requests. [] without
    services, or where the tables predate the client-side counts."""
    runs = [*reference, *arm]
    if not runs or any(r.services is None or "client_timeout_wait_ns" not in r.services
                       for r in runs):
        return []
    rows = []
    for service, kind_name, _ in services_of(runs):
        kind = registry.service_kinds().get(kind_name)
        if kind is None or not any((r.services["service_name"] == service).any() for r in runs):
            continue
        if not same_plans(reference, arm, kind, service):
            continue   # the arms sent different requests: nothing pairs them
        whole, wait, ref_latency = [], [], []
        for r, a in zip(reference, arm):
            rs, xs = _answered(r.services, service), _answered(a.services, service)
            common = rs.index.intersection(xs.index)
            rs, xs = rs.loc[common], xs.loc[common]
            whole.append(xs["latency_s"].to_numpy(float) - rs["latency_s"].to_numpy(float))
            wait.append((xs["client_timeout_wait_ns"].to_numpy(float)
                         - rs["client_timeout_wait_ns"].to_numpy(float)) / 1e9)
            ref_latency.append(rs["latency_s"].to_numpy(float))
        d_whole = np.concatenate(whole)
        row: dict = {"service": service, "kind": kind_name, "pairs": len(d_whole),
                     "seeds": len(reference),
                     "reference_latency_s": float(np.mean(np.concatenate(ref_latency)))
                     if len(d_whole) else float("nan"),
                     **_split("latency", d_whole, np.concatenate(wait), len(reference))}
        for side, side_runs in (("reference", reference), ("arm", arm)):
            measured = [r.services[(r.services["service_name"] == service)
                                   & r.services["measured"]] for r in side_runs]
            row[f"{side}_client_timeouts"] = int(sum(m["client_timeouts"].sum()
                                                     for m in measured))
            row[f"{side}_requests_with_timeouts"] = int(sum((m["client_timeouts"] > 0).sum()
                                                            for m in measured))
        rows.append(row)
    return rows


def service_cause_lines(table: pd.DataFrame, reference: str) -> list[str]:
    """One point's service_causes rows (one arm) in words, a line per
    service with pairs."""
    out = []
    for r in table.to_dict("records"):
        if not r["pairs"]:
            continue
        rel = (f" ({100 * r['latency_change_s'] / r['reference_latency_s']:+.1f} % of "
               f"{r['reference_latency_s'] * 1e3:,.3g} ms)" if r["reference_latency_s"] > 0
               else "")
        line = (f"{r['service']} ({r['kind']}), {r['pairs']:,} request pairs: mean latency "
                f"{_ms(r, 'latency', rel)} against {reference}, of which client-side RTO "
                f"back-off {_ms(r, 'rto')} and queueing and the rest {_ms(r, 'rest')}")
        if share := share_words(r):
            line += f"; RTO back-off is {share} of the change"
        out.append(line + f". Client timeouts {r['reference_client_timeouts']:,} -> "
                   f"{r['arm_client_timeouts']:,} (requests with one "
                   f"{r['reference_requests_with_timeouts']:,} -> "
                   f"{r['arm_requests_with_timeouts']:,})")
    return out


#: the parts training's iteration time is split into (iteration_causes), each
#: a column prefix: computing, waiting on the network while one of the
#: job's TCP connections was in a retransmission back-off, and the rest of
#: the wait (queueing behind other traffic, serialisation, the collective's
#: own steps)
ITERATION_CAUSES = ("compute", "rto", "rest")


def _iteration_parts(units: pd.DataFrame) -> dict[str, np.ndarray]:
    wait = units["network_wait_s"].to_numpy(float)
    rto = units["rto_wait_s"].to_numpy(float)
    return {"total": units["iteration_s"].to_numpy(float),
            "compute": units["compute_s"].to_numpy(float), "rto": rto,
            # a job over RDMA has no TCP back-off measured: all of its wait is the rest
            "rest": np.where(np.isnan(rto), wait, wait - rto)}


def iteration_causes(reference: list["Run"], arm: list["Run"]) -> dict | None:
    """What the arm's change of training's mean iteration time is made of,
    paired by time block as run_changes.iteration_change pairs it: each
    iteration (its workers averaged) is its compute time plus its network
    wait, the wait the part in TCP back-off (rto) plus the rest
    (metrics.with_iteration_parts), so the parts' changes over the
    reference's mean iteration add up to the iteration time's change
    exactly. Keys: blocks, seeds, reference_iteration_s, arm_iteration_s,
    change (arm / reference - 1), per part {part}_change, _low, _high
    (block_part_change), rto_share, _low, _high (block_part_share: the
    back-off's share of the change, only where the change is decided), per
    arm (reference_, arm_) its mean compute_s, rto_wait_s and rest_wait_s,
    and its connections' JOB_TCP_DELAYS summed over seeds (training_tcp_*).
    None where a run's iterations lack the parts (run before they were
    measured, or without a compute table), neither arm measured an
    iteration, or the arm stalled (no iteration where the reference had
    some: the training verdict says so)."""
    ref_units = [iteration_units(r.iterations) for r in reference]
    arm_units = [iteration_units(a.iterations) for a in arm]
    units = [*ref_units, *arm_units]
    if not units or any(len(u) and "rto_wait_s" not in u for u in units):
        return None
    if not any(len(u) for u in arm_units) or not any(len(u) for u in ref_units):
        return None
    sums: dict[str, list] = {}
    for r, a in zip(ref_units, arm_units):
        rb, ab, n = time_blocks(r["start_ns"].to_numpy(), a["start_ns"].to_numpy())
        if n == 0:
            continue
        for side, blocks, u in (("reference", rb, r), ("arm", ab, a)):
            sums.setdefault(f"{side}_n", []).append(np.bincount(blocks, minlength=n))
            for part, values in _iteration_parts(u).items():
                sums.setdefault(f"{side}_{part}", []).append(np.bincount(blocks, values, n))
    if not sums:
        return None
    b = {k: np.concatenate(v).astype(float) for k, v in sums.items()}
    seeds = len(reference)
    ref_n, arm_n = b["reference_n"], b["arm_n"]
    ref_mean, arm_mean = (b["reference_total"].sum() / ref_n.sum(),
                          b["arm_total"].sum() / arm_n.sum())
    row: dict = {"blocks": len(ref_n), "seeds": seeds, "reference_iteration_s": ref_mean,
                 "arm_iteration_s": arm_mean, "change": arm_mean / ref_mean - 1}
    for part in ITERATION_CAUSES:
        iv = block_part_change(b[f"reference_{part}"], b[f"arm_{part}"], b["reference_total"],
                               ref_n, arm_n, seeds)
        row.update({f"{part}_change": iv.change, f"{part}_low": iv.low, f"{part}_high": iv.high})
    share = block_part_share(b["reference_rto"], b["arm_rto"], b["reference_total"],
                             b["arm_total"], ref_n, arm_n, seeds)
    row.update(rto_share=share.change, rto_share_low=share.low, rto_share_high=share.high)
    for side, n in (("reference", ref_n), ("arm", arm_n)):
        for part, column in (("compute", "compute_s"), ("rto", "rto_wait_s"),
                             ("rest", "rest_wait_s")):
            row[f"{side}_{column}"] = b[f"{side}_{part}"].sum() / n.sum()
    for side, runs in (("reference", reference), ("arm", arm)):
        delays = [((r.summary or {}).get("training") or {}).get("tcp_delays") for r in runs]
        for key in JOB_TCP_DELAYS:
            row[f"{side}_training_tcp_{key}"] = (sum(d[key] for d in delays)
                                                 if delays and all(delays) else np.nan)
    return row


def cause_metrics(causes: pd.DataFrame, point_keys: list[str]) -> pd.DataFrame:
    """causes.parquet as deltas_mean rows a map draws: per point, arm and
    size class, fct_<class>_rto and fct_<class>_rest, each part's change over
    the reference's mean FCT (so that the two add up to deltas_mean's
    fct_<class>_mean change), its interval scaled alike, the pairs as
    samples, and the FCT's verdict of that interval (faster, slower, n.s.)."""
    rows = []
    for r in causes.to_dict("records"):
        ref = r["reference_fct_s"]
        scale = 1 / ref if ref > 0 else float("nan")
        for part in CAUSE_PARTS:
            metric = f"fct_{r['size_class']}_{part}"
            iv = Interval(r[f"{part}_change_s"] * scale, r[f"{part}_low_s"] * scale,
                          r[f"{part}_high_s"] * scale, int(r["pairs"]), int(r["seeds"]))
            verdict, decided = judge(f"fct_{r['size_class']}_mean", iv)
            rows.append({**{k: r[k] for k in point_keys}, "arm": r["arm"], "metric": metric,
                         "change": iv.change, "change_low": iv.low, "change_high": iv.high,
                         "samples": iv.samples, "seeds": iv.seeds, "verdict": verdict,
                         "decided": decided})
    return pd.DataFrame(rows)


def iteration_cause_metrics(training: pd.DataFrame, point_keys: list[str]) -> pd.DataFrame:
    """training_causes.parquet as deltas_mean rows a map draws: per point
    and arm, iteration_time_<part> (ITERATION_CAUSES: compute, rto, rest),
    each part's change over the reference's mean iteration time (the three
    add up to deltas_mean's iteration_time change), its interval, the
    blocks as samples, and the verdict of that interval (slower: the part
    grew)."""
    rows = []
    for r in training.to_dict("records"):
        for part in ITERATION_CAUSES:
            metric = f"iteration_time_{part}"
            iv = Interval(r[f"{part}_change"], r[f"{part}_low"], r[f"{part}_high"],
                          int(r["blocks"]), int(r["seeds"]))
            verdict, decided = judge(metric, iv)
            rows.append({**{k: r[k] for k in point_keys}, "arm": r["arm"], "metric": metric,
                         "change": iv.change, "change_low": iv.low, "change_high": iv.high,
                         "samples": iv.samples, "seeds": iv.seeds, "verdict": verdict,
                         "decided": decided})
    return pd.DataFrame(rows)


def cause_lines(table: pd.DataFrame, reference: str) -> list[str]:
    """One point's causes.parquet rows (one arm) in a network engineer's
    words, a line per size class with pairs."""
    out = []
    for r in table.to_dict("records"):
        if not r["pairs"]:
            continue
        what = "every flow" if r["size_class"] == "all" else f"{r['size_class']} flows"
        rel = (f" ({100 * r['fct_change_s'] / r['reference_fct_s']:+.1f} % of "
               f"{r['reference_fct_s'] * 1e3:,.3g} ms)" if r["reference_fct_s"] > 0 else "")
        line = (f"{what}, {r['pairs']:,} pairs: mean FCT {_ms(r, 'fct', rel)} against "
                f"{reference}, of which RTO back-off {_ms(r, 'rto')} and queueing and the "
                f"rest {_ms(r, 'rest')}")
        if share := share_words(r):
            line += f"; RTO back-off is {share} of the change"
        if not (r["reference_timeouts"] or r["arm_timeouts"]):
            line += ". No retransmission timeout in either arm"
        else:
            line += (f". Timeouts {r['reference_timeouts']:,} -> {r['arm_timeouts']:,} "
                     f"(spurious {r['reference_spurious_timeouts']:,} -> "
                     f"{r['arm_spurious_timeouts']:,}; flows with one "
                     f"{r['reference_flows_with_timeouts']:,} -> "
                     f"{r['arm_flows_with_timeouts']:,})")
        out.append(line + f"; fast retransmits {r['reference_fast_retransmits']:,} -> "
                   f"{r['arm_fast_retransmits']:,}")
    return out


def share_words(row: dict) -> str | None:
    """The back-off's share of a change with its interval ("55 % [38, 72]"),
    None where the attribution gives it no interval (the change undecided)."""
    if not np.isfinite(row["rto_share_low"]):
        return None
    return (f"{100 * row['rto_share']:.0f} % [{100 * row['rto_share_low']:.0f}, "
            f"{100 * row['rto_share_high']:.0f}]")


def _ms(row: dict, part: str, after: str = "") -> str:
    """'+1.23 ms [+0.80, +1.66]' (`after` between the estimate and its
    interval), or the estimate and "too few pairs" without an interval."""
    change = row[f"{part}_change_s"] * 1e3
    low, high = row[f"{part}_low_s"] * 1e3, row[f"{part}_high_s"] * 1e3
    if not np.isfinite(change):
        return "n/a"
    interval = f" [{low:+,.3g}, {high:+,.3g}]" if np.isfinite(low) else ", too few pairs"
    return f"{change:+,.3g} ms{after}{interval}"


def _percent(row: dict, part: str) -> str:
    """'+12.3 % [+8.1, +16.5]' of a training_causes part, or without an
    interval "too few blocks"."""
    change = row[f"{part}_change"]
    if not np.isfinite(change):
        return "n/a"
    low, high = row[f"{part}_low"], row[f"{part}_high"]
    interval = (f" [{100 * low:+.1f}, {100 * high:+.1f}]" if np.isfinite(low)
                else ", too few blocks")
    return f"{100 * change:+.1f} %{interval}"


def iteration_cause_line(row: dict) -> str:
    """One point's training_causes row (one arm) in words: the parts of the
    iteration time's change, the back-off's share, and each part per
    iteration in both arms."""
    line = (f"of which computing {_percent(row, 'compute')}, waiting on the network in TCP "
            f"back-off {_percent(row, 'rto')}, the rest of the wait {_percent(row, 'rest')}")
    if share := share_words(row):
        line += f"; back-off is {share} of the change"

    def ms(side: str, column: str) -> str:
        return f"{row[f'{side}_{column}'] * 1e3:,.3g}"
    parts = ", ".join(f"{words} {ms('reference', c)} -> {ms('arm', c)} ms"
                      for words, c in (("computing", "compute_s"), ("in back-off", "rto_wait_s"),
                                       ("the rest", "rest_wait_s"))
                      if np.isfinite(row[f"reference_{c}"]))
    return (f"{line}. Per iteration ({row['reference_iteration_s'] * 1e3:,.3g} -> "
            f"{row['arm_iteration_s'] * 1e3:,.3g} ms): {parts}")
