"""The services' raw C++ records (the ServiceLog, and what each kind reads
of its applications: a stream receiver's packets, a sink's bytes) as the run's tables (services.parquet: a row per request;
streams.parquet: a row per stream or Poisson packet) and summary.json's
`services`, each service's entry made by its kind."""

from __future__ import annotations

import pandas as pd

from harness.analysis import services as metrics
from harness.config import registry
from harness.traffic.services.kind import ServiceRecords


def collect(p, raw_requests: pd.DataFrame | None, own: dict[int, ServiceRecords],
            window) -> tuple:
    """(services table, streams table, {name: summary}); raw_requests: the
    ServiceLog's rows, own: each service's records as its kind read them
    from its applications (ServiceKind.read_records), by its place."""
    names = {s.index: (s.name, s.kind) for s in p.services}
    kinds = [registry.service_kinds()[s.kind] for s in p.services]
    requests = queries = None
    if raw_requests is not None and any(k.uses_service_log for k in kinds):
        requests = metrics.request_table(raw_requests, window, names)
        queries = metrics.query_table(requests)
    summary, streams = {}, []
    for s, kind in zip(p.services, kinds):
        mine = own.get(s.index) or ServiceRecords()
        records = ServiceRecords(
            requests=requests, queries=queries, flows=mine.flows,
            packets=[(metrics.stream_table(raw, s.name, window), sent)
                     for raw, sent in mine.packets])
        summary[s.name] = kind.summarize(s, records, window)
        streams += [table for table, _ in records.packets]
    return requests, pd.concat(streams, ignore_index=True) if streams else None, summary
