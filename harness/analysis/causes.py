"""What delayed a run's background flows besides queueing, in words: per
size class, from the flows table's TCP delays (harness.analysis.metrics.
TCP_DELAYS, counted in ns-3 by each flow's sender): how many flows timed
out, how many of their timeouts were spurious, and what share of the
class's completion time passed without progress before timeouts; and per
[[service]] of requests (queries, RPCs), its client connections' timeouts
while each request waited; per egress band, how long other bands were
sent while it held packets (starvation: the queues table's starved_s);
and per training job, what its iterations were made of (computing,
waiting on the network, in TCP back-off: the iterations table's parts)
and its slowest transfer. Pure functions over a Run's tables; `harness
explain RUN` prints them.
"""

from __future__ import annotations

import pandas as pd

from harness.analysis.metrics import DROP_REASONS, PLACES, SIZE_CLASSES, TCP_DELAYS


def flow_delays(flows: pd.DataFrame) -> pd.DataFrame:
    """One row per size class and "all" over the measured flows: flows,
    completed, flows_with_timeouts, timeouts, spurious_timeouts,
    timeout_wait_s, fast_retransmits, fct_s (the completed flows' summed
    FCT) and wait_share (their summed wait over it: the share of their
    completion time spent without progress before timeouts)."""
    measured = flows[flows["measured"]]
    rows = []
    for cls in (*SIZE_CLASSES, "all"):
        part = measured if cls == "all" else measured[measured["size_class"] == cls]
        done = part[part["completed"]]
        fct = float(done["fct_s"].sum())
        rows.append({
            "size_class": cls, "flows": len(part), "completed": len(done),
            "flows_with_timeouts": int((part["timeouts"] > 0).sum()),
            **{c: (float(part[c].sum()) if c.endswith("_s") else int(part[c].sum()))
               for c in TCP_DELAYS},
            "fct_s": fct,
            "wait_share": float(done["timeout_wait_s"].sum()) / fct if fct > 0 else float("nan"),
        })
    return pd.DataFrame(rows)


def lines(table: pd.DataFrame) -> list[str]:
    """flow_delays in a network engineer's words, a line per size class
    that has measured flows."""
    out = []
    for r in table.to_dict("records"):
        if not r["flows"]:
            continue
        what = f"{r['size_class']} flows" if r["size_class"] != "all" else "all flows"
        if not r["timeouts"]:
            out.append(f"{what} ({r['flows']:,}): no retransmission timeout; "
                       f"{r['fast_retransmits']:,} fast retransmits")
            continue
        spurious = r["spurious_timeouts"] / r["timeouts"]
        share = ("" if r["wait_share"] != r["wait_share"] else
                 f"; {100 * r['wait_share']:.1f} % of their completion time passed without "
                 "progress before a timeout")
        out.append(f"{what} ({r['flows']:,}): {r['flows_with_timeouts']:,} timed out, "
                   f"{r['timeouts']:,} timeouts ({100 * spurious:.0f} % spurious: the segment "
                   f"had arrived), {r['timeout_wait_s'] * 1e3:,.1f} ms without progress before "
                   f"them{share}; {r['fast_retransmits']:,} fast retransmits")
    return out


#: a request's client-side TCP delays (the services table's columns)
CLIENT_DELAYS = ("client_timeouts", "client_timeout_wait_ns")


def service_delays(services: pd.DataFrame) -> pd.DataFrame:
    """One row per service of requests, over its measured requests:
    requests, requests_with_timeouts, timeouts, timeout_wait_s (its client
    connections' time without progress before them, each request's at
    most its own time), latency_s (the answered requests' summed latency)
    and wait_share (the answered requests' wait over it)."""
    measured = services[services["measured"]]
    rows = []
    for name, part in measured.groupby("service_name", sort=False):
        answered = part[part["answered"]]
        latency = float(answered["latency_s"].sum())
        rows.append({
            "service": name, "kind": part["kind"].iloc[0], "requests": len(part),
            "requests_with_timeouts": int((part["client_timeouts"] > 0).sum()),
            "timeouts": int(part["client_timeouts"].sum()),
            "timeout_wait_s": float(part["client_timeout_wait_ns"].sum()) / 1e9,
            "latency_s": latency,
            "wait_share": (float(answered["client_timeout_wait_ns"].sum()) / 1e9 / latency
                           if latency > 0 else float("nan"))})
    return pd.DataFrame(rows)


def service_lines(table: pd.DataFrame) -> list[str]:
    """service_delays in words, a line per service."""
    out = []
    for r in table.to_dict("records"):
        head = f"{r['service']} ({r['kind']}, {r['requests']:,} requests)"
        if not r["timeouts"]:
            out.append(f"{head}: no retransmission timeout on its client connections")
            continue
        share = ("" if r["wait_share"] != r["wait_share"] else
                 f"; {100 * r['wait_share']:.1f} % of their latency passed without progress "
                 "before a timeout")
        out.append(f"{head}: {r['requests_with_timeouts']:,} waited on {r['timeouts']:,} "
                   f"client-side timeouts (a SYN or the request resent), "
                   f"{r['timeout_wait_s'] * 1e3:,.1f} ms without progress before them{share}")
    return out


