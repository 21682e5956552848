"""What the lossless fabric did in one run (network.pfc, training.transport =
"rdma"): the `pfc` table (one row per link end and band: pause frames sent
and received, time paused, headroom used), the `rdma` table (one row per
queue pair end: CNPs, rate cuts, go-backs, bytes), and their summary:
pause time per class, how far pauses spread from where congestion began,
CNPs and rate cuts, and the losses of lossless and lossy classes (a
lossless class must lose nothing).

Pure functions over the raw rows harness.engine.simulation reads from ns-3.
"""

from __future__ import annotations

import collections

import numpy as np
import pandas as pd

PFC_COLUMNS = ["link", "side", "from_node", "to_node", "band", "traffic_class", "lossless",
               "pause_frames_sent", "pause_frames_received", "paused_s", "pausing_s",
               "max_headroom_bytes", "max_ingress_bytes"]
RDMA_COLUMNS = ["host", "peer_host", "accepted", "bytes_sent", "bytes_acknowledged",
                "bytes_received", "cnps_sent", "cnps_received", "rate_cuts",
                "retransmitted_packets", "go_backs"]


def pfc_table(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=PFC_COLUMNS)


def rdma_table(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=RDMA_COLUMNS)


def pause_spread_hops(pfc: pd.DataFrame, n_hosts: int) -> int:
    """How far pauses spread: the longest chain of paused egresses, each
    paused by a port whose own node's egress was paused in turn (1: only the
    congested switch's neighbours were paused; 0: no pause). Nodes are
    numbered hosts first, so a chain ends at a host's NIC or a switch whose
    egresses were never paused."""
    paused = pfc[pfc["paused_s"] > 0]
    if paused.empty:
        return 0
    # a paused egress from_node -> to_node: to_node's ingress from from_node paused it;
    # to_node itself was paused further down if one of its egresses was
    downstream = collections.defaultdict(set)
    for row in paused.itertuples():
        downstream[row.from_node].add(row.to_node)
    memo: dict[int, int] = {}

    def depth(node: int, seen: frozenset) -> int:
        # hops of pause upstream of `node`'s paused egresses
        if node in memo:
            return memo[node]
        best = 0
        for nxt in downstream.get(node, ()):
            if nxt in seen:
                continue
            best = max(best, 1 + depth(nxt, seen | {nxt}))
        memo[node] = best
        return best

    return max(depth(node, frozenset({node})) for node in list(downstream))


def summary(pfc: pd.DataFrame | None, rdma: pd.DataFrame | None, queues: pd.DataFrame,
            lossless_bands: list[bool], n_hosts: int, window_s: float) -> dict:
    """summary.json's `lossless` entry."""
    out: dict = {}
    lossless = [b for b, on in enumerate(lossless_bands) if on]
    if pfc is not None:
        by_class = pfc.groupby("traffic_class")
        out["pause_s"] = {str(c): float(g["paused_s"].sum()) for c, g in by_class
                          if g["lossless"].any()}
        out["pause_frames"] = int(pfc["pause_frames_sent"].sum())
        out["paused_egresses"] = int((pfc["paused_s"] > 0).sum())
        out["max_pause_share"] = (float(pfc["paused_s"].max() / window_s)
                                  if window_s > 0 and len(pfc) else 0.0)
        out["pause_spread_hops"] = pause_spread_hops(pfc, n_hosts)
        out["max_headroom_bytes"] = int(pfc["max_headroom_bytes"].max()) if len(pfc) else 0
    drops = queues.groupby("band")["dropped_packets"].sum()
    out["lossless_drops"] = int(sum(int(drops.get(b, 0)) for b in lossless))
    out["lossy_drops"] = int(sum(int(n) for b, n in drops.items() if b not in lossless))
    if rdma is not None and len(rdma):
        out["cnps"] = int(rdma["cnps_sent"].sum())
        out["rate_cuts"] = int(rdma["rate_cuts"].sum())
        out["rdma_retransmitted_packets"] = int(rdma["retransmitted_packets"].sum())
        out["rdma_go_backs"] = int(rdma["go_backs"].sum())
    return out


def console_line(s: dict) -> str:
    """The run's one line on the lossless fabric (harness run)."""
    parts = []
    if "pause_s" in s:
        pause = ", ".join(f"{c} {t * 1e3:,.3f} ms" for c, t in s["pause_s"].items()) or "0"
        parts.append(f"pause time {pause} over {s['paused_egresses']} egresses "
                     f"({s['pause_frames']:,} pause frames, spread {s['pause_spread_hops']} "
                     f"hop{'s' if s['pause_spread_hops'] != 1 else ''})")
    if "cnps" in s:
        parts.append(f"{s['cnps']:,} CNPs, {s['rate_cuts']:,} rate cuts, "
                     f"{s['rdma_retransmitted_packets']:,} RDMA packets resent")
    parts.append(f"lossless drops {s['lossless_drops']:,}, lossy drops {s['lossy_drops']:,}")
    return "lossless fabric: " + "; ".join(parts)


#: The change of the fabric's pause time (harness.analysis.run_changes): per
#: egress, its share of the window paused, as a difference in points.
PAUSE_SHARE = "pause_share"

#: summary.json's `lossless` keys that are one number each, as summary.parquet columns.
FLAT_KEYS = ("pause_frames", "paused_egresses", "max_pause_share", "pause_spread_hops",
             "max_headroom_bytes", "lossless_drops", "lossy_drops", "cnps", "rate_cuts",
             "rdma_retransmitted_packets", "rdma_go_backs")


def flat_columns(s: dict | None) -> dict:
    """A run's `lossless` entry as a sweep's summary columns: pause_s_<class>
    (the class's pause time over the window, summed over its egresses) and
    FLAT_KEYS; none for a run without the fabric."""
    if not s:
        return {}
    out = {f"pause_s_{c}": t for c, t in s.get("pause_s", {}).items()}
    out.update({k: s[k] for k in FLAT_KEYS if k in s})
    return out


def egress_pause_shares(pfc: pd.DataFrame | None, summary: dict) -> pd.Series | None:
    """Each egress's (link, side) share of its run's window (summary.json's
    `window_s`: a job's end can close it) paused, its lossless bands' pause
    time summed; None without PFC."""
    window = summary.get("window_s") or (0.0, 0.0)
    span = window[1] - window[0]
    if pfc is None or span <= 0:
        return None
    lossless = pfc[pfc["lossless"]]
    return lossless.groupby(["link", "side"])["paused_s"].sum() / span


def mean_pause_share(pfc: pd.DataFrame | None, summary: dict) -> float | None:
    """The egresses' mean share of the window paused (every egress with a
    lossless band, its lossless bands summed): a sweep's `mean_pause_share`
    column, whose per-seed change is the pooled pause-share change's; None
    without PFC."""
    shares = egress_pause_shares(pfc, summary)
    return None if shares is None or not len(shares) else float(shares.mean())


def pause_share_pairs(reference: list, arm: list) -> np.ndarray:
    """The paired samples of the pause-share change (harness.analysis.run_changes):
    per seed and egress, the arm's share of its window paused less the
    reference's of its own (the same port of the same network in both),
    pooled over seeds; empty where either arm has no PFC."""
    out = []
    for ref, a in zip(reference, arm):
        r = egress_pause_shares(ref.pfc, ref.summary)
        x = egress_pause_shares(a.pfc, a.summary)
        if r is None or x is None:
            continue
        common = r.index.intersection(x.index)
        out.append(x.loc[common].to_numpy() - r.loc[common].to_numpy())
    return np.concatenate(out) if out else np.array([])
