"""The bad-input matrix: every kind of bad input to the `harness` command ends
with exit code 2 and one line `error: ...` naming the field (and, where there
is a list, what is allowed), before ns-3 starts, and writes nothing.

The commands run in-process (click's CliRunner) with harness.engine.ns3.load
replaced by a failure: a case that reached the simulator would fail the test.
Files (scenarios, grids, CDFs, profiles, topologies) are written per case
into a temporary directory, which is also the current directory.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness import cli

TRAINING = ["training.enabled=true", 'training.profile="resnet50-like-2MB"']
PS = [*TRAINING, 'training.architecture="ps"', "training.workers=2"]

GRID = """name = "g"
scenario = "default"
timeout = "10min"
[set]
"run.duration" = 0.25
[axes]
"background.load" = [0.05, 0.1]
[arms]
reference = "same"
same = { "background.class" = "high" }
low = { "background.class" = "low" }
"""

# a boundary search (harness boundary) of GRID's background load; it measures
# the training slowdown, so its scenario has a training job
SEARCH = GRID.replace('"background.load" = [0.05, 0.1]', "seed = [1]").replace(
    '"run.duration" = 0.25', '"run.duration" = 0.25\n"training.enabled" = true') + """[search]
field = "background.load"
lo = 0.05
hi = 0.3
tolerance = 0.05
"""


# the thesis job scaled down, in a window (0.4 s) shorter than its no-contention
# iteration (567 ms): refused before anything runs
SHORT_WINDOW = ["scale=10", "run.duration=0.6", "run.warmup=0.1", "run.cooldown=0.1"]
SHORT_GRID = GRID.replace('scenario = "default"', 'scenario = "thesis"').replace(
    '"run.duration" = 0.25', '"scale" = 10\n"run.duration" = 0.6\n"run.warmup" = 0.1\n'
    '"run.cooldown" = 0.1')


# a search whose cells' window is shorter than one iteration
SHORT_SEARCH = SHORT_GRID.replace('"background.load" = [0.05, 0.1]', "seed = [1]") + """[search]
field = "background.load"
lo = 0.05
hi = 0.3
tolerance = 0.05
"""

# the same search over an integer field (training.workers: 2 to the 4 hosts)
SEARCH_WORKERS = SEARCH.replace('"background.load"', '"training.workers"').replace(
    "lo = 0.05", "lo = 2").replace("hi = 0.3", "hi = 4").replace("tolerance = 0.05",
                                                                  "tolerance = 1")

# a map sweep's record over the search's field (boundary --map)
MAP_RECORD = (b'{"grid": "m", "axes": ["background.load", "seed"], "arms": ["same", "low"], '
              b'"reference": "same", "cells": []}')

# a search directory's sweep.json before any cell ended (for --resume)
SEARCH_DIR_RECORD = (b'{"grid": "g", "axes": ["seed"], "arms": ["same", "low"], '
                     b'"reference": "same", "cells": []}')


def _parquet(columns: dict) -> bytes:
    import io

    import pandas as pd

    buffer = io.BytesIO()
    pd.DataFrame(columns).to_parquet(buffer, index=False)
    return buffer.getvalue()


# a finished sweep directory with a reference arm, for `harness frontier`
SWEEP_FILES = {
    "s/sweep.json": b'{"grid": "g", "axes": ["seed"], "arms": ["same", "low"], '
                    b'"reference": "same", "cells": []}',
    "s/summary.parquet": _parquet({"cell": ["a", "b"], "arm": ["same", "low"],
                                   "status": ["ok", "ok"]}),
    "s/deltas_mean.parquet": _parquet({
        "arm": ["low"] * 3, "metric": ["iteration_time", "fct_small_mean", "fct_large_mean"],
        "change": [0.0, -0.2, -0.1], "change_low": [-0.01, -0.3, -0.2],
        "change_high": [0.01, -0.1, 0.0]}),
}


def S(*sets: str, cmd: str = "run") -> list[str]:
    """`harness run --set A --set B ...`"""
    return [cmd, *[a for s in sets for a in ("--set", s)]]


# (id, argv, text the one line must contain: the field, then what is allowed)
SET_CASES = [
    # non-finite and out-of-range numbers
    ("rate-inf", S("background.rate=inf"), ["background.rate", "finite"]),
    ("rate-minus-inf", S("background.rate=-inf"), ["background.rate", "finite"]),
    ("rate-nan", S("background.rate=nan"), ["background.rate", "finite"]),
    ("rate-1e400", S("background.rate=1e400"), ["background.rate", "finite"]),
    ("rate-1e308-flows", S("background.rate=1e308"), ["background.rate", "at most"]),
    ("rate-string", S('background.rate="fast"'), ["background.rate", "number"]),
    ("load-inf", S("background.load=inf"), ["background.load", "finite"]),
    ("load-nan", S("background.load=nan"), ["background.load", "finite"]),
    ("load-1.5", S("background.load=1.5"), ["background.load", "< 1"]),
    ("load-0", S("background.load=0"), ["background.load", "> 0"]),
    ("rate-and-load", S("background.load=0.3", "background.rate=5"),
     ["background.rate", "background.load", "give one of them"]),
    ("load-and-rate", S("background.rate=5", "background.load=0.3"),
     ["background.rate", "background.load", "give one of them"]),
    ("rate-and-load-check", S("background.rate=5", "background.load=0.3", cmd="check"),
     ["background.rate", "background.load", "give one of them"]),
    ("port-70000", S("background.port=70000"), ["background.port", "<= 65,535"]),
    ("hosts-99", S("background.hosts=[0, 99]"), ["background.hosts[1]", "0..3"]),
    ("hosts-string", S('background.hosts="all"'), ["background.hosts", "list"]),
    ("class-unknown", S('background.class="urgent"'), ["background.class", "high"]),
    ("workload-unknown", S('background.workload="nosuch"'), ["background.workload", "websearch"]),
    ("duration-inf", S("run.duration=inf"), ["run.duration", "finite"]),
    ("duration-nan", S("run.duration=nan"), ["run.duration", "finite"]),
    ("duration-negative", S("run.duration=-1"), ["run.duration", "> 0"]),
    ("duration-1e12", S("run.duration=1e12"), ["run.duration", "at most"]),
    ("duration-1e400", S("run.duration=1e400"), ["run.duration", "finite"]),
    ("duration-1e400s", S('run.duration="1e400s"'), ["run.duration", "finite"]),
    ("duration-0.3..s", S('run.duration="0.3..s"'), ["run.duration", "cannot read", "ms"]),
    ("duration-1.2.3s", S('run.duration="1.2.3s"'), ["run.duration", "cannot read"]),
    ("duration-unit", S('run.duration="3 parsecs"'), ["run.duration", "units: s, ms"]),
    ("duration-no-number", S('run.duration="s"'), ["run.duration", "cannot read"]),
    ("duration-1e6-flows", S("run.duration=1e6"), ["background.load", "run.duration"]),
    ("duration-bool", S("run.duration=true"), ["run.duration", "duration"]),
    ("warmup-nan", S("run.warmup=nan"), ["run.warmup", "finite"]),
    ("cooldown-inf", S("run.cooldown=inf"), ["run.cooldown", "finite"]),
    ("window-empty", S("run.warmup=2.5"), ["run.duration", "warmup + cooldown"]),
    ("window-explicit", S("run.duration=0.3", "run.warmup=0.2"), ["run.duration", "warmup"]),
    ("interval-0ns", S("run.utilization_interval=1e-10"), ["run.utilization_interval", "0 ns"]),
    ("interval-1ns", S("run.utilization_interval=1e-9"), ["run.utilization_interval", "at least"]),
    ("interval-packet", S("run.utilization_interval=1e-6"), ["run.utilization_interval", "packet"]),
    ("interval-0", S("run.utilization_interval=0"), ["run.utilization_interval", "> 0"]),
    ("interval-nan", S("run.utilization_interval=nan"), ["run.utilization_interval", "finite"]),
    ("link-rate-inf", S("topology.link_rate=inf"), ["topology.link_rate", "finite"]),
    ("link-rate-1e400Gbps", S('topology.link_rate="1e400Gbps"'), ["topology.link_rate", "finite"]),
    ("link-rate-1.2.3Gbps", S('topology.link_rate="1.2.3Gbps"'), ["topology.link_rate", "Gbps"]),
    ("link-rate-nan", S("topology.link_rate=nan"), ["topology.link_rate", "finite"]),
    ("link-rate-unit", S('topology.link_rate="10 Gbps/s"'), ["topology.link_rate", "units"]),
    ("link-rate-half-bit", S("topology.link_rate=0.5"), ["topology.link_rate", "1 bit/s"]),
    ("link-rate-uint64", S('topology.link_rate="1e20Gbps"'), ["topology.link_rate", "at most"]),
    ("link-rate-negative", S('topology.link_rate="-1Gbps"'), ["topology.link_rate", "> 0"]),
    # a bare number is bit/s: 10 is 10 bit/s, named as such (not as a utilisation error)
    ("link-rate-10", S("topology.link_rate=10"),
     ["topology.link_rate", "10 bit/s", "a number is bit/s", '"10Gbps"', "1 Mbit/s"]),
    ("link-rate-1e5", S("topology.link_rate=100000"),
     ["topology.link_rate", "100000 bit/s", "1 Mbit/s"]),
    ("link-rate-10kbps", S('topology.link_rate="10kbps"'),
     ["topology.link_rate", "'10kbps'", "1 Mbit/s", '"10Gbps"']),
    ("fabric-rate-40", S('topology.file="leaf-spine"', "topology.fabric_link_rate=40"),
     ["topology.fabric_link_rate", "40 bit/s", '"40Gbps"']),
    ("host-rate-10", S('topology.file="leaf-spine"', "topology.host_link_rate=10"),
     ["topology.host_link_rate", "10 bit/s"]),
    ("link-change-rate-200", S("network.link_changes=[{at=0.5, rate=200}]"),
     ["network.link_changes[0].rate", "200 bit/s", '"200Mbps"']),
    ("loss-rate-0", S("network.loss={rate=0}"), ["network.loss.rate", "> 0"]),
    ("loss-rate-1", S("network.loss={rate=1}"), ["network.loss.rate", "< 1"]),
    ("loss-rate-text", S('network.loss={rate="often"}'), ["network.loss.rate", "number"]),
    ("loss-direction-up", S('network.loss={rate=0.01, direction="up"}'),
     ["network.loss.direction", "to_host", "from_host", "both"]),
    ("loss-host-99", S("network.loss={rate=0.01, hosts=[99]}"),
     ["network.loss.hosts[0]", "0..3"]),
    ("loss-key-unknown", S("network.loss={rate=0.01, links=[0]}"),
     ["network.loss.links", "unknown key"]),
    # the queue sampler (run.queue_samples, issue 50's DCTCP check)
    ("queue-samples-interval-0", S("run.queue_samples={interval=0}"),
     ["run.queue_samples.interval", "> 0"]),
    ("queue-samples-no-interval", S("run.queue_samples={hosts=[1]}"),
     ["run.queue_samples.interval", "missing"]),
    ("queue-samples-direction-up", S('run.queue_samples={interval="10us", direction="up"}'),
     ["run.queue_samples.direction", "to_host", "from_host", "both"]),
    ("queue-samples-host-99", S('run.queue_samples={interval="10us", hosts=[99]}'),
     ["run.queue_samples.hosts[0]", "0..3"]),
    ("queue-samples-class-mid", S('run.queue_samples={interval="10us", classes=["mid"]}'),
     ["run.queue_samples.classes[0]", "'mid'", "high"]),
    ("queue-samples-stop-late", S('run.queue_samples={interval="10us", stop=99}'),
     ["run.queue_samples.stop", "run.duration"]),
    ("queue-samples-1ns", S('run.queue_samples={interval="1ns"}'),
     ["run.queue_samples.interval", "20,000,000 samples"]),
    ("link-delay-nan", S("topology.link_delay=nan"), ["topology.link_delay", "finite"]),
    ("link-delay-inf", S("topology.link_delay=inf"), ["topology.link_delay", "finite"]),
    ("link-delay-1e400s", S('topology.link_delay="1e400s"'), ["topology.link_delay", "finite"]),
    ("link-delay-0.3..ms", S('topology.link_delay="0.3..ms"'), ["topology.link_delay", "cannot read"]),
    ("link-delay-negative", S("topology.link_delay=-1"), ["topology.link_delay", "> 0"]),
    ("hosts-1e8", S("topology.hosts=100000000"), ["topology.hosts", "<= 2048"]),
    # the node cap (harness.config.schema.topology.MAX_NODES), counted over the whole fabric
    ("hosts-2048-nodes-2049", S("topology.hosts=2048"),
     ["topology.hosts", "2049 nodes", "at most 2048"]),
    ("leaf-spine-2178-nodes", S('topology.file="leaf-spine"', "topology.leaves=128",
                                "topology.hosts_per_leaf=16", cmd="check"),
     ["topology.hosts_per_leaf", "2178 nodes", "at most 2048"]),
    ("hosts-float", S("topology.hosts=1.5"), ["topology.hosts", "integer"]),
    ("hosts-1", S("topology.hosts=1"), ["topology.hosts", ">= 2"]),
    ("topology-unknown", S('topology.file="nosuch"'), ["topology.file", "single-tor"]),
    ("topology-key", S("topology.spines=2"), ["topology.spines", "allowed"]),
    # ns-3's integer ranges
    ("buffer-2^40", S("tcp.buffer_bytes=1099511627776"), ["tcp.buffer_bytes", "<= 4,294,967,295"]),
    ("buffer-float", S("tcp.buffer_bytes=1e6"), ["tcp.buffer_bytes", "integer"]),
    ("buffer-small", S("tcp.buffer_bytes=100"), ["tcp.buffer_bytes", ">= 65,536"]),
    ("cwnd-1e11", S("tcp.initial_cwnd=100000000000"), ["tcp.initial_cwnd", "<= 4,294,967,295"]),
    ("cwnd-window", S("tcp.initial_cwnd=4000000"), ["tcp.initial_cwnd", "3,112,295"]),
    ("cwnd-0", S("tcp.initial_cwnd=0"), ["tcp.initial_cwnd", ">= 1"]),
    ("segment-nan", S("tcp.segment_size=nan"), ["tcp.segment_size", "integer"]),
    ("retries-0", S("tcp.data_retries=0"), ["tcp.data_retries", ">= 1"]),
    ("retries-256", S("tcp.data_retries=256"), ["tcp.data_retries", "<= 255"]),
    ("retries-float", S("tcp.data_retries=2.5"), ["tcp.data_retries", "integer"]),
    ("cc-unknown", S('tcp.congestion_control="bbr"'), ["tcp.congestion_control", "newreno"]),
    ("band-limit-1e10", S("network.band_limit_packets=10000000000"),
     ["network.band_limit_packets", "<= 4,294,967,295"]),
    ("bands-9", S("network.bands=9"), ["network.bands", "<= 4"]),
    ("mtu-huge", S("network.mtu=100000"), ["network.mtu", "<= 9,000"]),
    # fair-share queues and ECN (issue 16)
    ("drr-weights-unknown-class", S('network.qdisc="drr"', "network.weights={urgent=2}"),
     ["network.weights.urgent", "unknown traffic class", "high"]),
    ("drr-weight-0", S('network.qdisc="drr"', "network.weights={high=0}"),
     ["network.weights.high", "> 0"]),
    ("drr-weight-negative", S('network.qdisc="drr"', "network.weights={high=-3}"),
     ["network.weights.high", "> 0"]),
    ("drr-weight-inf", S('network.qdisc="drr"', "network.weights={high=inf}"),
     ["network.weights.high", "finite"]),
    ("drr-weight-nan", S('network.qdisc="drr"', "network.weights={high=nan}"),
     ["network.weights.high", "finite"]),
    ("drr-weight-string", S('network.qdisc="drr"', 'network.weights={high="3"}'),
     ["network.weights.high", "number"]),
    ("drr-weights-not-table", S('network.qdisc="drr"', "network.weights=3"),
     ["network.weights", "table", "high = 3"]),
    ("drr-weights-one-band-two", S('network.qdisc="drr"', "network.classes={a=0,b=0,low=1}",
                                   "network.bands=2", "background.class=\"a\"",
                                   "network.weights={a=2,b=3}"),
     ["network.weights.b", "one weight per band"]),
    ("weights-without-drr", S("network.weights={high=3,low=1}"),
     ["network.weights", "drr", "pfifo_fast"]),
    ("weights-with-prio", S('network.qdisc="prio"', "network.weights={high=3,low=1}"),
     ["network.weights", "drr", "prio"]),
    ("qdisc-unknown", S('network.qdisc="wfq"'), ["network.qdisc", "pfifo_fast, prio, drr"]),
    ("ecn-threshold-0", S("network.ecn_threshold=0"), ["network.ecn_threshold", ">= 1"]),
    ("ecn-threshold-negative", S("network.ecn_threshold=-5"), ["network.ecn_threshold", ">= 1"]),
    ("ecn-threshold-float", S("network.ecn_threshold=2.5"), ["network.ecn_threshold", "integer"]),
    ("ecn-threshold-inf", S("network.ecn_threshold=inf"), ["network.ecn_threshold", "integer"]),
    ("ecn-threshold-over-limit", S("network.band_limit_packets=100", "network.ecn_threshold=200"),
     ["network.ecn_threshold", "network.band_limit_packets = 100"]),
    ("ecn-threshold-unknown-class", S("network.ecn_threshold={urgent=20}"),
     ["network.ecn_threshold.urgent", "unknown traffic class", "high"]),
    ("ecn-threshold-class-0", S("network.ecn_threshold={low=0}"),
     ["network.ecn_threshold.low", ">= 1"]),
    ("ecn-threshold-empty", S("network.ecn_threshold={}"), ["network.ecn_threshold", "packets"]),
    # buffer models (network.buffer / network.host_buffer)
    ("buffer-model-unknown", S('network.buffer.model="wred"'),
     ["network.buffer.model", "per_band, shared, dynamic"]),
    ("buffer-not-a-table", S('network.buffer="shared"'),
     ["network.buffer", "model, size, pool, alpha"]),
    ("buffer-unknown-key", S('network.buffer.limit=100'),
     ["network.buffer.limit", "unknown key", "alpha, model, pool, size"]),
    ("buffer-size-0", S("network.buffer.size=0"), ["network.buffer.size", ">= 1"]),
    ("ecn-threshold-over-buffer", S("network.buffer.size=50", "network.ecn_threshold=80"),
     ["network.ecn_threshold", "network.buffer.size = 50"]),
    ("buffer-size-negative", S("network.buffer.size=-100"), ["network.buffer.size", ">= 1"]),
    ("buffer-size-float", S("network.buffer.size=2.5"), ["network.buffer.size", "integer"]),
    ("buffer-size-huge", S("network.buffer.size=10000000000"),
     ["network.buffer.size", "<= 4,294,967,295"]),
    ("buffer-size-bad-unit", S('network.buffer.size="1.2.3MB"'),
     ["network.buffer.size", "160KB"]),
    ("buffer-size-below-a-packet", S('network.buffer.size="1000B"'),
     ["network.buffer.size", "1500B"]),
    ("buffer-size-and-band-limit", S("network.buffer.size=100", "network.band_limit_packets=50"),
     ["network.buffer.size", "network.band_limit_packets", "not both"]),
    ("buffer-alpha-not-dynamic", S('network.buffer={model="shared",alpha=2}'),
     ["network.buffer.alpha", "dynamic", "shared"]),
    ("buffer-pool-not-dynamic", S('network.buffer.pool="switch"'),
     ["network.buffer.pool", "dynamic", "shared"]),
    ("buffer-pool-unknown", S('network.buffer={model="dynamic",pool="rack"}'),
     ["network.buffer.pool", "port, switch"]),
    ("buffer-alpha-0", S('network.buffer={model="dynamic",alpha=0}'),
     ["network.buffer.alpha", "> 0"]),
    ("buffer-alpha-huge", S('network.buffer={model="dynamic",alpha=1000}'),
     ["network.buffer.alpha", "1/64..64"]),
    ("buffer-alpha-inf", S('network.buffer={model="dynamic",alpha=inf}'),
     ["network.buffer.alpha", "finite"]),
    ("buffer-alpha-unknown-class", S('network.buffer={model="dynamic",alpha={urgent=2}}'),
     ["network.buffer.alpha.urgent", "unknown traffic class", "high"]),
    ("buffer-alpha-two-per-band", S("network.classes={a=0,b=0,low=2}",
                                    'network.buffer={model="dynamic",alpha={a=2,b=3}}'),
     ["network.buffer.alpha.b", "one alpha per band"]),
    ("buffer-alpha-empty", S('network.buffer={model="dynamic",alpha={}}'),
     ["network.buffer.alpha", "non-empty"]),
    ("host-buffer-model-unknown", S('network.host_buffer.model="linux"'),
     ["network.host_buffer.model", "per_band, shared, dynamic"]),
    # buffers, packet size and ECN in one unit (issue 48): the packet is network.mtu
    ("buffer-below-a-jumbo-frame", S("network.mtu=9000", 'network.buffer.size="4000B"'),
     ["network.buffer.size", "network.mtu = 9,000 B", '"9000B"']),
    ("host-buffer-below-a-jumbo-frame", S("network.mtu=9000", 'network.host_buffer.size="4000B"'),
     ["network.host_buffer.size", "network.mtu = 9,000 B", '"9000B"']),
    ("host-buffer-below-a-packet", S('network.host_buffer.size="1000B"'),
     ["network.host_buffer.size", '"1500B"']),
    ("ecn-threshold-over-byte-buffer", S('network.buffer.size="150KB"',
                                         "network.ecn_threshold=200"),
     ["network.ecn_threshold", "100 packets of network.mtu = 1,500 B", "1 to 99"]),
    ("ecn-threshold-over-jumbo-byte-buffer", S("network.mtu=9000", 'network.buffer.size="900KB"',
                                               "network.ecn_threshold=100"),
     ["network.ecn_threshold", "100 packets of network.mtu = 9,000 B", "1 to 99"]),
    ("ecn-threshold-over-host-buffer", S("network.host_buffer.size=10", "network.ecn_threshold=20"),
     ["network.ecn_threshold", "network.host_buffer.size = 10", "1 to 9"]),
    ("ecn-threshold-class-over-host-buffer", S('network.host_buffer.size="15KB"',
                                               "network.ecn_threshold={low=20}"),
     ["network.ecn_threshold.low", "network.host_buffer.size", "never mark"]),
    ("ecn-threshold-at-scaled-limit", S("scale=10", "network.band_limit_packets=100",
                                        "network.ecn_threshold=99"),
     ["network.ecn_threshold", "at scale = 10", "network.band_limit_packets = 10"]),
    ("ecn-threshold-at-limit", S("network.band_limit_packets=100", "network.ecn_threshold=100"),
     ["network.ecn_threshold", "network.band_limit_packets = 100", "1 to 99"]),
    ("dynamic-alpha-below-threshold", S('network.buffer={model="dynamic",alpha=0.02,size=1000}',
                                        "network.ecn_threshold=20"),
     ["network.buffer.alpha", "never mark", "alpha above 0.0204"]),
    ("dynamic-alpha-class-below-threshold", S('network.buffer={model="dynamic",size=1000,'
                                              'alpha={low=0.02}}',
                                              "network.ecn_threshold={low=20}"),
     ["network.buffer.alpha.low", "never mark"]),
    ("dynamic-host-alpha-below-threshold", S('network.host_buffer={model="dynamic",alpha=0.02,'
                                             'size="1.5MB"}', "network.ecn_threshold=20"),
     ["network.host_buffer.alpha", "never mark"]),
    ("dynamic-default-alpha-half-pool", S('network.buffer.model="dynamic"',
                                          "network.ecn_threshold=500"),
     ["network.ecn_threshold", "alpha = 1", "below 500"]),
    ("dctcp-without-marking", S('tcp.congestion_control="dctcp"'),
     ["tcp.congestion_control", "dctcp", "network.ecn_threshold"]),
    ("dctcp-ecn-off", S('tcp.congestion_control="dctcp"', "network.ecn_threshold=20",
                        "tcp.ecn=false"), ["tcp.ecn", "dctcp"]),
    ("tcp-ecn-string", S('tcp.ecn="on"'), ["tcp.ecn", "true or false"]),
    ("qdisc-unknown", S('network.qdisc="red"'), ["network.qdisc", "pfifo_fast"]),
    ("class-band", S("network.classes={high=0, low=5}"), ["network.classes.low", "0..2"]),
    ("seed-float", S("seed=1.5"), ["seed", "integer"]),
    ("seed-negative", S("seed=-1"), ["seed", ">= 0"]),
    ("seed-nan", S("seed=nan"), ["seed", "integer"]),
    ("seed-2^64", S("seed=18446744073709551616"), ["seed", "<= 9,223,372,036,854,775,807"]),
    ("name-number", S("name=3"), ["name", "string"]),
    ("unknown-top-key", S("bogus=1"), ["bogus", "allowed"]),
    ("section-not-table", S("run=3"), ["run", "table"]),
    ("field-not-table", S("run.duration.x=1"), ["run.duration.x", "not a table"]),
    ("set-without-equals", S("run.duration"), ["--set", "key=value"]),
    ("set-empty-key", S("=3"), ["--set", "bad key"]),
    ("set-double-dot", S("a..b=1"), ["--set", "bad key"]),
    # training
    ("ratio-inf", S(*TRAINING, "training.ratio=inf"), ["training.ratio", "finite"]),
    ("ratio-nan", S(*TRAINING, "training.ratio=nan"), ["training.ratio", "finite"]),
    ("ratio-1e300", S(*TRAINING, "training.ratio=1e300"), ["training.ratio", "ns-3"]),
    ("ratio-0", S(*TRAINING, "training.ratio=0"), ["training.ratio", "> 0"]),
    ("model-bytes-float", S(*TRAINING, "training.model_bytes=1e30"),
     ["training.model_bytes", "integer"]),
    ("model-bytes-2^66", S(*TRAINING, "training.model_bytes=100000000000000000000"),
     ["training.model_bytes", "<= 9,223,372,036,854,775,807"]),
    ("fusion-2^66", S(*TRAINING, "training.fusion_buffer=100000000000000000000"),
     ["training.fusion_buffer", "<="]),
    ("ring-deadline-unknown-class", S(*TRAINING, 'training.deadline_class="urgent"'),
     ["training.deadline_class", "urgent"]),
    ("ring-deadline-number", S(*TRAINING, "training.deadline_class=3"),
     ["training.deadline_class", "string"]),
    ("sharded-deadline", S(*TRAINING, 'training.architecture="sharded"',
                           'training.deadline_class="high"'),
     ["training.deadline_class", "'ring' or 'ps'"]),
    ("partition-1.2.3KB", S(*TRAINING, 'training.policy="bytescheduler"',
                            'training.scheduler.partition="1.2.3KB"'),
     ["training.scheduler.partition", "KB"]),
    ("partition-inf", S(*TRAINING, 'training.policy="bytescheduler"',
                        'training.scheduler.partition="infKB"'),
     ["training.scheduler.partition", "cannot read"]),
    ("partition-0", S(*TRAINING, 'training.policy="bytescheduler"',
                      "training.scheduler.partition=0"),
     ["training.scheduler.partition", "> 0"]),
    ("partition-not-a-param", S(*TRAINING, "training.scheduler.partition=1"),
     ["training.scheduler.partition", "allowed: none"]),
    ("min-gain-2", S(*PS, 'training.policy="autobyte"', "training.scheduler.min_gain=2"),
     ["training.scheduler.min_gain", "<= 1"]),
    ("min-gain-nan", S(*PS, 'training.policy="autobyte"', "training.scheduler.min_gain=nan"),
     ["training.scheduler.min_gain", "finite"]),
    ("interval-2^33", S(*PS, 'training.policy="autobyte"',
                        "training.scheduler.interval=10000000000"),
     ["training.scheduler.interval", "4,294,967,295"]),
    ("bandwidth-inf", S(*PS, 'training.policy="prophet"', "training.scheduler.bandwidth=inf"),
     ["training.scheduler.bandwidth", "finite"]),
    ("ps-port-range", S(*PS, "training.port=65535"), ["training.port", "65533"]),
    ("policy-unknown", S(*TRAINING, 'training.policy="nosuch"'), ["training.policy", "fifo"]),
    ("policy-ps-only", S(*TRAINING, 'training.policy="mercury"'), ["training.policy", "ring"]),
    ("architecture", S(*TRAINING, 'training.architecture="mesh"'),
     ["training.architecture", "ring, ps"]),
    ("workers-99", S(*TRAINING, "training.workers=99"), ["training.workers", "0..3"]),
    ("layer-range", S(*TRAINING, 'training.layer_classes={high="9-0"}'),
     ["training.layer_classes.high", "first-last"]),
    ("priority-unknown", S(*TRAINING, 'training.priority="urgent"'),
     ["training.priority", "allowed"]),
    ("profile-unknown", S(*TRAINING, 'training.profile="nosuch"'),
     ["training.profile", "resnet50-like"]),
    ("ps-setting-on-ring", S(*TRAINING, "training.servers=2"), ["training.servers", "ps"]),
    # the same checks through `harness check`
    ("check-inf", S("run.duration=inf", cmd="check"), ["run.duration", "finite"]),
    ("check-cwnd", S("tcp.initial_cwnd=100000000000", cmd="check"), ["tcp.initial_cwnd", "<="]),
]

NOT_UTF8 = b'name = "caf\xe9"\n'
SVC = b'base = "default"\n'   # a scenario with services: the default's, one line each wrong

# (id, {file name: content}, argv (names of those files, resolved in tmp), must contain)
FILE_CASES = [
    ("scenario-not-utf8", {"s.toml": NOT_UTF8}, ["run", "s.toml"], ["scenario", "UTF-8"]),
    ("scenario-not-toml", {"s.toml": b"name = \n"}, ["run", "s.toml"], ["scenario", "TOML"]),
    ("scenario-missing", {}, ["run", "nope.toml"], ["scenario", "not found", "default"]),
    ("scenario-is-dir", {"d/x": b""}, ["run", "d"], ["scenario", "not found"]),
    ("scenario-base-number", {"s.toml": b"base = 3\n"}, ["run", "s.toml"], ["base", "name"]),
    ("scenario-base-missing", {"s.toml": b'base = "nosuch"\n'}, ["run", "s.toml"],
     ["base", "not found"]),
    # (base = "default": the file's one error; with more, each is a line of its own)
    ("scenario-run-string", {"s.toml": b'base = "default"\nrun = "fast"\n'}, ["run", "s.toml"],
     ["run", "table"]),
    ("scenario-host-string", {"s.toml": b'[background]\nhosts = [0, "a"]\n'}, ["run", "s.toml"],
     ["background.hosts[1]", "integer"]),
    ("scenario-duration-string-nan", {"s.toml": b'base = "default"\n[run]\nduration = "nan s"\n'},
     ["run", "s.toml"], ["run.duration", "cannot read"]),
    # [[service]] (issue 49): kind, keys, hosts, what cannot work at zero load
    ("service-kind-unknown", {"s.toml": SVC + b'[[service]]\nkind = "video"\n'}, ["run", "s.toml"],
     ["service[0].kind", "query, rpc, stream, poisson, bulk"]),
    ("service-key-unknown", {"s.toml": SVC + b'[[service]]\nkind = "query"\nrate = 10\nfan_out = 3\n'},
     ["run", "s.toml"], ["service[0].fan_out", "unknown key", "fanout"]),
    ("service-fanout-above-workers", {"s.toml": SVC + b'[[service]]\nkind = "query"\nrate = 10\n'
                                      b'fanout = 4\n'}, ["run", "s.toml"],
     ["service[0].fanout", "give 1..3"]),
    ("service-fanout-zero", {"s.toml": SVC + b'[[service]]\nkind = "query"\nrate = 10\n'
                             b'fanout = 0\n'}, ["run", "s.toml"],
     ["service[0].fanout", ">= 1"]),
    ("service-key-of-other-kind", {"s.toml": SVC + b'[[service]]\nkind = "query"\nrate = 10\n'
                                   b'qps = 3\n'}, ["run", "s.toml"],
     ["service[0].qps", "kind = 'rpc' only"]),
    ("service-workers-99", {"s.toml": SVC + b'[[service]]\nkind = "query"\nrate = 10\n'
                            b'workers = [1, 99]\n'}, ["run", "s.toml"],
     ["service[0].workers[1]", "0..3"]),
    ("service-deadline-below-rtt", {"s.toml": SVC + b'[[service]]\nkind = "query"\nrate = 10\n'
                                    b'deadline = "5us"\n'}, ["run", "s.toml"],
     ["service[0].deadline", "no-contention completion time"]),
    ("service-slo-below-rtt", {"s.toml": SVC + b'[[service]]\nkind = "rpc"\nqps = 10\nslo = "5us"\n'},
     ["run", "s.toml"], ["service[0].slo", "no-contention latency"]),
    ("service-qps-unservable", {"s.toml": SVC + b'[[service]]\nkind = "rpc"\nqps = 1e6\n'},
     ["run", "s.toml"], ["service[0].qps", "at zero load", "at most"]),
    ("service-rate-negative", {"s.toml": SVC + b'[[service]]\nkind = "query"\nrate = -5\n'},
     ["run", "s.toml"], ["service[0].rate", "> 0"]),
    ("service-qps-and-outstanding", {"s.toml": SVC + b'[[service]]\nkind = "rpc"\nqps = 5\n'
                                     b'outstanding = 2\n'}, ["run", "s.toml"],
     ["service[0].qps", "give either"]),
    ("service-class-unknown", {"s.toml": SVC + b'[[service]]\nkind = "rpc"\nqps = 5\n'
                               b'class = "urgent"\n'}, ["run", "s.toml"],
     ["service[0].class", "high"]),
    ("service-bitrate-above-link", {"s.toml": SVC + b'[[service]]\nkind = "stream"\n'
                                    b'bitrate = "20Gbps"\n'}, ["run", "s.toml"],
     ["service[0].bitrate", "at most"]),
    ("service-second-deadline", {"s.toml": SVC + b'[[service]]\nkind = "rpc"\nqps = 5\n'
                                 b'[[service]]\nkind = "stream"\nbitrate = "1Mbps"\n'
                                 b'deadline = "1us"\n'}, ["run", "s.toml"],
     ["service[1].deadline", "path's delay"]),
    # Poisson packets, bulk flows and random loss (issue 50)
    ("poisson-bitrate-above-link", {"s.toml": SVC + b'[[service]]\nkind = "poisson"\n'
                                    b'bitrate = "2Gbps"\n'}, ["run", "s.toml"],
     ["service[0].bitrate", "at most"]),
    ("poisson-packet-size-5", {"s.toml": SVC + b'[[service]]\nkind = "poisson"\n'
                               b'bitrate = "1Mbps"\npacket_size = 5\n'}, ["run", "s.toml"],
     ["service[0].packet_size", ">= 12"]),
    ("poisson-same-ends", {"s.toml": SVC + b'[[service]]\nkind = "poisson"\n'
                           b'bitrate = "1Mbps"\nsource = 1\ndestination = 1\n'},
     ["run", "s.toml"], ["service[0].destination", "source too"]),
    ("bulk-destination-is-source", {"s.toml": SVC + b'[[service]]\nkind = "bulk"\n'
                                    b'sources = [0, 1]\ndestination = 1\n'}, ["run", "s.toml"],
     ["service[0].destination", "source too"]),
    ("bulk-source-99", {"s.toml": SVC + b'[[service]]\nkind = "bulk"\nsources = [99]\n'},
     ["run", "s.toml"], ["service[0].sources[0]", "0..3"]),
    ("bulk-flows-0", {"s.toml": SVC + b'[[service]]\nkind = "bulk"\nflows = 0\n'},
     ["run", "s.toml"], ["service[0].flows", ">= 1"]),
    ("bulk-flows-101", {"s.toml": SVC + b'[[service]]\nkind = "bulk"\nflows = 101\n'},
     ["run", "s.toml"], ["service[0].flows", "<= 100"]),
    ("bulk-start-after-run", {"s.toml": SVC + b'[[service]]\nkind = "bulk"\nstart = 100\n'},
     ["run", "s.toml"], ["service[0].start", "run.duration"]),
    ("bulk-ports-beyond-65535", {"s.toml": SVC + b'[[service]]\nkind = "bulk"\nflows = 50\n'
                                 b'port = 65500\n'}, ["run", "s.toml"],
     ["service[0].port", "65,535"]),
    ("cdf-nan", {"c.csv": b"bytes,cdf\n0,0\nnan,0.5\n100,1\n"},
     ["run", "--set", 'background.workload="c.csv"'], ["background.workload", "finite"]),
    ("cdf-inf", {"c.csv": b"bytes,cdf\n0,0\n100,0.5\ninf,1\n"},
     ["run", "--set", 'background.workload="c.csv"'], ["background.workload", "finite"]),
    ("cdf-not-utf8", {"c.csv": b"bytes,cdf\n0,0\n\xff\xfe,1\n"},
     ["run", "--set", 'background.workload="c.csv"'], ["background.workload", "c.csv"]),
    ("profile-nan", {"p.csv": b"layer,bytes,fp_ms,bp_ms\n0,1000,nan,1\n1,1000,1,1\n"},
     ["run", "--set", "training.enabled=true", "--set", 'training.profile="p.csv"'],
     ["training.profile", "finite"]),
    ("profile-not-utf8", {"p.csv": b"layer,bytes,fp_ms,bp_ms\n0,1000,\xff,1\n"},
     ["run", "--set", "training.enabled=true", "--set", 'training.profile="p.csv"'],
     ["training.profile", "cannot read"]),
    ("topology-kind-list", {"t.toml": b"kind = [1]\n"},
     ["run", "--set", 'topology.file="t.toml"'], ["topology.kind", "single-tor"]),
    ("topology-not-utf8", {"t.toml": NOT_UTF8},
     ["run", "--set", 'topology.file="t.toml"'], ["topology.file", "UTF-8"]),
    ("topology-custom-link-numbers", {"t.toml": b'kind = "custom"\nhosts = 2\nswitches = 1\n'
                                      b'link_rate = "1Gbps"\nlink_delay = "10us"\n'
                                      b"links = [[1, 2]]\n"},
     ["run", "--set", 'topology.file="t.toml"'], ["topology.links[0]", "h0"]),
    # output paths, checked before the simulation
    ("run-o-user-dir", {"d/notes.tex": b"x"}, ["run", "-o", "d"], ["-o", "not empty"]),
    ("run-o-under-file", {"f": b"x"}, ["run", "-o", "f/run"], ["-o", "not a directory"]),
    ("run-o-file", {"f": b"x"}, ["run", "-o", "f"], ["-o", "not a directory"]),
    ("run-o-proc", {}, ["run", "-o", "/proc/x"], ["-o", "cannot write in /proc"]),
    ("run-o-dot", {}, ["run", "-o", "."], ["-o", "current directory"]),
    ("run-o-parent", {}, ["run", "-o", ".."], ["-o", "current directory"]),
    ("run-o-long-name", {}, ["run", "-o", "r" * 250], ["-o", "too long", ".NAME.tmp-PID"]),
    ("scenario-name-huge", {"s.toml": 'base = "default"\nname = ["' + "x" * 1_000_000 + '"]\n'},
     ["run", "s.toml"],
     ["name", "expected a string", "characters)"]),
    # grids
    ("grid-not-utf8", {"g.toml": NOT_UTF8}, ["sweep", "g.toml"], ["grid", "UTF-8"]),
    ("grid-not-toml", {"g.toml": b"axes = [\n"}, ["sweep", "g.toml"], ["grid", "TOML"]),
    ("grid-missing", {}, ["sweep", "nope.toml"], ["grid", "not found", "quick"]),
    ("grid-scenario-42", {"g.toml": GRID.replace('scenario = "default"', "scenario = 42")},
     ["sweep", "g.toml"], ["scenario", "name or path", "default"]),
    ("grid-scenario-missing", {"g.toml": GRID.replace('"default"', '"nowhere"', 1)},
     ["sweep", "g.toml"], ["scenario", "not found"]),
    ("grid-no-scenario", {"g.toml": GRID.replace('scenario = "default"\n', "")},
     ["sweep", "g.toml"], ["scenario", "base scenario"]),
    ("grid-set-3", {"g.toml": GRID.replace('[set]\n"run.duration" = 0.25\n', "set = 3\n")},
     ["sweep", "g.toml"], ["set", "table"]),
    ("grid-axes-3", {"g.toml": "axes = 3\n" + GRID.replace(
        '[axes]\n"background.load" = [0.05, 0.1]\n', "")},
     ["sweep", "g.toml"], ["axes", "table"]),
    ("grid-arms-list", {"g.toml": "arms = [1]\n" + GRID.split("[arms]")[0]},
     ["sweep", "g.toml"], ["arms", "table"]),
    ("grid-arm-number", {"g.toml": GRID.split("[arms]")[0] + "[arms]\nsame = 3\n"},
     ["sweep", "g.toml"], ["arms.same", "table"]),
    ("grid-reference-number", {"g.toml": GRID.replace('reference = "same"', "reference = 3")},
     ["sweep", "g.toml"], ["arms.reference", "arm"]),
    ("grid-reference-unknown", {"g.toml": GRID.replace('reference = "same"', 'reference = "x"')},
     ["sweep", "g.toml"], ["arms.reference", "same, low"]),
    ("grid-timeout-malformed", {"g.toml": GRID.replace('"10min"', '"0.3..s"')},
     ["sweep", "g.toml"], ["timeout", "cannot read"]),
    ("grid-timeout-inf", {"g.toml": GRID.replace('"10min"', "inf")},
     ["sweep", "g.toml"], ["timeout", "finite"]),
    ("grid-name-number", {"g.toml": GRID.replace('name = "g"', "name = 3")},
     ["sweep", "g.toml"], ["name", "string"]),
    ("grid-name-empty", {"g.toml": GRID.replace('name = "g"', 'name = ""')},
     ["sweep", "g.toml"], ["name", "string"]),
    ("grid-unknown-key", {"g.toml": GRID + 'colour = "red"\n'},
     ["sweep", "g.toml"], ["arms.colour", "table"]),
    ("grid-unknown-top-key", {"g.toml": 'colour = "red"\n' + GRID},
     ["sweep", "g.toml"], ["colour", "allowed"]),
    ("grid-axis-not-list", {"g.toml": GRID.replace("[0.05, 0.1]", "0.05")},
     ["sweep", "g.toml"], ["axes.background.load", "list"]),
    ("grid-axis-empty", {"g.toml": GRID.replace("[0.05, 0.1]", "[]")},
     ["sweep", "g.toml"], ["axes.background.load", "non-empty"]),
    ("grid-axis-repeated", {"g.toml": GRID.replace("[0.05, 0.1]", "[0.1, 0.1]")},
     ["sweep", "g.toml"], ["axes.background.load", "twice"]),
    ("grid-axis-wrong-kind", {"g.toml": GRID.replace("[0.05, 0.1]", '[0.05, "fast"]')},
     ["sweep", "g.toml"], ["axes.background.load", "wrong kind"]),
    ("grid-axis-unknown-field", {"g.toml": GRID.replace('"background.load" = [',
                                                        '"background.lode" = [')},
     ["sweep", "g.toml"], ["axes.background.lode", "unknown"]),
    ("grid-set-unknown-field", {"g.toml": GRID.replace('"run.duration"', '"run.duraton"')},
     ["sweep", "g.toml"], ["set.run.duraton", "unknown"]),
    ("grid-arm-is-axis", {"g.toml": GRID.replace('low = { "background.class" = "low" }',
                                                 'low = { "background.load" = 0.2 }')},
     ["sweep", "g.toml"], ["arms.low.background.load", "axis"]),
    ("check-grid-scenario-42",
     {"g.toml": GRID.replace('scenario = "default"', "scenario = 42")},
     ["check", "--sweep", "g.toml"], ["scenario", "name or path"]),
    ("check-grid-with-set", {"g.toml": GRID}, ["check", "g.toml", "--set", "seed=2"],
     ["--set", "[set]"]),
    # background.rate and background.load: one quantity, given two ways at once
    ("scenario-rate-and-load", {"s.toml": 'name = "s"\n[background]\nload = 0.3\nrate = 5\n'},
     ["run", "s.toml"], ["background.rate", "background.load", "give one of them"]),
    ("derived-rate-and-load",
     {"s.toml": 'base = "default"\n[background]\nload = 0.3\nrate = 5\n'},
     ["check", "s.toml"], ["background.rate", "background.load", "give one of them"]),
    ("grid-set-rate-and-load",
     {"g.toml": GRID.replace('"run.duration" = 0.25',
                             '"background.rate" = 5\n"background.load" = 0.1')},
     ["sweep", "g.toml"], ["set.background.rate", "set.background.load", "give one of them"]),
    ("grid-axes-rate-and-load",
     {"g.toml": GRID.replace('"background.load" = [0.05, 0.1]',
                             '"background.load" = [0.05, 0.1]\n"background.rate" = [1, 2]')},
     ["check", "g.toml"], ["axes.background.rate", "axes.background.load"]),
    ("grid-arm-rate-axis-load",
     {"g.toml": GRID.replace('low = { "background.class" = "low" }',
                             'low = { "background.rate" = 5 }')},
     ["sweep", "g.toml"], ["arms.low.background.rate", "background.load", "axis",
                           "give one of them"]),
    ("grid-point-rate-and-load",
     {"g.toml": GRID.replace('[axes]\n"background.load" = [0.05, 0.1]\n',
                             '[[points]]\n"background.load" = 0.1\n"background.rate" = 5\n')},
     ["check", "g.toml"], ["points[0].background.rate", "points[0].background.load"]),
    # --budget: "20min", "2h" or seconds; anything else is named
    ("budget-word", {"g.toml": GRID}, ["sweep", "g.toml", "--budget", "soon"],
     ["--budget", "cannot read", "a number in seconds"]),
    ("budget-negative", {"g.toml": GRID}, ["sweep", "g.toml", "--budget", "-60"],
     ["--budget", "> 0"]),
    ("budget-nan", {"g.toml": GRID}, ["sweep", "g.toml", "--budget", "nan"],
     ["--budget", "finite"]),
    # sweep outputs
    ("sweep-o-user-dir", {"g.toml": GRID, "d/notes.tex": b"x"}, ["sweep", "g.toml", "-o", "d"],
     ["-o", "not a sweep directory"]),
    ("sweep-o-under-file", {"g.toml": GRID, "f": b"x"}, ["sweep", "g.toml", "-o", "f/s"],
     ["-o", "not a directory"]),
    ("sweep-o-proc", {"g.toml": GRID}, ["sweep", "g.toml", "-o", "/proc/x"],
     ["-o", "cannot write in /proc"]),
    ("sweep-o-existing-sweep", {"g.toml": GRID, "s/sweep.json": b'{"cells": []}'},
     ["sweep", "g.toml", "-o", "s"], ["already holds a sweep", "--resume"]),
    # usage errors, one line like the rest
    ("jobs-0", {}, ["sweep", "quick", "-j", "0"], ["'-j' / '--jobs'", "x>=1"]),
    ("executor-unknown", {}, ["sweep", "quick", "--executor", "mpi"],
     ["'--executor'", "'local', 'dask'"]),
    ("option-unknown", {}, ["run", "--sett", "x=1"], ["--sett"]),
    ("command-unknown", {}, ["rnu"], ["No such command", "rnu"]),
    ("check-sweep-without-grid", {}, ["check", "--sweep"], ["--sweep", "grid"]),
    ("report-not-sweep", {"d/x": b""}, ["report", "d"], ["SWEEP_DIR", "not a sweep directory"]),
    ("report-missing-dir", {}, ["report", "nope"], ["SWEEP_DIR", "does not exist"]),
    ("report-o-user-file", {"s/sweep.json": b"{}", "s/summary.parquet": b"",
                            "mine.html": b"<p>mine</p>"},
     ["report", "s", "-o", "mine.html"], ["-o", "not written by the harness"]),
    ("profile-o-user-file", {"mine.csv": b"layer,bytes,fp_ms,bp_ms\n0,10,1,1\n"},
     ["profile", "--compute-ms", "10", "-o", "mine.csv"], ["-o", "not written by the harness"]),
    ("plot-o-user-dir", {"r/config.json": b"{}", "r/summary.json": b"{}",
                         "figs/fct-cdf.png": b"mine", "figs/notes.tex": b"mine"},
     ["plot", "r", "-o", "figs"], ["-o", "did not write", "notes.tex"]),
    ("plot-not-run-dir", {"d/x": b""}, ["plot", "d"], ["not a run directory", "config.json"]),
    ("profile-layers-0", {}, ["profile", "--layers", "0", "--compute-ms", "10"],
     ["--layers", "2 to 100,000"]),
    ("profile-compute-nan", {}, ["profile", "--compute-ms", "nan"], ["--compute-ms", "finite"]),
    ("profile-ratio-inf", {}, ["profile", "--ratio", "inf"], ["--ratio", "finite"]),
    ("profile-model-inf", {}, ["profile", "--model-bytes", "inf", "--compute-ms", "10"],
     ["--model-bytes", "finite"]),
    ("profile-link-rate", {}, ["profile", "--ratio", "4", "--link-rate", "1.2.3Gbps"],
     ["--link-rate", "cannot read"]),
    ("profile-both", {}, ["profile", "--ratio", "4", "--compute-ms", "10"],
     ["exactly one of --compute-ms and --ratio"]),
    ("profile-check-not-utf8", {"p.csv": b"layer,bytes\n\xff\n"}, ["profile", "--check", "p.csv"],
     ["profile", "cannot read"]),
    # harness profile: bounded, never writes what its readers refuse, -o not ignored (issue 48)
    ("profile-layers-1e9", {}, ["profile", "--layers", "1000000000", "--compute-ms", "10"],
     ["--layers", "2 to 100,000"]),
    ("profile-model-bytes-1e30", {}, ["profile", "--model-bytes", "1e30", "--compute-ms", "10"],
     ["--model-bytes", "at most 9,223,372,036,854,775,807"]),
    ("profile-model-bytes-fraction", {}, ["profile", "--model-bytes", "1e8.5", "--compute-ms",
                                          "10"], ["--model-bytes"]),
    ("profile-model-bytes-too-small", {}, ["profile", "--model-bytes", "100", "--compute-ms",
                                           "10", "-o", "p.csv"], ["--model-bytes", "at least 225"]),
    ("profile-compute-past-ns3", {}, ["profile", "--compute-ms", "1e300", "-o", "p.csv"],
     ["--compute-ms", "longest time ns-3 represents"]),
    ("profile-ratio-past-ns3", {}, ["profile", "--ratio", "1e300", "-o", "p.csv"],
     ["--ratio", "longest time ns-3 represents"]),
    ("profile-compute-0", {}, ["profile", "--compute-ms", "0"], ["--compute-ms", "> 0"]),
    ("profile-workers-1", {}, ["profile", "--ratio", "4", "--workers", "1"],
     ["--workers", "at least 2"]),
    ("profile-check-with-o", {"p.csv": b"layer,bytes,fp_ms,bp_ms\n0,10,1,1\n"},
     ["profile", "--check", "p.csv", "-o", "q.csv"], ["-o", "--check only reads"]),
    ("profile-check-with-layers", {"p.csv": b"layer,bytes,fp_ms,bp_ms\n0,10,1,1\n"},
     ["profile", "--check", "p.csv", "--layers", "3"], ["--layers", "--check only reads"]),
    ("profile-check-past-int64", {"p.csv": b"layer,bytes,fp_ms,bp_ms\n0,9223372036854775807,1,1"
                                           b"\n1,10,1,1\n"},
     ["profile", "--check", "p.csv"], ["profile", "at most 9,223,372,036,854,775,807 B"]),
    ("profile-run-past-int64", {"p.csv": b"layer,bytes,fp_ms,bp_ms\n0,9223372036854775807,1,1"
                                         b"\n1,10,1,1\n"},
     ["run", "--set", "training.enabled=true", "--set", 'training.profile="p.csv"'],
     ["training.profile", "at most 9,223,372,036,854,775,807 B"]),
    ("profile-check-compute-past-ns3", {"p.csv": b"layer,bytes,fp_ms,bp_ms\n0,10,1e13,1\n"},
     ["profile", "--check", "p.csv"], ["profile", "fp_ms", "longest time ns-3 represents"]),
    ("profile-check-too-many-layers", {"p.csv": b"layer,bytes,fp_ms,bp_ms\n" + b"".join(
        b"%d,10,1,1\n" % i for i in range(100_001))},
     ["profile", "--check", "p.csv"], ["profile", "100,001 layers", "at most 100,000"]),
    # harness alone without a job to compare (issue 48): refused before the simulation
    ("alone-no-training", {}, ["alone", "default"],
     ["training", "no enabled training job", "training.enabled=true"]),
    ("alone-every-job-disabled", {}, ["alone", "two-jobs", "--set", "training.0.enabled=false",
                                      "--set", "training.1.enabled=false"],
     ["training", "no enabled training job"]),
    # valid as written, refused for what ns-3 would receive (issue 25)
    ("straggler-factor-1e15", {}, S(*TRAINING, "training.straggler={factor=1e15}"),
     ["training.straggler", "beyond ns-3's clock"]),
    ("straggler-uniform-1e300", {}, S(*TRAINING, 'training.straggler={distribution="uniform", '
                                       "factor_min=1, factor_max=1e300}"),
     ["training.straggler", "beyond ns-3's clock"]),
    ("link-change-hosts-empty", {}, S("network.link_changes=[{at=0.1, rate=\"500Mbps\", "
                                      "hosts=[]}]"),
     ["network.link_changes[0].hosts", "empty", "leave hosts out"]),
    # tracebacks before ns-3 (issue 25)
    ("scenario-nested-5000", {"s.toml": "name = \"x\"\nv = " + "[" * 5000 + "]" * 5000 + "\n"},
     ["run", "s.toml"], ["s.toml", "nest", "32 levels"]),
    ("grid-nested-40", {"g.toml": GRID + "x = " + "[" * 40 + "]" * 40 + "\n"},
     ["sweep", "g.toml"], ["grid", "nest more than 32 levels"]),
    ("set-nested-50", {}, ["run", "--set", "run.x=" + "[" * 50 + "]" * 50],
     ["--set run.x", "32 levels"]),
    ("cdf-mean-0", {"c.csv": b"bytes,cdf\n0,1\n1,1\n"},
     S('background.workload="c.csv"', "background.load=0.3"),
     ["background.workload", "mean flow size is 0 bytes"]),
    ("dask-scheduler-refused", {"g.toml": GRID},
     ["sweep", "g.toml", "-o", "s", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:1"],
     ["--scheduler", "no Dask scheduler answers"]),
    # silently wrong before (issue 25): DCTCP's traffic in a band that does not mark
    ("dctcp-marks-unused-class", {}, S('tcp.congestion_control="dctcp"',
                                       "network.ecn_threshold={low=20}"),
     ["network.ecn_threshold", "'high'", "background", "does not mark"]),
    ("dctcp-training-band-unmarked", {}, S(*TRAINING, 'training.priority="low"',
                                           'tcp.congestion_control="dctcp"',
                                           "network.ecn_threshold={high=20}"),
     ["network.ecn_threshold", "'low'", "training"]),
    # the field that is wrong, not a neighbour (issue 25)
    ("step-rate-too-many-flows", {}, S("background.steps=[{at=0.5, rate=1e9}]"),
     ["background.steps[0].rate", "flows"]),
    ("auto-port-above-65535", {"j.toml": 'name = "tj"\nbase = "default"\n[[training]]\n'
                               'profile = "resnet50-like-2MB"\nport = 65530\nhosts = [0, 1]\n'
                               '[[training]]\nprofile = "resnet50-like-2MB"\nhosts = [2, 3]\n'},
     ["run", "j.toml"], ["training[1].port", "not given", "65540", "give training[1].port"]),
    # a window shorter than one no-contention iteration measures nothing (issue 46): refused
    # by run, check and sweep, naming the keys to change
    ("window-shorter-than-iteration", {},
     ["run", "thesis", *[a for kv in SHORT_WINDOW for a in ("--set", kv)]],
     ["run.duration", "measurement window [0.1, 0.5] s", "567 ms", ">= 0.768 s", "run.warmup",
      "run.cooldown", "training.ratio", "run.min_iterations", "--allow-short"]),
    ("window-shorter-than-iteration-check", {"s.toml": 'base = "thesis"\nscale = 10\n[run]\n'
                                             "duration = 0.6\nwarmup = 0.1\ncooldown = 0.1\n"},
     ["check", "s.toml"], ["run.duration", "567 ms", "run.min_iterations", "--allow-short"]),
    ("window-shorter-than-iteration-sweep", {"g.toml": SHORT_GRID}, ["sweep", "g.toml"],
     ["run.duration: cell", "background.load = 0.05", "and 3 more of the 4 cells",
      "567 ms", "--allow-short"]),
    ("window-shorter-than-iteration-check-grid", {"g.toml": SHORT_GRID},
     ["check", "--sweep", "g.toml", "--json"], ["run.duration: cell", "--allow-short"]),
    # boundary searches: the [search] table, checked before anything runs
    ("search-unknown-key", {"b.toml": SEARCH + "colour = 1\n"}, ["boundary", "b.toml"],
     ["search.colour", "allowed"]),
    ("search-threshold-0", {"b.toml": SEARCH + "thresholds = [0, 0.3]\n"},
     ["boundary", "b.toml"], ["search.thresholds[0]", "> 0"]),
    ("search-threshold-negative", {"b.toml": SEARCH + "thresholds = [-0.01]\n"},
     ["boundary", "b.toml"], ["search.thresholds[0]", "> 0"]),
    ("search-thresholds-order", {"b.toml": SEARCH + "thresholds = [0.3, 0.01]\n"},
     ["boundary", "b.toml"], ["search.thresholds", "increasing"]),
    ("search-lo-above-hi", {"b.toml": SEARCH.replace("lo = 0.05", "lo = 0.5")},
     ["boundary", "b.toml"], ["search.hi", "greater than search.lo"]),
    ("search-lo-equals-hi", {"b.toml": SEARCH.replace("lo = 0.05", "lo = 0.3")},
     ["boundary", "b.toml"], ["search.hi", "greater than search.lo"]),
    ("search-tolerance-0", {"b.toml": SEARCH.replace("tolerance = 0.05", "tolerance = 0")},
     ["boundary", "b.toml"], ["search.tolerance", "> 0"]),
    ("search-tolerance-negative", {"b.toml": SEARCH.replace("tolerance = 0.05",
                                                            "tolerance = -1")},
     ["boundary", "b.toml"], ["search.tolerance", "> 0"]),
    ("search-spacing-unknown", {"b.toml": SEARCH + 'spacing = "geometric"\n'},
     ["boundary", "b.toml"], ["search.spacing", "allowed: linear, log"]),
    ("search-log-tolerance-1", {"b.toml": SEARCH.replace("tolerance = 0.05", "tolerance = 1")
                                + 'spacing = "log"\n'},
     ["boundary", "b.toml"], ["search.tolerance", "spacing", "> 1"]),
    ("search-log-lo-0", {"b.toml": SEARCH.replace("lo = 0.05", "lo = 0").replace(
        "tolerance = 0.05", "tolerance = 2") + 'spacing = "log"\n'},
     ["boundary", "b.toml"], ["search.lo", "> 0", "log"]),
    ("search-lo-string", {"b.toml": SEARCH.replace("lo = 0.05", 'lo = "low"')},
     ["boundary", "b.toml"], ["search.lo", "number"]),
    ("search-not-numeric", {"b.toml": SEARCH.replace('"background.load"',
                                                     '"background.workload"')},
     ["boundary", "b.toml"], ["search.field", "does not take a number", "numeric"]),
    ("search-unknown-field", {"b.toml": SEARCH.replace('"background.load"',
                                                       '"background.speed"')},
     ["boundary", "b.toml"], ["search.field", "unknown scenario field"]),
    ("search-field-is-axis", {"b.toml": SEARCH.replace("seed = [1]",
                                                       'seed = [1]\n"background.load" = [0.1]')},
     ["boundary", "b.toml"], ["search.field", "background.load", "axis"]),
    ("search-field-other-way", {"b.toml": SEARCH.replace("seed = [1]",
                                                         'seed = [1]\n"background.rate" = [5]')},
     ["boundary", "b.toml"], ["search.field", "background.rate", "give one of them"]),
    ("search-seed", {"b.toml": SEARCH.replace('field = "background.load"', 'field = "seed"')},
     ["boundary", "b.toml"], ["search.field", "seed", "numeric"]),
    ("search-no-seed-axis", {"b.toml": SEARCH.replace("seed = [1]", '"run.warmup" = [0.05]')},
     ["boundary", "b.toml"], ["search", "seed axis"]),
    ("search-arm-unknown", {"b.toml": SEARCH + 'arm = "high"\n'}, ["boundary", "b.toml"],
     ["search.arm", "allowed: low"]),
    ("search-max-seeds-0", {"b.toml": SEARCH + "max_seeds = 0\n"}, ["boundary", "b.toml"],
     ["search.max_seeds", ">= 1"]),
    ("search-max-undecided-negative", {"b.toml": SEARCH + "max_undecided = -1\n"},
     ["boundary", "b.toml"], ["search.max_undecided", ">= 0"]),
    ("search-max-undecided-fraction", {"b.toml": SEARCH + "max_undecided = 1.5\n"},
     ["boundary", "b.toml"], ["search.max_undecided", "integer"]),
    ("search-with-adaptive", {"b.toml": SEARCH + "[adaptive]\nmax_seeds = 3\n"},
     ["boundary", "b.toml"], ["adaptive", "search.max_seeds"]),
    ("search-with-points", {"b.toml": SEARCH.replace('timeout = "10min"\n', 'timeout = "10min"\n'
                                                     'points = [{ "run.warmup" = 0.05 }]\n')},
     ["boundary", "b.toml"], ["points", "remove [[points]]"]),
    ("search-no-training", {"b.toml": SEARCH.replace('"training.enabled" = true', "")},
     ["boundary", "b.toml"], ["search", "no training job", "training.enabled"]),
    ("search-no-training-check", {"b.toml": SEARCH.replace('"training.enabled" = true', "")},
     ["check", "b.toml"], ["search", "no training job", "thesis"]),
    ("search-missing", {"g.toml": GRID}, ["boundary", "g.toml"], ["search", "missing"]),
    ("search-run-as-sweep", {"b.toml": SEARCH}, ["sweep", "b.toml"],
     ["search", "harness boundary"]),
    ("search-map-not-sweep", {"b.toml": SEARCH, "m/x": b""},
     ["boundary", "b.toml", "-o", "s", "--map", "m"], ["--map", "not a sweep directory"]),
    # what a search's probes may make, checked before it starts (issue 48)
    ("search-hi-out-of-range", {"b.toml": SEARCH.replace("hi = 0.3", "hi = 1.5")},
     ["boundary", "b.toml"], ["search.hi", "background.load = 1.5", "< 1"]),
    ("search-lo-out-of-range", {"b.toml": SEARCH.replace("lo = 0.05", "lo = -0.5")},
     ["boundary", "b.toml"], ["search.lo", "background.load = -0.5", "> 0"]),
    ("search-int-hi-out-of-range", {"b.toml": SEARCH_WORKERS.replace("hi = 4", "hi = 40")},
     ["boundary", "b.toml"], ["search.hi", "training.workers = 40", "hosts 0..3"]),
    ("search-field-meaningless", {"b.toml": SEARCH.replace(
        '"background.load"', '"training.scheduler.partition"').replace("lo = 0.05", "lo = 1000")
        .replace("hi = 0.3", "hi = 100000").replace("tolerance = 0.05", "tolerance = 1000")},
     ["boundary", "b.toml"], ["search.field", "training.scheduler.partition", "allowed: none"]),
    ("search-field-unused", {"b.toml": SEARCH.replace('"run.duration" = 0.25', '"run.duration" '
                                                      '= 0.25\n"background.enabled" = false')},
     ["boundary", "b.toml"], ["search.field", "background.load", "changes nothing simulated"]),
    # harness check judges a search as harness boundary does: every probe's cell
    ("search-field-unused-check", {"b.toml": SEARCH.replace(
        '"run.duration" = 0.25', '"run.duration" = 0.25\n"background.enabled" = false')},
     ["check", "b.toml"], ["search.field", "background.load", "changes nothing simulated"]),
    ("search-int-hi-out-of-range-check", {"b.toml": SEARCH_WORKERS.replace("hi = 4", "hi = 40")},
     ["check", "b.toml"], ["search.hi", "training.workers = 40", "hosts 0..3"]),
    ("search-seed-axis-at-max", {"b.toml": SEARCH.replace("seed = [1]",
                                                          "seed = [9223372036854775807]")},
     ["boundary", "b.toml"], ["search.max_seeds", "seed 9223372036854775808"]),
    ("search-first-seed-invalid", {"b.toml": SEARCH.replace("seed = [1]", "seed = [-1]")},
     ["boundary", "b.toml"], ["axes.seed", "seed -1", ">= 0"]),
    ("search-axis-disables-training", {"b.toml": SEARCH.replace(
        '"training.enabled" = true\n', "").replace(
        "seed = [1]", 'seed = [1]\n"training.enabled" = [true, false]')},
     ["boundary", "b.toml"], ["axes", "training.enabled = False", "no training job"]),
    ("search-map-table-unreadable", {"b.toml": SEARCH, "m/sweep.json": MAP_RECORD,
                                     "m/deltas_mean.parquet": b"not parquet"},
     ["boundary", "b.toml", "-o", "s", "--map", "m"], ["--map", "deltas_mean.parquet"]),
    ("search-map-table-no-verdicts", {"b.toml": SEARCH, "m/sweep.json": MAP_RECORD,
                                      "m/deltas_mean.parquet": _parquet({"arm": ["low"]})},
     ["boundary", "b.toml", "-o", "s", "--map", "m"], ["--map", "lacks the column"]),
    # search grids that make no sense (issue 48)
    ("search-tolerance-below-slack", {"b.toml": SEARCH.replace("tolerance = 0.05",
                                                               "tolerance = 1e-12")},
     ["boundary", "b.toml"], ["search.tolerance", "finer than", "at least 3e-07"]),
    ("search-log-tolerance-below-slack", {"b.toml": SEARCH.replace(
        "tolerance = 0.05", "tolerance = 1.0000000001") + 'spacing = "log"\n'},
     ["boundary", "b.toml"], ["search.tolerance", "finer than", "at least 1.000001"]),
    ("search-int-tolerance-below-1", {"b.toml": SEARCH_WORKERS.replace("tolerance = 1",
                                                                       "tolerance = 0.5")},
     ["boundary", "b.toml"], ["search.tolerance", "at least 1", "whole numbers"]),
    ("search-int-log-tolerance", {"b.toml": SEARCH_WORKERS.replace(
        "tolerance = 1", "tolerance = 1.2") + 'spacing = "log"\n'},
     ["boundary", "b.toml"], ["search.tolerance", "at least 1.33333333"]),
    ("search-unused-arm", {"b.toml": SEARCH.replace(
        "low = {", 'mid = { "background.class" = "normal" }\nlow = {') + 'arm = "low"\n'},
     ["boundary", "b.toml"], ["arms", "'mid'", "every probe unused"]),
    ("search-unused-arm-check", {"b.toml": SEARCH.replace(
        "low = {", 'mid = { "background.class" = "normal" }\nlow = {') + 'arm = "low"\n'},
     ["check", "b.toml"], ["arms", "'mid'"]),
    ("search-resume-changed-search", {"b.toml": SEARCH.replace("tolerance = 0.05",
                                                               "tolerance = 0.1"),
                                      "s/grid.toml": SEARCH, "s/sweep.json": SEARCH_DIR_RECORD},
     ["boundary", "b.toml", "-o", "s", "--resume"],
     ["search.tolerance", "changed since", "0.05", "0.1", "new directory"]),
    ("search-resume-a-sweep", {"b.toml": SEARCH, "s/grid.toml": GRID,
                               "s/sweep.json": SEARCH_DIR_RECORD},
     ["boundary", "b.toml", "-o", "s", "--resume"], ["search", "holds a sweep, not a search"]),
    # an integer field's range (issue 48): said so, not "does not take a number"
    ("search-int-fractional-lo", {"b.toml": SEARCH_WORKERS.replace("lo = 2", "lo = 2.5")},
     ["boundary", "b.toml"], ["search.lo", "training.workers takes integers", "2 or 3"]),
    ("search-int-fractional-hi", {"b.toml": SEARCH_WORKERS.replace("hi = 4", "hi = 3.5")},
     ["boundary", "b.toml"], ["search.hi", "takes integers"]),
    ("dask-scheduler-malformed", {"g.toml": GRID},
     ["sweep", "g.toml", "-o", "s", "--executor", "dask", "--scheduler", "nonsense:::"],
     ["--scheduler", "not a Dask scheduler address"]),
    # harness frontier: a sweep with changes against a reference, figures only where ours are
    ("frontier-not-sweep", {"d/x": b""}, ["frontier", "d"],
     ["SWEEP_DIR", "not a sweep directory", "sweep.json"]),
    ("frontier-missing-dir", {}, ["frontier", "nope"], ["SWEEP_DIR", "does not exist"]),
    ("frontier-no-reference", {"s/sweep.json": b'{"cells": []}', "s/summary.parquet": b""},
     ["frontier", "s"], ["SWEEP_DIR", "deltas_mean.parquet", "reference"]),
    ("frontier-no-slowdown", {**SWEEP_FILES, "s/deltas_mean.parquet": _parquet(
        {"arm": ["low"], "metric": ["fct_small_mean"], "change": [-0.1]})},
     ["frontier", "s"], ["SWEEP_DIR", "no arm has an iteration-time change"]),
    ("frontier-format", {"d/x": b""}, ["frontier", "d", "--format", "gif"],
     ["'--format'", "'png', 'pdf', 'svg'"]),
    ("frontier-o-user-dir", {**SWEEP_FILES, "figs/notes.tex": b"mine"},
     ["frontier", "s", "-o", "figs"], ["-o", "did not write", "notes.tex"]),
]


# issue 48: the harness's own JSON records, damaged, in every reader (one
# reader: harness.analysis.tables.read_record): one line naming the file
DAMAGED_RECORDS = {
    "not-json": (b'{"grid": "g", "cells": [', "is not JSON"),
    "empty": (b"", "is not JSON"),
    "list": (b"[1, 2]", "holds a list, not a JSON object"),
    "string": (b'"sweep"', "holds a string, not a JSON object"),
    "no-cells": (b'{"grid": "g"}', "has no 'cells' field"),
    "cells-object": (b'{"grid": "g", "cells": {}}', "its 'cells' is an object"),
    "cell-not-object": (b'{"grid": "g", "cells": [1]}', "its cells[0] is an integer"),
    "cell-no-id": (b'{"grid": "g", "cells": [{"arm": "same", "point": {}}]}',
                   "its cells[0] has no 'id'"),
    "axes-not-names": (b'{"grid": "g", "cells": [], "axes": [1]}', "its 'axes' is not a list"),
    "not-utf8": (b"\xff\xfe{}", "is not UTF-8"),
    "deep": (b"[" * 100_000 + b"]" * 100_000, "is not JSON"),
}
_READERS = {   # argv reading s/sweep.json (SWEEP_FILES), or m/ for --map
    "frontier": ["frontier", "s"],
    "report": ["report", "s", "-o", "r.html"],
    "plot": ["plot", "s", "-o", "figs"],
    "reference": ["reference", "s", "-o", "ref"],
    "resume": ["sweep", "g.toml", "-o", "s", "--resume"],
    "map": ["boundary", "b.toml", "-o", "out", "--map", "s"],
}
RECORD_CASES = [
    (f"record-{reader}-{damage}",
     {**SWEEP_FILES, "g.toml": GRID, "b.toml": SEARCH, "s/sweep.json": content},
     argv, ["s/sweep.json", why, "restore it"])
    for damage, (content, why) in DAMAGED_RECORDS.items()
    for reader, argv in _READERS.items()
    if reader in ("frontier", "reference") or damage in ("not-json", "list", "no-cells")
] + [
    (f"record-reference-index-{damage}", {"g.toml": GRID, "ref/reference.json": content},
     ["sweep", "g.toml", "-o", "new", "--reference", "ref"],
     ["ref/reference.json", why, "restore it"])
    for damage, (content, why) in DAMAGED_RECORDS.items()
    if damage in ("not-json", "empty", "list", "not-utf8")
] + [
    ("record-reference-index-cells-list",
     {"g.toml": GRID, "ref/reference.json": b'{"grid": "g", "scale": 1, "cells": []}'},
     ["sweep", "g.toml", "-o", "new", "--reference", "ref"],
     ["ref/reference.json", "'cells' is a list"]),
    # harness reference on a boundary search's directory: said so, not "the grid changed"
    ("reference-of-a-search", {"s/sweep.json": SEARCH_DIR_RECORD, "s/grid.toml": SEARCH},
     ["reference", "s", "-o", "ref"], ["SWEEP", "boundary search", "harness sweep"]),
]

# issue 48: every writer through outdir's checks, auxiliary tables included
OUTPUT_CASES = [
    ("frontier-table-over-users-file", {**SWEEP_FILES, "s/frontier.parquet": b"mine"},
     ["frontier", "s"], ["SWEEP_DIR", "frontier.parquet", "not written by the harness"]),
    ("frontier-table-over-users-parquet",
     {**SWEEP_FILES, "s/frontier.parquet": _parquet({"mine": [1]})},
     ["frontier", "s", "-o", "figs"], ["SWEEP_DIR", "frontier.parquet", "not written"]),
    ("reference-o-name-too-long", SWEEP_FILES, ["reference", "s", "-o", "r" * 300],
     ["-o", "too long"]),
    ("reference-o-exists", {**SWEEP_FILES, "ref/x": b"mine"}, ["reference", "s", "-o", "ref"],
     ["-o", "exists", "new directory"]),
    ("alone-o-users-file", {"mine.csv": b"a,b\n1,2\n"},
     ["alone", "two-jobs", "-o", "mine.csv"], ["-o", "not written by the harness"]),
    # the sweep lock: a .lock the harness did not make is refused, untouched
    ("lock-users-file", {"g.toml": GRID, "s/.lock": b"mine"}, ["sweep", "g.toml", "-o", "s"],
     ["-o", "s/.lock", "not the harness's lock file"]),
    ("lock-users-json", {"g.toml": GRID, "s/.lock": b'{"pid": 1}'},
     ["sweep", "g.toml", "-o", "s"], ["-o", "not the harness's lock file"]),
    ("lock-users-file-resume", {"g.toml": GRID, "s/.lock": b"mine",
                                "s/sweep.json": SWEEP_FILES["s/sweep.json"]},
     ["sweep", "g.toml", "-o", "s", "--resume"], ["-o", "not the harness's lock file"]),
    ("lock-users-file-boundary", {"b.toml": SEARCH, "s/.lock": b"mine"},
     ["boundary", "b.toml", "-o", "s"], ["-o", "not the harness's lock file"]),
]
FILE_CASES += RECORD_CASES + OUTPUT_CASES

# issue 46: compare, export and plot --metric (the directories are only looked
# at: each case is refused before a table is read or anything computed)
RUN_FILES = {f"r/{name}.json": b"{}" for name in ("config", "summary", "manifest")}
LOAD_SWEEP = {  # a sweep over background.load, its cells never read
    "t/sweep.json": b'{"grid": "t", "axes": ["background.load"], "arms": ["same", "low"], '
                    b'"reference": "same", "cells": []}',
    "t/summary.parquet": _parquet({"cell": ["a", "b"], "arm": ["same", "low"],
                                   "status": ["ok", "ok"], "background.load": [0.1, 0.1]}),
    "u/sweep.json": b'{"grid": "u", "axes": ["background.load"], "arms": ["same", "low"], '
                    b'"reference": "same", "cells": []}',
    "u/summary.parquet": _parquet({"cell": ["c", "d"], "arm": ["same", "low"],
                                   "status": ["ok", "ok"], "background.load": [0.2, 0.2]}),
}
DATA_CASES = [
    ("compare-missing", RUN_FILES, ["compare", "r", "nosuch"], ["B", "nosuch", "not a directory"]),
    ("compare-not-a-run", {**RUN_FILES, "x/notes.txt": b"mine"}, ["compare", "x", "r"],
     ["A", "neither a run directory", "nor a sweep directory"]),
    ("compare-run-vs-sweep", {**RUN_FILES, **SWEEP_FILES}, ["compare", "r", "s"],
     ["B", "A is a run directory and B a sweep directory"]),
    ("compare-other-axes", {**SWEEP_FILES, **LOAD_SWEEP}, ["compare", "s", "t"],
     ["A", "neither varies nor sets background.load", "matched by their values"]),
    ("compare-no-point", LOAD_SWEEP, ["compare", "t", "u"],
     ["B", "no point", "background.load"]),
    ("compare-o-users-file", {**RUN_FILES, "mine.csv": b"a\n1\n"},
     ["compare", "r", "r", "-o", "mine.csv"], ["-o", "not written by the harness"]),
    ("compare-o-suffix", RUN_FILES, ["compare", "r", "r", "-o", "out.xlsx"],
     ["-o", ".csv or .parquet"]),
    ("export-format", RUN_FILES, ["export", "r", "--format", "xlsx", "-o", "out"],
     ["--format", "'xlsx'", "csv, parquet"]),
    ("export-not-a-run", {"x/notes.txt": b"mine"}, ["export", "x", "-o", "out"],
     ["DIR", "neither a run directory"]),
    ("export-o-exists", {**RUN_FILES, "out/mine.csv": b"a\n1\n"}, ["export", "r", "-o", "out"],
     ["-o", "exists", "new directory"]),
    ("export-o-empty", {**SWEEP_FILES}, ["export", "s", "-o", ""], ["-o", "new directory"]),
    ("plot-metric-unknown", SWEEP_FILES, ["plot", "s", "--metric", "fct_tiny_p99"],
     ["--metric", "fct_tiny_p99", "allowed", "iteration_time", "fct_small_mean"]),
    ("plot-metric-on-a-run", RUN_FILES, ["plot", "r", "--metric", "iteration_time"],
     ["--metric", "sweep directories"]),
    ("plot-metric-and-cell", SWEEP_FILES, ["plot", "s", "--metric", "iteration_time",
                                           "--cell", "a"], ["--metric", "--cell"]),
    ("plot-metric-twice-one-unknown", SWEEP_FILES,
     ["plot", "s", "--metric", "iteration_time", "--metric", "fct_tiny_p99"],
     ["--metric", "fct_tiny_p99", "allowed"]),
]
FILE_CASES += DATA_CASES

# issue 65: classes of the newest paths (each fails on the code before it)
NEWEST_CASES = [
    # 5: the queue sampler's memory over every egress together (std::bad_alloc after the run)
    ("queue-samples-memory", {}, ["check", "--set", 'topology.file="leaf-spine"', "--set",
                                  "topology.hosts_per_leaf=200", "--set",
                                  'run.queue_samples={interval="1us", direction="both"}'],
     ["run.queue_samples.interval", "GiB in memory", "fewer egresses"]),
    # 2: a service's port taken by the background (NS_FATAL after the start)
    ("service-port-background", {}, ["check", "--set", 'topology.file="single-tor-1g"', "--set",
                                     'service=[{kind="rpc", qps=10, port=9000}]'],
     ["service[0].port", "background.port"]),
    # 1: a role left to the placement rule beside one given (a traceback in check)
    ("service-roles-collide", {}, ["check", "--set", 'topology.file="single-tor-1g"', "--set",
                                   'service=[{kind="stream", hosts=[3], bitrate="1Mbps"}]'],
     ["service[0].destination", "no destination left"]),
    # 3: a deadline below the farthest worker's round trip (every query missed it)
    ("service-deadline-far-worker", {}, ["check", "--set", 'topology.file="leaf-spine"', "--set",
                                         'service=[{kind="query", aggregators=[0], '
                                         'workers=[1, 5], rate=10, deadline="80us"}]'],
     ["service[0].deadline", "no-contention"]),
    # the queue sampler: an egress that is no link's end
    ("queue-samples-no-link", {}, ["check", "--set", 'topology.file="leaf-spine"', "--set",
                                   'run.queue_samples={interval="1ms", egresses=[["s0", "s1"]]}'],
     ["run.queue_samples.egresses[0]", "no link joins"]),
    # a custom link of another shape
    ("topology-custom-link-shape", {"t.toml": b'kind = "custom"\nhosts = 2\nswitches = 1\n'
                                    b'link_rate = "1Gbps"\nlink_delay = "10us"\n'
                                    b'links = [["h0", "s0", "2Gbps"], ["h1", "s0"]]\n'},
     ["check", "--set", 'topology.file="t.toml"'], ["topology.links[0]", "[a, b, rate, delay]"]),
    ("tcp-timers-unknown", {}, ["check", "--set", 'tcp.timers="linux"'],
     ["tcp.timers", "network, ns3"]),
    ("tcp-segment-over-mtu", {}, ["check", "--set", "tcp.segment_size=1449"],
     ["tcp.segment_size", "at most 1448"]),
    # 9: the short-window refusal in every command that simulates (alone and
    # boundary ran every cell and reported "no measurement" with exit 0)
    ("alone-short-window", {}, ["alone", "two-jobs", "--set", "run.duration=0.01"],
     ["run.duration", "shorter than one training iteration", "--allow-short"]),
    ("boundary-short-window", {"s.toml": SHORT_SEARCH.encode()}, ["boundary", "s.toml"],
     ["run.duration", "--allow-short"]),
    # 7: a table that is not what its name says (a KeyError or a misleading
    # line after reading): its file and the columns it lacks
    ("compare-run-table-of-another", {**RUN_FILES, **{k.replace("r/", "q/"): v
                                                      for k, v in RUN_FILES.items()},
                                      "r/flows.parquet": _parquet({"link": [0], "band": [1]}),
                                      "q/flows.parquet": _parquet({"link": [0], "band": [1]})},
     ["compare", "r", "q"], ["flows.parquet", "not the flows table", "'size_class'"]),
    ("compare-sweep-summary-no-arm", {**SWEEP_FILES, "s/summary.parquet": _parquet(
        {"cell": ["a", "b"], "status": ["ok", "ok"]})}, ["compare", "s", "s"],
     ["summary.parquet", "lacks the column(s) 'arm'"]),
    ("plot-sweep-deltas-of-another", {**SWEEP_FILES, "s/deltas_mean.parquet": _parquet(
        {"cell": ["a"], "status": ["ok"]})}, ["plot", "s", "--metric", "iteration_time"],
     ["deltas_mean.parquet", "'metric'"]),
]
FILE_CASES += NEWEST_CASES

# issue 48: the environment variables, one rule (harness.config.environment):
# (id, variables, argv, must contain); a file named "file" is made first
_SWITCHES = ("DDNN_HARNESS_STOCK_TCP", "DDNN_HARNESS_TCP_CROSSCHECK", "DDNN_HARNESS_NO_PCH",
             "DDNN_HARNESS_HUGE_PAGES")
ENV_CASES = [
    *[(f"env-{name}-{value}", {name: value}, ["run"],
       [name, "expected 1 or 0", "on/off", f"got {value!r}"])
      for name in _SWITCHES for value in ("maybe", "2", "of")],
    ("env-switch-any-command", {"DDNN_HARNESS_STOCK_TCP": "maybe"}, ["list"],
     ["DDNN_HARNESS_STOCK_TCP", "expected 1 or 0"]),
    ("env-results-file", {"DDNN_HARNESS_RESULTS": "file"}, ["run"],
     ["DDNN_HARNESS_RESULTS", "a file, not a directory"]),
    ("env-results-under-file", {"DDNN_HARNESS_RESULTS": "file/results"},
     ["sweep", "quick"], ["DDNN_HARNESS_RESULTS", "a file, not a directory"]),
    ("env-results-unknown-user", {"DDNN_HARNESS_RESULTS": "~no-such-user-48/results"}, ["run"],
     ["DDNN_HARNESS_RESULTS", "no-such-user-48", "not a user here"]),
    ("env-results-proc", {"DDNN_HARNESS_RESULTS": "/proc/results"}, ["run"],
     ["DDNN_HARNESS_RESULTS", "cannot write in"]),
    ("env-cache-file", {"DDNN_HARNESS_CACHE": "file"}, ["run"],
     ["DDNN_HARNESS_CACHE", "a file, not a directory"]),
    ("env-cache-unknown-user", {"DDNN_HARNESS_CACHE": "~no-such-user-48"}, ["sweep", "quick"],
     ["DDNN_HARNESS_CACHE", "not a user here"]),
    ("env-cache-proc", {"DDNN_HARNESS_CACHE": "/proc/cache"}, ["alone", "two-jobs"],
     ["DDNN_HARNESS_CACHE", "cannot write in"]),
    ("env-xdg-cache-file", {"XDG_CACHE_HOME": "file", "DDNN_HARNESS_CACHE": ""}, ["run"],
     ["XDG_CACHE_HOME", "a file, not a directory"]),
    # a missing compiler is the environment's: exit 2 and one line, not 3
    ("env-cxx-missing", {"CXX": "no-such-compiler-48"}, ["run"],
     ["CXX", "no-such-compiler-48", "not found"]),
]


# issue 51: the ns-3 engine (DDNN_HARNESS_NS3_BUILD, `harness engine use/build`): a
# build folder as empty files, laid out as ns-3 lays one out
def _build_files(version="3.44", suffix="-optimized", leave_out=(),
                 library: bytes = b"") -> dict[str, bytes]:
    from harness.engine.pch_key import NS3_LIBRARIES, NS3_MODULES

    files = {f"b/lib/libns{version}-{m}{suffix}.so": library for m in NS3_LIBRARIES
             if m not in leave_out}
    files |= {f"b/include/ns3/{m}-module.h": b"" for m in NS3_MODULES if m not in leave_out}
    return files


# a shared library's ELF header for this machine (this Python's, e_type 3)
_OWN = Path(sys.executable).resolve().read_bytes()[:20]
_LIBRARY = _OWN[:16] + (3).to_bytes(2, "little") + _OWN[18:20] + bytes(44)
_BUILD = "DDNN_HARNESS_NS3_BUILD"
ENGINE_CASES = [  # (id, variables, files, argv, must contain)
    ("engine-env-file", {_BUILD: "file"}, {"file": b"mine"}, ["run"],
     [_BUILD, "'file' is not a directory", "harness engine build"]),
    ("engine-env-missing", {_BUILD: "nowhere"}, {}, ["sweep", "quick"],
     [_BUILD, "is not a directory"]),
    ("engine-env-not-a-build", {_BUILD: "b"}, {"b/x": b""}, ["run"],
     [_BUILD, "not an ns-3 build", "include/ns3"]),
    ("engine-env-other-version", {_BUILD: "b"}, _build_files("3.43"), ["alone", "two-jobs"],
     [_BUILD, "ns-3.43", "needs ns-3.44"]),
    ("engine-env-debug-profile", {_BUILD: "b"}, _build_files(suffix="-debug"), ["run"],
     [_BUILD, "debug build", "optimized or release"]),
    ("engine-env-missing-modules", {_BUILD: "b"},
     _build_files(leave_out=("internet", "bridge")), ["run"],
     [_BUILD, "lacks the ns-3 modules bridge, internet"]),
    ("engine-env-version", {_BUILD: "b"}, _build_files(leave_out=("core",)), ["--version"],
     [_BUILD, "no ns-3 core library"]),
    ("engine-use-incomplete", {}, _build_files(leave_out=("applications",)),
     ["engine", "use", "b"], ["DIR", "lacks the ns-3 modules applications"]),
    ("engine-use-not-a-build", {}, {"b/x": b""}, ["engine", "use", "b"],
     ["DIR", "not an ns-3 build"]),
    # issue 65 class 6: libraries that are text files with the right names
    # (accepted, then a link error after compiling)
    ("engine-use-text-libraries", {}, {k: (b"not a library" if k.endswith(".so") else v)
                                       for k, v in _build_files().items()},
     ["engine", "use", "b"], ["DIR", "not a shared library", "harness engine build"]),
    ("engine-env-text-libraries", {_BUILD: "b"}, _build_files(), ["run"],
     [_BUILD, "not a shared library"]),
    # ... and the settings folder a file (a traceback)
    ("engine-use-settings-folder-a-file", {"XDG_CONFIG_HOME": "cfg"},
     {"cfg": b"mine", **_build_files(library=_LIBRARY)}, ["engine", "use", "b"],
     ["XDG_CONFIG_HOME", "is a file, not a folder"]),
    ("engine-build-not-a-source", {}, {"src/x": b""}, ["engine", "build", "src"],
     ["SRC", "not an ns-3 source tree"]),
    ("engine-build-other-version", {}, {"src/CMakeLists.txt": b"", "src/VERSION": b"3.45\n"},
     ["engine", "build", "src"], ["SRC", "ns-3.45", "needs ns-3.44"]),
    ("engine-build-output-not-ours", {},
     {"src/CMakeLists.txt": b"", "src/VERSION": b"3.44\n", "out/mine.txt": b"mine"},
     ["engine", "build", "src", "-o", "out"], ["--output", "not empty", "nothing in it is touched"]),
    ("engine-build-profile", {}, {"src/CMakeLists.txt": b"", "src/VERSION": b"3.44\n"},
     ["engine", "build", "src", "--profile", "debug"], ["--profile", "optimized", "release"]),
]


@pytest.mark.parametrize("variables, files, argv, says", [c[1:] for c in ENGINE_CASES],
                         ids=[c[0] for c in ENGINE_CASES])
def test_a_bad_engine_is_one_line_naming_the_setting(invoke, monkeypatch, tmp_path, variables,
                                                     files, argv, says):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no kept choice
    monkeypatch.delenv(_BUILD, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    result, before, after = invoke(argv, files)
    _assert_one_line_error(result, says)
    assert after == before


@pytest.mark.parametrize("variables, argv, says", [c[1:] for c in ENV_CASES],
                         ids=[c[0] for c in ENV_CASES])
def test_a_bad_environment_variable_is_one_line_naming_it(invoke, monkeypatch, tmp_path,
                                                           variables, argv, says):
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    result, before, after = invoke(argv, {"file": b"mine"})
    _assert_one_line_error(result, says)
    assert after == before

@pytest.fixture
def invoke(tmp_path, monkeypatch):
    """Run `harness ARGS` in-process in an empty temporary directory; ns-3
    must not be loaded."""
    from harness.engine import ns3

    def no_ns3(*args, **kwargs):
        raise AssertionError("ns-3 was started for bad input")

    monkeypatch.setattr(ns3, "load", no_ns3)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DDNN_HARNESS_RESULTS", raising=False)
    runner = CliRunner()

    def run(argv: list[str], files: dict[str, bytes | str] | None = None):
        for name, content in (files or {}).items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content.encode() if isinstance(content, str) else content)
        before = _tree(tmp_path)
        result = runner.invoke(cli.main, argv, prog_name="harness")
        return result, before, _tree(tmp_path)

    return run


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>"
            for p in sorted(root.rglob("*"))}


def _assert_one_line_error(result, says: list[str]) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert result.stdout == "", result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for text in says:
        assert text in lines[0], (text, lines[0])
    assert "Traceback" not in result.output


@pytest.mark.parametrize("argv, says", [c[1:] for c in SET_CASES],
                         ids=[c[0] for c in SET_CASES])
def test_bad_setting_is_one_line_naming_the_field(invoke, argv, says):
    result, before, after = invoke(argv)
    _assert_one_line_error(result, says)
    assert after == before  # nothing written


@pytest.mark.parametrize("files, argv, says", [c[1:] for c in FILE_CASES],
                         ids=[c[0] for c in FILE_CASES])
def test_bad_file_or_option_is_one_line_naming_it(invoke, files, argv, says):
    result, before, after = invoke(argv, files)
    _assert_one_line_error(result, says)
    assert after == before  # nothing written, nothing of the user's touched


def test_the_matrix_covers_the_issue(capsys):
    """The cases named in issue 14, and the count reported with it."""
    ids = {c[0] for c in SET_CASES} | {c[0] for c in FILE_CASES}
    named = {"rate-inf", "duration-inf", "duration-nan", "ratio-inf", "link-rate-inf",
             "link-rate-1e400Gbps", "link-delay-nan", "cdf-nan", "duration-1e12",
             "link-rate-1.2.3Gbps", "partition-1.2.3KB", "duration-0.3..s",
             "scenario-not-utf8", "grid-not-utf8", "grid-scenario-42", "grid-set-3",
             "grid-axes-3", "grid-arms-list", "buffer-2^40", "cwnd-1e11", "interval-0ns",
             "interval-1ns", "run-o-user-dir", "run-o-under-file", "run-o-proc", "run-o-dot"}
    assert named <= ids, named - ids
    with capsys.disabled():
        print(f"\nbad-input matrix: {len(SET_CASES) + len(FILE_CASES)} cases")


def test_the_cli_in_a_fresh_process_reports_without_traceback(tmp_path):
    """One case end to end in a real process (exit status, stderr, no ns-3)."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--set",
                           "topology.link_rate=inf"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(cli.__file__).parents[1])})
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: topology.link_rate: must be a finite number (got inf)"]
    assert not list(tmp_path.iterdir())


def test_a_bad_huge_pages_switch_stops_the_command_with_one_line(tmp_path):
    """DDNN_HARNESS_HUGE_PAGES (harness.engine.memory), checked by the
    `harness` entry before it re-executes itself or imports ns-3."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "harness.cli", "run"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(cli.__file__).parents[1]),
                               "DDNN_HARNESS_HUGE_PAGES": "maybe"})
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: DDNN_HARNESS_HUGE_PAGES: expected 1 or 0 (also true/false, yes/no, on/off); "
        "got 'maybe'"]
    assert not list(tmp_path.iterdir())