def band_starvation(queues: pd.DataFrame) -> pd.DataFrame:
    """Per band over every egress that queued a packet of it: its class,
    egresses, starved_s (summed: metrics.with_starvation) and the most
    starved egress (link, from_node, to_node, its starved_s and
    backlogged_s). Empty for a queues table without starvation (run before
    it was measured)."""
    if "starved_s" not in queues:
        return pd.DataFrame()
    used = queues[queues["enqueued_packets"] > 0]
    rows = []
    for band, part in used.groupby("band"):
        worst = part.loc[part["starved_s"].idxmax()]
        rows.append({"band": int(band), "traffic_class": worst.get("traffic_class", ""),
                     "egresses": len(part), "starved_s": float(part["starved_s"].sum()),
                     "link": int(worst["link"]), "from_node": int(worst["from_node"]),
                     "to_node": int(worst["to_node"]), "most_starved_s": float(worst["starved_s"]),
                     "most_backlogged_s": float(worst["backlogged_s"])})
    return pd.DataFrame(rows)


def starvation_lines(table: pd.DataFrame, run_s: float) -> list[str]:
    """band_starvation in words, a line per band that was starved."""
    out = []
    for r in table.to_dict("records"):
        if not r["starved_s"] > 0:
            continue
        share = f" ({100 * r['most_starved_s'] / run_s:.1f} % of the run)" if run_s > 0 else ""
        out.append(f"band {r['band']} ({r['traffic_class']}): starved {r['starved_s'] * 1e3:,.1f} ms "
                   f"over {r['egresses']:,} egresses (other bands sent while it held packets); "
                   f"most at link {r['link']} (node {r['from_node']} -> {r['to_node']}): "
                   f"{r['most_starved_s'] * 1e3:,.1f} ms{share} of its "
                   f"{r['most_backlogged_s'] * 1e3:,.1f} ms with packets queued")
    return out


def iteration_line(training: dict) -> str | None:
    """A job's summary (summary.json's training) as what its measured
    iterations were made of, in words; None where the parts were not
    measured (run before, or a job without a compute table)."""
    mean = training.get("mean_iteration_s")
    compute, wait = training.get("mean_compute_s"), training.get("mean_network_wait_s")
    if training and not training.get("iterations"):
        return ("training: no iteration completed inside the window (stalled, or the run "
                "is too short)")
    if not mean or compute is None or wait is None:
        return None
    line = (f"training: {training.get('distinct_iterations', training.get('iterations')):,} "
            f"iterations measured, mean {mean * 1e3:,.3g} ms: computing {compute * 1e3:,.3g} ms "
            f"({100 * compute / mean:.0f} %), waiting on the network {wait * 1e3:,.3g} ms "
            f"({100 * wait / mean:.0f} %)")
    rto = training.get("mean_rto_wait_s")
    if rto is not None:
        line += (f", of it {rto * 1e3:,.3g} ms ({100 * rto / mean:.1f} % of the iteration) "
                 "while one of its TCP connections was in a retransmission back-off")
    return line


#: what names a transfer, the columns a job's transfers table may have
TRANSFER_NAMES = ("buffer", "step", "partition", "shard", "direction")


def slowest_transfer(transfers: pd.DataFrame | None, window_s: tuple[float, float]
                     ) -> dict | None:
    """The transfer with the lowest goodput (bytes over its duration) of
    those inside the window that crossed the network: which worker,
    iteration and step or shard it was, its time, and how many times slower
    it went than the median of the window's transfers. None without
    transfers."""
    if transfers is None or not len(transfers):
        return None
    t = transfers
    if "local" in t:
        t = t[t["local"] == 0]
    t = t[(t["start_ns"] >= window_s[0] * 1e9) & (t["end_ns"] <= window_s[1] * 1e9)
          & (t["end_ns"] > t["start_ns"]) & (t["bytes"] > 0)]
    if not len(t):
        return None
    rate = t["bytes"] / ((t["end_ns"] - t["start_ns"]) / 1e9)
    worst = t.loc[rate.idxmin()]
    return {"worker": int(worst["worker"]), "iteration": int(worst["iteration"]),
            **{c: worst[c] for c in TRANSFER_NAMES if c in t},
            "bytes": int(worst["bytes"]), "time_s": (worst["end_ns"] - worst["start_ns"]) / 1e9,
            "slower": float(rate.median() / rate.min()), "transfers": len(t)}


def transfer_line(slowest: dict) -> str:
    """slowest_transfer in words."""
    named = ", ".join(f"{c} {slowest[c]}" for c in TRANSFER_NAMES if c in slowest)
    return (f"its slowest transfer of {slowest['transfers']:,}: worker {slowest['worker']}, "
            f"iteration {slowest['iteration']}{', ' + named if named else ''}, "
            f"{slowest['bytes']:,} bytes in {slowest['time_s'] * 1e3:,.3g} ms "
            f"({slowest['slower']:,.1f} x slower than the median transfer's goodput)")


#: a drop reason (metrics.DROP_REASONS) in words
REASON_WORDS = {"buffer": "shared-buffer refusals", "headroom": "PFC headroom full",
                "limit": "at the band's own limit"}


def reasons_words(counts: dict[str, float]) -> str:
    """'120 shared-buffer refusals, 4 at the band's own limit' of the drop
    reasons that have drops (counts by DROP_REASONS)."""
    return ", ".join(f"{int(counts[r]):,} {REASON_WORDS[r]}" for r in DROP_REASONS
                     if counts.get(r))


def loss_lines(table: pd.DataFrame) -> list[str]:
    """metrics.losses in words, a line per place and band that dropped."""
    out = []
    for r in table.to_dict("records"):
        if not r["dropped_packets"]:
            continue
        why = reasons_words({k: r[f"{k}_dropped_packets"] for k in DROP_REASONS})
        out.append(f"band {r['band']} ({r['traffic_class']}) lost {r['dropped_packets']:,} "
                   f"packets at {r['egresses']:,} {PLACES[r['place']]} ({why}); most at link "
                   f"{r['link']} (node {r['from_node']} -> {r['to_node']}): "
                   f"{r['most_dropped_packets']:,}")
    return out
