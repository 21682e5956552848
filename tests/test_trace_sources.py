"""The modules' trace sources fire once per row their CSV tables record.

What the harness reads as CSV at the end of a run is also offered as ns-3
trace sources, so that a user's own ns-3 program can hook it. Here a small
C++ counter (compiled into the process with cppyy.cppdef: no Python per
event) is connected with TraceConnectWithoutContext to FlowLog's
`Completed`, a job's `TransferCompleted` and QueueTracker's `Drop`; after a
short run its counts must equal the tables' rows.
"""

from __future__ import annotations

import io

import pandas as pd
import pytest

from conftest import compiled_class, small_plan, with_flows

COUNTER = r"""
#include "ns3/core-module.h"
#include "flow-log.h"
#include "ps-job.h"
#include "queue-tracker.h"
#include "ring-allreduce-job.h"
#include "sharded-job.h"

namespace ddnn_test
{
// What the trace sources reported: calls, and sums to compare with the tables.
struct TraceCounter
{
    uint64_t flows = 0, flowBytes = 0;
    int64_t flowStartNs = 0, flowFctNs = 0;
    uint64_t transfers = 0, transferBytes = 0;
    int64_t transferNs = 0; // sum of end - start
    uint64_t drops = 0, dropBytes = 0;

    void Flow(uint64_t, uint64_t size, ns3::Time start, ns3::Time fct)
    {
        flows++;
        flowBytes += size;
        flowStartNs += start.GetNanoSeconds();
        flowFctNs += fct.GetNanoSeconds();
    }

    void Transfer(uint64_t bytes, ns3::Time start, ns3::Time end)
    {
        transfers++;
        transferBytes += bytes;
        transferNs += (end - start).GetNanoSeconds();
    }

    void Ring(uint32_t, uint64_t, uint32_t, uint32_t, uint32_t, uint64_t bytes,
              ns3::Time start, ns3::Time end)
    {
        Transfer(bytes, start, end);
    }

    void Ps(uint32_t, uint32_t, bool, const ns3::PsChunk& chunk, bool, ns3::Time start,
            ns3::Time end)
    {
        Transfer(chunk.bytes, start, end);
    }

    void Drop(uint32_t, uint32_t, uint32_t, uint32_t, ns3::Ptr<const ns3::QueueDiscItem> item)
    {
        drops++;
        dropBytes += item->GetSize();
    }

    bool ConnectFlows(ns3::Ptr<ns3::FlowLog> log)
    {
        return log->TraceConnectWithoutContext("Completed",
                                               ns3::MakeCallback(&TraceCounter::Flow, this));
    }

    bool ConnectDrops(ns3::Ptr<ns3::QueueTracker> tracker)
    {
        return tracker->TraceConnectWithoutContext("Drop",
                                                   ns3::MakeCallback(&TraceCounter::Drop, this));
    }

    bool ConnectJob(ns3::Ptr<ns3::TrainingJob> job)
    {
        if (ns3::DynamicCast<ns3::PsJob>(job))
        {
            return job->TraceConnectWithoutContext("TransferCompleted",
                                                   ns3::MakeCallback(&TraceCounter::Ps, this));
        }
        // RingAllreduceJob and ShardedJob share the signature's shape
        return job->TraceConnectWithoutContext("TransferCompleted",
                                               ns3::MakeCallback(&TraceCounter::Ring, this));
    }
};
} // namespace ddnn_test
"""


@pytest.fixture(scope="module")
def counter_class():
    return compiled_class("ddnn_test", "TraceCounter", COUNTER)


def run_counted(p, counter_class):
    """Run plan `p` with a counter on its trace sources; the counter and the raw CSVs."""
    from harness.engine import ns3, simulation

    ns = ns3.load(quiet=True)
    net = simulation._Network(ns, p)
    counter = counter_class()
    if net.flow_log is not None:
        assert counter.ConnectFlows(net.flow_log)
    assert counter.ConnectDrops(net.queues)
    if net.job is not None:
        assert counter.ConnectJob(net.job)
    simulation._run_with_progress(ns, p.run, False, None, net.recipe)
    csv = {"flows": net.flow_log.ToCsv() if net.flow_log is not None else None,
           "queues": net.queues.ToCsv(),
           "transfers": net.job.TransfersCsv() if net.job is not None else None}
    ns.Simulator.Destroy()
    del net
    return counter, {k: pd.read_csv(io.StringIO(str(v))) for k, v in csv.items() if v is not None}


def test_flow_completed_fires_once_per_completed_flow(counter_class):
    p = with_flows(small_plan("run.duration=0.05", "run.warmup=0", "run.cooldown=0.001"), [
        dict(start_ns=1_000_000, src=0, dst=1, size=200_000),
        dict(start_ns=2_000_000, src=2, dst=1, size=300_000),
        dict(start_ns=3_000_000, src=0, dst=3, size=100_000),
        dict(start_ns=49_900_000, src=3, dst=2, size=50_000_000),  # does not complete
    ])
    counter, t = run_counted(p, counter_class)
    done = t["flows"][t["flows"].end_ns >= 0]
    assert len(done) == 3 and len(t["flows"]) == 4
    assert counter.flows == len(done)
    assert counter.flowBytes == done["size"].sum()
    assert counter.flowStartNs == done.start_ns.sum()
    assert counter.flowFctNs == (done.end_ns - done.start_ns).sum()
    dropped = t["queues"].dropped_packets.sum()
    assert counter.drops == dropped
    assert counter.dropBytes == t["queues"].dropped_bytes.sum()


@pytest.mark.parametrize("scenario, sets", [
    ("thesis-training-alone", ["scale=10", "run.duration=0.4"]),  # ring allreduce
    ("ps-small", ["run.duration=0.2"]),
    ("sharded", ["run.duration=0.2"]),
])
def test_transfer_completed_fires_once_per_finished_transfer(counter_class, scenario, sets):
    from harness.config.scenario import load_scenario
    from harness.engine.planning import plan

    p = plan(load_scenario(scenario, [*sets, "run.warmup=0", "run.cooldown=0.001"]))
    counter, t = run_counted(p, counter_class)
    rows = t["transfers"]
    done = rows[rows.end_ns >= 0]
    assert len(done) > 0
    assert counter.transfers == len(done)
    assert counter.transferBytes == done["bytes"].sum()
    assert counter.transferNs == (done.end_ns - done.start_ns).sum()
    if "flows" in t:
        assert counter.flows == (t["flows"].end_ns >= 0).sum()
    assert counter.drops == t["queues"].dropped_packets.sum()
