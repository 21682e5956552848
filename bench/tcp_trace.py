"""`python -m bench.tcp_trace [SCENARIO] [--set KEY=VALUE]... [-o CSV]`: run one
scenario and count what TCP did on the training job's connections: loss
recoveries entered by a retransmission timeout (CA_LOSS) and by duplicate
ACKs (CA_RECOVERY), per sending socket, in the measurement window; and the
congestion window the senders held (time-weighted mean, in segments).

A diagnostic, not part of a run's tables: it explains a difference between
two runs (e.g. one scenario at scale 1 and at scale 10) by how their TCP
behaved. The counting is C++ (compiled into the process at start-up), hooked
on ns-3's `CongState` and `CongestionWindow` trace sources of every TCP
socket that exists right after the applications started, which are the
training job's (background flows open theirs later); no Python per event.
"""

from __future__ import annotations

import argparse
import io
import sys

import pandas as pd

TRACER = r"""
#include "ns3/core-module.h"
#include "ns3/tcp-socket-state.h"
#include <map>
#include <sstream>

namespace ddnn_bench
{
// One sending socket's record: congestion-state entries and its window over time.
struct SocketTrace
{
    uint64_t timeouts = 0;        // entries into CA_LOSS (a retransmission timeout)
    uint64_t recoveries = 0;      // entries into CA_RECOVERY (duplicate ACKs)
    double cwndSegmentNs = 0;     // integral of cwnd (segments) over time, in the window
    uint64_t cwndChanges = 0;     // a receiver's window never changes after the first
    int64_t lastNs = -1;
    double lastCwnd = 0;
};

class TcpTracer
{
  public:
    TcpTracer(int64_t fromNs, uint32_t segmentSize)
        : m_fromNs(fromNs), m_segment(segmentSize) {}

    void Connect()
    {
        ns3::Config::Connect("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/CongState",
                             ns3::MakeCallback(&TcpTracer::CongState, this));
        ns3::Config::Connect("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/CongestionWindow",
                             ns3::MakeCallback(&TcpTracer::Cwnd, this));
    }

    // context: "/NodeList/3/$ns3::TcpL4Protocol/SocketList/1/CongState"
    std::string Csv(int64_t toNs)
    {
        std::ostringstream out;
        out << "socket,timeouts,recoveries,mean_cwnd_segments,cwnd_changes\n";
        const double span = double(toNs - m_fromNs);
        for (auto& [context, t] : m_sockets)
        {
            if (t.lastNs >= 0 && toNs > t.lastNs)
                t.cwndSegmentNs += t.lastCwnd * double(toNs - std::max(t.lastNs, m_fromNs));
            out << SocketName(context) << "," << t.timeouts << "," << t.recoveries << ","
                << (span > 0 ? t.cwndSegmentNs / span : 0.0) << "," << t.cwndChanges << "\n";
        }
        return out.str();
    }

  private:
    static std::string SocketName(const std::string& context)
    {
        // "/NodeList/3/$ns3::TcpL4Protocol/SocketList/1/..." -> "3/1"
        std::istringstream parts(context);
        std::string part, node, socket, previous;
        while (std::getline(parts, part, '/'))
        {
            if (previous == "NodeList")
                node = part;
            if (previous == "SocketList")
                socket = part;
            previous = part;
        }
        return node + "/" + socket;
    }

    void CongState(std::string context, ns3::TcpSocketState::TcpCongState_t,
                   ns3::TcpSocketState::TcpCongState_t now)
    {
        if (ns3::Simulator::Now().GetNanoSeconds() < m_fromNs)
            return;
        auto& t = m_sockets[context.substr(0, context.rfind('/'))];
        t.timeouts += now == ns3::TcpSocketState::CA_LOSS;
        t.recoveries += now == ns3::TcpSocketState::CA_RECOVERY;
    }

    void Cwnd(std::string context, uint32_t, uint32_t bytes)
    {
        const int64_t now = ns3::Simulator::Now().GetNanoSeconds();
        auto& t = m_sockets[context.substr(0, context.rfind('/'))];
        if (t.lastNs >= 0 && now > m_fromNs)
            t.cwndSegmentNs += t.lastCwnd * double(now - std::max(t.lastNs, m_fromNs));
        t.cwndChanges += t.lastNs >= 0;
        t.lastNs = now;
        t.lastCwnd = double(bytes) / m_segment;
    }

    int64_t m_fromNs;
    uint32_t m_segment;
    std::map<std::string, SocketTrace> m_sockets;
};
} // namespace ddnn_bench
"""


def trace(scenario: str | None, sets: list[str]) -> tuple[pd.DataFrame, dict]:
    """Per training sender socket: timeouts, recoveries and mean cwnd in the
    measurement window; and the run's mean iteration time and window."""
    from harness.engine import ns3, planning, simulation
    from harness.config.scenario import load_scenario

    sc = load_scenario(scenario, sets)
    p = planning.plan(sc)
    ns = ns3.load(quiet=True)
    import cppyy

    cppyy.cppdef(TRACER)
    net = simulation._Network(ns, p)
    # the applications start at 0: after the first nanoseconds their sockets exist
    ns.Simulator.Stop(ns.NanoSeconds(1000))
    ns.Simulator.Run()
    tracer = cppyy.gbl.ddnn_bench.TcpTracer(round(p.run.warmup * 1e9), sc.tcp.segment_size)
    tracer.Connect()
    timing = simulation._run_with_progress(ns, p.run, progress=None,
                                           job=net.job if p.run.min_iterations else None,
                                           recipe=net.recipe)
    end_ns = round(timing["window"][1] * 1e9)
    table = pd.read_csv(io.StringIO(str(tracer.Csv(end_ns))))
    iterations = pd.read_csv(io.StringIO(str(net.job.IterationsCsv())))
    window = timing["window"]
    measured = iterations[(iterations.start_ns >= window[0] * 1e9)
                          & (iterations.end_ns <= window[1] * 1e9)]
    info = {"window_s": window, "iterations": len(measured) // max(1, measured.worker.nunique()),
            "mean_iteration_s": (measured.end_ns - measured.start_ns).mean() / 1e9,
            "events": timing["events"], "cpu_s": timing["cpu_s"]}
    ns.Simulator.Destroy()
    return table[table.cwnd_changes > 0], info   # senders only


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.tcp_trace", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", nargs="?", help="scenario file or built-in name")
    parser.add_argument("--set", dest="sets", action="append", default=[],
                        metavar="KEY=VALUE", help="override a scenario field (repeatable)")
    parser.add_argument("-o", "--output", help="also write the per-socket table to this CSV")
    args = parser.parse_args(argv)
    table, info = trace(args.scenario, args.sets)
    if args.output:
        table.to_csv(args.output, index=False)
    seconds = info["window_s"][1] - info["window_s"][0]
    print(f"window {info['window_s'][0]:.3f}-{info['window_s'][1]:.3f} s, "
          f"{info['iterations']} iterations, mean {info['mean_iteration_s'] * 1e3:.1f} ms, "
          f"{info['events']:,} events, {info['cpu_s']:.0f} CPU-s")
    print(f"{len(table)} sending sockets; per socket per second of window: "
          f"timeouts {table.timeouts.sum() / len(table) / seconds:.1f}, "
          f"recoveries {table.recoveries.sum() / len(table) / seconds:.1f}; "
          f"mean cwnd {table.mean_cwnd_segments.mean():.1f} segments")
    print(table.to_string(index=False), file=sys.stderr)


if __name__ == "__main__":
    main()
