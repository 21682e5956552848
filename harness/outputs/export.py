"""`harness export DIR --format csv|parquet -o OUT`: a run's or a sweep's
tables copied into a new directory OUT, as CSV or Parquet, with a data
dictionary (data-dictionary.csv: every column of every table written, its
unit and meaning). Tables only, no ns-3; OUT is made whole under a
temporary name and renamed (harness.io.outdir.write_dir).

A run's tables: summary (summary.json as one flat row, the columns a
sweep's summary has), flows, iterations, transfers, compute, queues,
utilization, scheduler, services, streams (those the run has). A sweep's:
summary, deltas, deltas_mean and, where the sweep has them, causes and scale_check,
and the services' tables of every cell ([[service]]), one table each
(services, streams) with the cell's id in its first column.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from harness.analysis import metrics, services
from harness.config.errors import ConfigError

FORMATS = ("csv", "parquet")
DICTIONARY = "data-dictionary.csv"
RUN_EXPORTED = ("flows", "iterations", "transfers", "compute", "queues", "utilization",
                "scheduler", "services", "streams", "queue_samples", "pfc", "rdma")
SWEEP_EXPORTED = ("summary", "deltas", "deltas_mean", "causes", "training_causes",
                  "service_causes", "scale_check")
#: a sweep's per-cell tables, exported as one table each with the cell's id
CELL_EXPORTED = ("services", "streams", "pfc", "rdma")

# --------------------------------------------------------------------------
# the data dictionary: (unit, meaning) of each column, by table and name;
# then by pattern (the per-class and per-job columns), then the axes

_CHANGE = ("fraction", "relative change of the arm against the reference arm, value / "
           "reference - 1 (0.1 = +10 %; inf: the arm stalled); a service's fraction "
           "(deadline miss, SLO attainment): value - reference (0.05 = 5 points)")
_COMMON = {
    "job": ("", "the training job's name ([[training]] name; one job: its only one)"),
    "worker": ("", "the worker's index in its job"),
    "iteration": ("", "the iteration's number (from 0)"),
    "start_ns": ("ns", "simulated start time"),
    "end_ns": ("ns", "simulated end time"),
    "link": ("", "the link's index in the topology"),
    "from_node": ("", "the node the link direction leaves"),
    "to_node": ("", "the node the link direction enters"),
    "traffic_class": ("", "the traffic class (the scenario's [classes]) its ToS maps to"),
    "tos": ("", "the IP ToS byte its packets carry"),
    "band": ("", "the queue disc's band"),
    "bytes": ("bytes", "bytes sent"),
}
_TABLES: dict[str, dict[str, tuple[str, str]]] = {
    "flows": {
        "id": ("", "the background flow's id (the same flow in every run of the same "
                   "background settings and seed)"),
        "src": ("", "sending host (node index)"), "dst": ("", "receiving host (node index)"),
        "size": ("bytes", "the flow's size as simulated"),
        "size_class": ("", "small (<= 100 KB), medium (<= 10 MB) or large, of the size as "
                           "written (simulated size x scale)"),
        "start_s": ("s", "simulated start time"),
        "fct_s": ("s", "flow completion time: last byte received - start (empty if not "
                       "completed)"),
        "completed": ("", "whether every byte arrived before the run ended"),
        "measured": ("", "whether it started inside the measurement window"),
        "received_bytes": ("bytes", "bytes the receiver got"),
        "timeouts": ("", "the sender's retransmission timeouts (a SYN, data or a FIN resent)"),
        "spurious_timeouts": ("", "those of its timeouts whose resent segment had already "
                                  "reached the receiving application (late, not lost)"),
        "timeout_wait_s": ("s", "time the sender made no progress before each of its "
                                "timeouts: from the head of its data last acknowledged, the "
                                "connection opening, new data into an idle connection or its "
                                "previous timeout"),
        "fast_retransmits": ("", "the sender's entries into loss recovery (a fast "
                                 "retransmit on duplicate ACKs or SACKs)"),
        "ideal_fct_s": ("s", "size / bottleneck rate + twice the path's propagation delay"),
        "slowdown": ("ratio", "fct_s / ideal_fct_s"),
        "error": ("", "the socket error that ended it, if any (empty: none)"),
    },
    "iterations": {
        "iteration_s": ("s", "the iteration's time: start of forward layer 0 to the next"),
        "measured": ("", "whether it lies inside the measurement window"),
        "end_spread_s": ("s", "spread of the iteration's end times over the job's workers "
                              "(empty if a worker did not complete it)"),
        "compute_factor": ("ratio", "the worker's compute time factor this iteration "
                                    "(stragglers)"),
        "compute_s": ("s", "the worker's layer computations in the iteration (forward and "
                           "backward), summed"),
        "network_wait_s": ("s", "the rest of the iteration: the worker waited on the network "
                                "(gradients or parameters)"),
        "rto_wait_s": ("s", "of that wait, the time one of the job's TCP connections was in "
                            "a retransmission back-off (empty over RDMA)"),
    },
    "transfers": {
        "buffer": ("", "the fused buffer (or shard) sent"),
        "layers": ("", "the layers the buffer holds"),
        "step": ("", "the collective's step (ring: reduce-scatter then all-gather)"),
        "partition": ("", "the buffer's partition sent in this step"),
        # parameter servers (and the sharded job)
        "shard": ("", "the parameter-server shard the chunk goes to or comes from"),
        "direction": ("", "push (worker to shard) or pull (shard to worker)"),
        "offset": ("bytes", "where the chunk starts in its tensor"),
        "local": ("", "1 where worker and shard share a host: a local copy, no network"),
    },
    "scheduler": {
        "state": ("", "the scheduling policy's adaptive state from this iteration on "
                      "(AutoByte's choice)"),
    },
    "compute": {
        "layer": ("", "the layer computed"),
        "phase": ("", "fp (forward) or bp (backward)"),
    },
    "queues": {
        "enqueued_packets": ("packets", "packets enqueued"),
        "enqueued_bytes": ("bytes", "bytes enqueued"),
        "dequeued_packets": ("packets", "packets dequeued (sent)"),
        "dequeued_bytes": ("bytes", "bytes dequeued (sent)"),
        "dropped_packets": ("packets", "packets dropped"),
        "dropped_bytes": ("bytes", "bytes dropped"),
        "max_backlog_packets": ("packets", "largest backlog"),
        "marked_packets": ("packets", "packets ECN-marked (CE)"),
        "mean_backlog_packets": ("packets", "mean backlog an arriving packet found"),
        "buffer_dropped_packets": ("packets", "drops the buffer model decided"),
        "headroom_dropped_packets": ("packets", "drops of a lossless band's arrivals its "
                                                "ingress port's PFC headroom could not hold"),
        "place": ("", "where the egress is: uplink (a host's), downlink (a switch's port to "
                      "a host) or fabric (a switch's port to a switch)"),
        "backlogged_s": ("s", "how long the band held a packet, over the run"),
        "starved_s": ("s", "of that time, how long the egress sent other bands' packets: "
                           "the band's backlogged time less its own bytes at the link's rate"),
    },
    "queue_samples": {
        "time_s": ("s", "when the band's backlog was read (run.queue_samples)"),
        "backlog_packets": ("packets", "packets the band held then"),
        "backlog_bytes": ("bytes", "bytes the band held then"),
    },
    "utilization": {
        "t_s": ("s", "start of the interval (run.utilization_interval)"),
        "app": ("", "the application: training, background or other"),
        "bytes": ("bytes", "bytes on the wire in the interval"),
        "utilization": ("fraction", "bytes x 8 / (link rate x interval)"),
    },
    "summary": {
        "cell": ("", "the cell's id: the digest of its resolved scenario"),
        "arm": ("", "the grid's arm"),
        "status": ("", "ok, stalled (ran; its training completed no iteration in the window), "
                       "failed or unfinished"),
        "error": ("", "why the cell failed"),
        "reason": ("", "why the cell is not ok"),
        "measured_flows": ("flows", "background flows started in the measurement window"),
        "completed_flows": ("flows", "measured flows that completed"),
        "completion_ratio": ("fraction", "completed_flows / measured_flows"),
        "socket_errors": ("flows", "background flows ended by a socket error"),
        "tcp_timeouts": ("", "retransmission timeouts of the measured background flows' "
                             "senders, summed"),
        "tcp_spurious_timeouts": ("", "those of them whose resent segment had already "
                                      "arrived"),
        "tcp_timeout_wait_s": ("s", "time the measured background flows made no progress "
                                    "before their timeouts, summed"),
        "tcp_fast_retransmits": ("", "the measured background flows' entries into loss "
                                     "recovery, summed"),
        "tcp_flows_with_timeouts": ("flows", "measured background flows with a timeout"),
        "training_tcp_timeouts": ("", "retransmission timeouts of the (first) training "
                                      "job's TCP connections over the run"),
        "training_tcp_timeout_wait_s": ("s", "time those connections made no progress before "
                                             "their timeouts, summed over them"),
        "training_tcp_fast_retransmits": ("", "those connections' entries into loss recovery"),
        "u_training": ("fraction", "mean host-uplink utilisation by training in the window"),
        "u_background": ("fraction", "mean host-uplink utilisation by the background in the "
                                     "window"),
        "iterations": ("iterations", "measured iterations (rows of every worker)"),
        "mean_iteration_s": ("s", "mean measured iteration time"),
        "p50_iteration_s": ("s", "median measured iteration time"),
        "p99_iteration_s": ("s", "99th percentile of the measured iteration times"),
        "p999_iteration_s": ("s", "99.9th percentile of the measured iteration times"),
        "mean_end_spread_s": ("s", "mean spread of an iteration's end times over the workers"),
        "p99_end_spread_s": ("s", "99th percentile of that spread"),
        "mean_compute_s": ("s", "mean time a worker computed in a measured iteration"),
        "mean_network_wait_s": ("s", "mean time a worker waited on the network in one"),
        "mean_rto_wait_s": ("s", "of that wait, the mean time in a TCP retransmission "
                                 "back-off of one of the job's connections"),
        "training_socket_errors": ("", "socket errors of the training connections"),
        "training_stalled": ("", "the job completed no iteration in the window"),
        "offered_load": ("fraction", "the background's offered load per host link"),
        "compute_ms": ("ms", "the training profile's compute time per iteration"),
        "events": ("events", "ns-3 events executed"),
        "wall_s": ("s", "the cell's wall time"),
        "startup_s": ("s", "process start to the network built"),
        "peak_rss_mib": ("MiB", "peak resident memory of the cell's process"),
        "events_per_s": ("events/s", "events executed per wall second"),
        "sim_s_per_wall_s": ("ratio", "simulated seconds per wall second"),
        "scenario": ("", "the scenario's name"), "seed": ("", "the run's seed"),
        "digest": ("", "the digest of the resolved scenario"),
        "simulated_s": ("s", "simulated time"),
        # the lossless fabric (harness.analysis.lossless)
        "pause_frames": ("frames", "PFC pause frames sent, every port, the whole run"),
        "paused_egresses": ("egresses", "egresses (link end and band) paused in the window"),
        "max_pause_share": ("fraction", "the most-paused egress's share of the window paused"),
        "pause_spread_hops": ("hops", "the longest chain of egresses paused in turn"),
        "max_headroom_bytes": ("bytes", "the most PFC headroom a port used"),
        "lossless_drops": ("packets", "packets the lossless classes dropped (must be 0)"),
        "lossy_drops": ("packets", "packets the other classes dropped"),
        "cnps": ("packets", "DCQCN congestion notifications sent"),
        "rate_cuts": ("cuts", "DCQCN rate cuts"),
        "rdma_retransmitted_packets": ("packets", "RDMA packets sent again (go-back-N)"),
        "rdma_go_backs": ("", "RDMA go-backs (a NAK or a timeout)"),
    },
    "pfc": {
        "side": ("", "the link's end (0: from its a to b)"),
        "lossless": ("", "whether the band is lossless (network.pfc.classes)"),
        "pause_frames_sent": ("frames", "pause frames this port sent upstream"),
        "pause_frames_received": ("frames", "pause frames this port's egress received"),
        "paused_s": ("s", "how long this egress band was paused, in the window"),
        "pausing_s": ("s", "how long this port held its upstream paused, in the window"),
        "max_headroom_bytes": ("bytes", "the most headroom the band used here"),
        "max_ingress_bytes": ("bytes", "the most bytes of the band in by this port and queued"),
    },
    "rdma": {
        "host": ("", "the queue pair's host"), "peer_host": ("", "its peer's host"),
        "accepted": ("", "whether it is the accepting (receiving) end"),
        "bytes_sent": ("bytes", "payload bytes sent"),
        "bytes_acknowledged": ("bytes", "payload bytes the peer acknowledged"),
        "bytes_received": ("bytes", "payload bytes received in order"),
        "cnps_sent": ("packets", "CNPs this end sent (as notification point)"),
        "cnps_received": ("packets", "CNPs this end received"),
        "rate_cuts": ("cuts", "DCQCN rate cuts"),
        "retransmitted_packets": ("packets", "packets sent again"),
        "go_backs": ("", "go-backs (a NAK or a timeout)"),
    },
    "deltas": {
        "arm": ("", "the compared arm"),
        "metric": ("", "what changed (iteration_time, iteration_time_p99, end_spread, "
                       "fct_<class>_<mean|p99|p999>; a service's: {services}, with the "
                       "service's name after the kind where a scenario has several of that "
                       "kind; with PFC, in deltas_mean only: pause_share, each egress's "
                       "share of the window paused, arm less reference)"),
        "reference": ("s", "the metric's value in the reference arm (a service's "
                           "fraction: a fraction)"),
        "value": ("s", "the metric's value in the arm (a service's fraction: a fraction)"),
        "change": _CHANGE,
    },
    "deltas_mean": {
        "arm": ("", "the compared arm"),
        "metric": ("", "what changed (as in deltas)"),
        "n": ("seeds", "seeds with a change"),
        "mean": ("fraction", "mean over seeds of the per-seed change"),
        "ci95_low": ("fraction", "Student t 95 % interval of that mean, low end"),
        "ci95_high": ("fraction", "its high end"),
        "change": ("fraction", "the change pooled over seeds, paired over the same flows, "
                               "iterations and requests (0.1 = +10 %; a service's fraction: "
                               "the difference, 0.05 = 5 points)"),
        "change_low": ("fraction", "its 95 % interval, low end (empty: too few samples)"),
        "change_high": ("fraction", "its 95 % interval, high end"),
        "samples": ("pairs", "the pairs (flows or iterations) the change rests on"),
        "seeds": ("seeds", "the seeds pooled"),
        "verdict": ("", "green / yellow / red (mean iteration time), faster / slower / n.s., "
                        "smaller / larger (end spread), lower / higher (a service's "
                        "statistic), too few samples or n/a"),
        "decided": ("", "whether the interval decides the verdict"),
        "seeds_to_decide": ("seeds", "a rough projection of the seeds an undecided training "
                                     "verdict needs"),
    },
    "causes": {
        "arm": ("", "the compared arm"),
        "reference": ("", "the arm it is compared with"),
        "size_class": ("", "the background flows attributed: small, medium, large or all"),
        "pairs": ("flows", "flows both arms of a seed measured and completed, over seeds"),
        "seeds": ("", "the seeds pooled"),
        "reference_fct_s": ("s", "the reference's mean FCT over those flows"),
        "fct_change_s": ("s", "mean FCT change over the pairs, arm - reference"),
        "fct_low_s": ("s", "its 95 % Student t interval's low end"),
        "fct_high_s": ("s", "its 95 % Student t interval's high end"),
        "rto_change_s": ("s", "of it, the change of the time without progress before "
                              "retransmission timeouts (RTO back-off), arm - reference"),
        "rto_low_s": ("s", "its 95 % interval's low end"),
        "rto_high_s": ("s", "its 95 % interval's high end"),
        "rest_change_s": ("s", "the rest of the change (queueing, serialisation and the "
                               "window's pace): the FCT less that wait, arm - reference"),
        "rest_low_s": ("s", "its 95 % interval's low end"),
        "rest_high_s": ("s", "its 95 % interval's high end"),
        "rto_share": ("fraction", "the RTO back-off's share of the FCT change (nan: no "
                                  "change; no interval where the change is undecided)"),
        "rto_share_low": ("fraction", "its 95 % interval's low end (delta method)"),
        "rto_share_high": ("fraction", "its 95 % interval's high end"),
        **{f"{side}_{count}": ("count", f"the {side}'s {words} over its measured flows")
           for side in ("reference", "arm")
           for count, words in (("timeouts", "retransmission timeouts"),
                                ("spurious_timeouts", "spurious timeouts (the segment had "
                                                      "reached the receiver)"),
                                ("fast_retransmits", "fast retransmits"),
                                ("flows_with_timeouts", "flows with a timeout"))},
    },
    "training_causes": {
        "arm": ("", "the compared arm"),
        "reference": ("", "the arm it is compared with"),
        "blocks": ("blocks", "the time blocks pairing the arms' iterations, over seeds (as "
                             "the iteration time's change pairs them)"),
        "seeds": ("", "the seeds pooled"),
        "reference_iteration_s": ("s", "the reference's mean iteration time"),
        "arm_iteration_s": ("s", "the arm's mean iteration time"),
        "change": ("fraction", "the iteration time's change, arm / reference - 1: the "
                               "parts' changes add up to it"),
        **{f"{part}{end}": ("fraction", f"{words}{tail}")
           for part, words in (("compute", "of it, the change of the time computing"),
                               ("rto", "of it, the change of the time waiting on the network "
                                       "while one of the job's TCP connections was in a "
                                       "retransmission back-off"),
                               ("rest", "of it, the change of the rest of the network wait "
                                        "(queueing, serialisation, the collective's steps)"))
           for end, tail in (("_change", ", over the reference's mean iteration time"),
                             ("_low", ": its 95 % interval's low end"),
                             ("_high", ": its 95 % interval's high end"))},
        "rto_share": ("fraction", "the back-off's share of the change (no interval where the "
                                  "change is undecided)"),
        "rto_share_low": ("fraction", "its 95 % interval's low end (delta method)"),
        "rto_share_high": ("fraction", "its 95 % interval's high end"),
        **{f"{side}_{column}": ("s", f"the {side}'s mean {words} per iteration")
           for side in ("reference", "arm")
           for column, words in (("compute_s", "compute time"),
                                 ("rto_wait_s", "network wait in TCP back-off"),
                                 ("rest_wait_s", "rest of the network wait"))},
        **{f"{side}_training_tcp_{key}": (unit, f"the {side}'s job connections' {words}, "
                                                "summed over seeds")
           for side in ("reference", "arm")
           for key, unit, words in (("timeouts", "count", "retransmission timeouts"),
                                    ("timeout_wait_s", "s", "time without progress before "
                                                            "them"),
                                    ("fast_retransmits", "count", "fast retransmits"))},
    },
    "service_causes": {
        "arm": ("", "the compared arm"),
        "reference": ("", "the arm it is compared with"),
        "service": ("", "the service's name"),
        "kind": ("", "its kind (query or rpc)"),
        "pairs": ("requests", "requests both arms of a seed measured and answered, over seeds"),
        "seeds": ("", "the seeds pooled"),
        "reference_latency_s": ("s", "the reference's mean request latency over those requests"),
        **{f"{part}{end}": ("s", f"{words}{tail}")
           for part, words in (("latency", "mean request latency change over the pairs, "
                                           "arm - reference"),
                               ("rto", "of it, the change of the client connection's time "
                                       "without progress before retransmission timeouts"),
                               ("rest", "the rest of the change (queueing, serialisation, "
                                        "the server's side)"))
           for end, tail in (("_change_s", ""), ("_low_s", ": its 95 % interval's low end"),
                             ("_high_s", ": its 95 % interval's high end"))},
        "rto_share": ("fraction", "the RTO back-off's share of the latency change (no interval "
                                  "where the change is undecided)"),
        "rto_share_low": ("fraction", "its 95 % interval's low end (delta method)"),
        "rto_share_high": ("fraction", "its 95 % interval's high end"),
        **{f"{side}_{count}": ("count", f"the {side}'s {words} over its measured requests")
           for side in ("reference", "arm")
           for count, words in (("client_timeouts", "client-side retransmission timeouts"),
                                ("requests_with_timeouts", "requests with a timeout"))},
    },
    "services": {
        "cell": ("", "a sweep's export: the cell's id (its run directory under cells/)"),
        "id": ("", "the request's id (the same request in every run of the same services "
                   "and seed)"),
        "service": ("", "the service's place among the scenario's [[service]] tables"),
        "service_name": ("", "the service's name"),
        "kind": ("", "query or rpc"),
        "query": ("", "the query the request belongs to (one request per worker; -1: an RPC)"),
        "client": ("", "the asking host (a query's aggregator, an RPC's client)"),
        "server": ("", "the answering host (a query's worker, an RPC's server)"),
        "request_bytes": ("bytes", "the request's size as simulated"),
        "response_bytes": ("bytes", "the response's size as simulated"),
        "planned_ns": ("ns", "when the request was planned (-1: a closed loop's, sent when a "
                             "slot frees)"),
        "sent_ns": ("ns", "when the request was sent (-1: never)"),
        "received_ns": ("ns", "when the server had the whole request (-1: never)"),
        "answered_ns": ("ns", "when the whole response arrived (-1: never)"),
        "client_timeouts": ("", "its client connection's retransmission timeouts from its "
                                "sending to its answer or failure (a SYN or the request "
                                "resent; the server's, resending the response, are not "
                                "counted)"),
        "client_timeout_wait_ns": ("ns", "the time its client connection made no progress "
                                         "before those timeouts, at most its own time since "
                                         "it was sent (a connection carrying several requests "
                                         "may have stalled since before)"),
        "error": ("", "the socket error that ended it, if any"),
        "answered": ("", "whether the whole response arrived"),
        "latency_s": ("s", "answered - sent (empty if unanswered)"),
        "measured": ("", "whether it was sent inside the measurement window"),
    },
    "streams": {
        "cell": ("", "a sweep's export: the cell's id (its run directory under cells/)"),
        "seq": ("", "the packet's sequence number (0: the stream's first)"),
        "sent_ns": ("ns", "when the packet was sent"),
        "received_ns": ("ns", "when it arrived"),
        "service_name": ("", "the stream's service name"),
        "delay_s": ("s", "one-way delay: arrival - send"),
        "measured": ("", "whether it was sent inside the measurement window"),
    },
    "compare": {
        "metric": ("", "what changed (as in a sweep's deltas)"),
        "change": ("fraction", "B's change against A (0.1 = +10 %)"),
        "change_low": ("fraction", "its 95 % interval, low end (empty: too few samples)"),
        "change_high": ("fraction", "its 95 % interval, high end"),
        "samples": ("pairs", "the pairs (or, unpaired, the smaller side's values)"),
        "seeds": ("seeds", "the seeds compared"),
        "paired": ("", "whether A and B replayed the same flows and seed"),
        "verdict": ("", "as in deltas_mean"),
        "decided": ("", "whether the interval decides the verdict"),
    },
}
_DROP_WHY = {"": "", "buffer_": " because the shared buffer refused them",
             "headroom_": " because the PFC headroom was full",
             "limit_": " because the band was at its own limit"}
_SCALE_CHECK = ("fraction", "the change (or its interval's end) at the reference scale or at "
                "this one, and their difference with its interval")
_PATTERNS = (
    (re.compile(r"fct_(small|medium|large|all)_count"),
     lambda m: ("flows", f"measured, completed {m[1]} flows")),
    (re.compile(r"fct_(small|medium|large|all)_(mean|p50|p99|p999)_s"),
     lambda m: ("s", f"{_STAT[m[2]]} FCT of the measured, completed {m[1]} flows")),
    (re.compile(r"fct_(small|medium|large|all)_mean_slowdown"),
     lambda m: ("ratio", f"mean slowdown (FCT / ideal FCT) of the {m[1]} flows")),
    (re.compile(r"starved_s_band_(\d+)"),
     lambda m: ("s", f"band {m[1]}'s starvation (time its egresses sent other bands while it "
                     "held packets), summed over its egresses, over the run")),
    (re.compile(r"(buffer_|headroom_|limit_|)dropped_band_(\d+)_(uplink|downlink|fabric)"),
     lambda m: ("packets", f"band {m[2]}'s packets dropped at the {metrics.PLACES[m[3]]}"
                f"{_DROP_WHY[m[1]]}, summed over them, over the run")),
    (re.compile(r"pause_s_(.+)"),
     lambda m: ("s", f"class {m[1]}'s PFC pause time in the window, summed over its egresses")),
    (re.compile(r"job_(.+)_(iterations|mean_iteration_s|p99_iteration_s|slowdown_vs_ideal)"),
     lambda m: (_JOB[m[2]][0], f"job {m[1]}: {_JOB[m[2]][1]}")),
)
_STAT = {"mean": "mean", "p50": "median", "p99": "99th percentile", "p999": "99.9th percentile"}
_JOB = {"iterations": ("iterations", "measured iterations"),
        "mean_iteration_s": ("s", "mean iteration time"),
        "p99_iteration_s": ("s", "99th percentile of the iteration time"),
        "slowdown_vs_ideal": ("ratio", "mean iteration time / no-contention iteration time")}


def describe(table: str, column: str, axes: tuple[str, ...] = ()) -> tuple[str, str]:
    """(unit, meaning) of a column of an exported table; meaning "" when
    this module does not know it."""
    known = _TABLES.get(table, {})
    if column in known:
        unit, meaning = known[column]
        if "{services}" in meaning:   # each kind's changed statistics (harness.traffic.services)
            meaning = meaning.format(services=", ".join(
                f"{stat.kind}_{stat.name}" for stat in services.changed_stats()))
        return unit, meaning
    found = services.column_meaning(column)   # a service's statistic, as its kind declares it
    if found is not None:
        return found
    if column in axes or "." in column:
        return ("as the scenario key", f"the grid's axis {column}: the scenario key's value "
                "at this point")
    if column == "label":
        return ("", "the grid point's label ([[points]])")
    if table == "scale_check":
        return ("" if column in ("arm", "metric", "within", "same_sign", "scale",
                                 "reference_scale") else _SCALE_CHECK[0],
                {"arm": "the compared arm", "metric": "what changed",
                 "scale": "the scale-down k of this row",
                 "reference_scale": "the smallest scale (the reference fidelity)",
                 "within": "whether the change lies inside the reference's interval",
                 "same_sign": "whether both changes have the same sign"}.get(
                     column, _SCALE_CHECK[1] + f" ({column})"))
    for pattern, words in _PATTERNS:
        m = pattern.fullmatch(column)
        if m:
            return words(m)
    if column in _COMMON:
        return _COMMON[column]
    return ("", "")


def dictionary(tables: dict[str, pd.DataFrame], axes: tuple[str, ...] = ()) -> pd.DataFrame:
    """The data dictionary of `tables`: table, column, dtype, unit, meaning."""
    rows = []
    for name, df in tables.items():
        for column in df.columns:
            unit, meaning = describe(name, str(column), axes)
            rows.append({"table": name, "column": column, "dtype": str(df[column].dtype),
                         "unit": unit, "meaning": meaning or "(not described)"})
    return pd.DataFrame(rows, columns=["table", "column", "dtype", "unit", "meaning"])


# --------------------------------------------------------------------------
# export


def check(directory: str | Path, fmt: str, out: str | Path) -> tuple[str, Path]:
    """The checks made before anything is read or written: DIR a run or sweep
    directory, the format, OUT a new directory. (kind, resolved OUT)."""
    from harness.analysis.comparing import directory_kind
    from harness.io import outdir

    if fmt not in FORMATS:
        raise ConfigError("--format", f"{fmt!r} is not a format; allowed: {', '.join(FORMATS)}")
    kind = directory_kind(directory, "DIR")
    if out is None or not str(out):
        raise ConfigError("-o", "give a new directory for the exported tables")
    target = outdir.check_new_dir(Path(out), "-o", "an export")
    # a sweep's tables, or a run's: its top-level Parquet files (CSV is larger)
    size = sum(p.stat().st_size for p in Path(directory).glob("*.parquet"))
    size += sum(p.stat().st_size for name in CELL_EXPORTED   # a sweep's cells' services
                for p in Path(directory).glob(f"cells/*/{name}.parquet"))
    outdir.check_space(target, size * (8 if fmt == "csv" else 1) + 100_000, "-o",
                       "the exported tables")
    return kind, target


def tables_of(directory: Path, kind: str) -> tuple[dict[str, pd.DataFrame], tuple[str, ...]]:
    """The tables exported of a run or sweep directory, and the sweep's axes."""
    from harness.analysis import metrics
    from harness.analysis.tables import optional_table, read_run, read_sweep_record

    directory = Path(directory)
    if kind == "run":
        run = read_run(directory, RUN_EXPORTED)
        tables = {"summary": pd.DataFrame([{
            "scenario": run.summary.get("scenario"), "seed": run.manifest.get("seed"),
            "digest": run.manifest.get("digest"), **metrics.flat_summary(run.summary)}])}
        tables.update({name: getattr(run, name) for name in RUN_EXPORTED
                       if getattr(run, name) is not None})
        return tables, ()
    record = read_sweep_record(directory)
    tables = {name: optional_table(directory, name) for name in SWEEP_EXPORTED}
    tables.update({name: _cells_table(directory, tables["summary"], name)
                   for name in CELL_EXPORTED})
    return ({k: v for k, v in tables.items() if v is not None},
            tuple(record.get("axes", [])))


