"""The services' raw C++ records (ServiceLog, stream receivers, bulk flows'
sinks) as the run's tables (services.parquet: a row per request;
streams.parquet: a row per stream or Poisson packet) and summary.json's
`services` (harness.analysis.services)."""

from __future__ import annotations

import pandas as pd

from harness.analysis import services as metrics


def collect(p, raw_requests: pd.DataFrame | None, raw_streams: list, window,
            raw_bulk: list = ()) -> tuple:
    """(services table, streams table, {name: summary}); raw_streams: a
    (packets, sent count) pair per stream or Poisson source, in the plan's
    order; raw_bulk: (bytes at the window's start, at its end) per bulk flow."""
    names = {s.index: (s.name, s.kind) for s in p.services}
    summary: dict = {}
    requests = None
    if raw_requests is not None and any(s.kind in ("query", "rpc") for s in p.services):
        requests = metrics.request_table(raw_requests, window, names)
        queries = metrics.query_table(requests)
    streams = []
    stream_plans = [s for s in p.services if s.kind in ("stream", "poisson")]
    bulk = iter(raw_bulk)
    for s in p.services:
        if s.kind == "bulk":
            summary[s.name] = {"kind": "bulk", **metrics.bulk_summary(
                [next(bulk) for _ in range(s.flows * len(s.clients))], window)}
    for s in p.services:
        common = {"kind": s.kind, "no_contention_s": s.ideal_s}
        if s.kind == "query":
            summary[s.name] = {**common, **metrics.query_summary(
                queries[queries["service"] == s.index], s.target_s)}
        elif s.kind == "rpc":
            summary[s.name] = {**common, **metrics.rpc_summary(
                requests[requests["service"] == s.index], s.target_s, window, len(s.clients))}
    for s, (raw, sent) in zip(stream_plans, raw_streams):
        packets = metrics.stream_table(raw, s.name, window)
        streams.append(packets)
        interval = s.packet_bytes * 8 / s.rate_bps if s.kind == "stream" else None
        summary[s.name] = {"kind": s.kind, "no_contention_s": s.ideal_s,
                           **metrics.stream_summary(packets, sent, interval, window, s.target_s)}
    return (requests, pd.concat(streams, ignore_index=True) if streams else None,
            {s.name: summary[s.name] for s in p.services})