def _cells_table(directory: Path, summary: pd.DataFrame | None, name: str) -> pd.DataFrame | None:
    """Every cell's `name` table (services, streams) in one, the cell's id
    first, in the summary's order; None where no cell has one."""
    from harness.analysis.tables import optional_table

    if summary is None or "cell" not in summary:
        return None
    parts = []
    for cell in summary["cell"]:
        table = optional_table(directory / "cells" / str(cell), name)
        if table is not None:
            parts.append(table.assign(cell=str(cell))[["cell", *table.columns]])
    return pd.concat(parts, ignore_index=True) if parts else None


def export(directory: str | Path, fmt: str, out: str | Path) -> Path:
    """Write DIR's tables into the new directory OUT as `fmt` (csv or parquet)
    with data-dictionary.csv; returns OUT. ConfigError, before anything is
    written, for a DIR that is not a run or sweep directory, another format,
    or an OUT that exists."""
    from harness.io import outdir

    kind, target = check(directory, fmt, out)
    tables, axes = tables_of(Path(directory), kind)

    def fill(tmp: Path) -> None:
        for name, df in tables.items():
            if fmt == "csv":
                df.to_csv(tmp / f"{name}.csv", index=False)
            else:
                df.to_parquet(tmp / f"{name}.parquet", index=False)
        dictionary(tables, axes).to_csv(tmp / DICTIONARY, index=False)

    return outdir.write_dir(target, fill)
