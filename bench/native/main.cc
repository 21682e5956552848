// The harness's scenario without Python: builds it from the recipe the
// harness writes for one plan (harness/engine/recipe.py), with the same C++ class
// the harness builds from (ns3-modules/scenario/scenario-recipe), runs it, and
// prints what it did as "key value" lines: events executed, the sizes of the
// result tables, and the cost of the simulation phase (wall and CPU time,
// user-space instructions when the CPU has a PMU; -1 otherwise).
//
//   bench-native --recipe=run.recipe [--tables=DIR]
//
// --tables writes the raw result tables (FlowLog::ToCsv and friends) as CSV
// files into DIR, so a run can be compared with the harness's, row by row.
//
// Under `valgrind --tool=callgrind --instr-atstart=no` only the simulation
// phase is instrumented (the same marker as bench/native/marker.c, which the
// harness side calls), so callgrind counts that phase's instructions exactly.
//
//   bench-native --recipe=run.recipe --window-from=0.03 --window-to=0.033
//
// instruments only the simulated seconds [from, to) instead, stops the run at
// `to` and prints the events executed in between (window_events): the cost per
// event of a large fabric's steady state, without simulating under valgrind
// what comes before at full cost or anything after.

#include "ddnn-modules.h"
#include "tcp-fastpath.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/traffic-control-module.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

/// User-space instructions retired by this thread (perf_event_open), when
/// the machine has a hardware counter for them.
class InstructionCounter
{
  public:
    InstructionCounter()
    {
        perf_event_attr attr{};
        attr.type = PERF_TYPE_HARDWARE;
        attr.size = sizeof(attr);
        attr.config = PERF_COUNT_HW_INSTRUCTIONS;
        attr.disabled = 1;
        attr.exclude_kernel = 1;
        attr.exclude_hv = 1;
        m_fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
    }

    ~InstructionCounter()
    {
        if (m_fd >= 0)
        {
            close(m_fd);
        }
    }

    InstructionCounter(const InstructionCounter&) = delete;
    InstructionCounter& operator=(const InstructionCounter&) = delete;

    void Start()
    {
        if (m_fd >= 0)
        {
            ioctl(m_fd, PERF_EVENT_IOC_RESET, 0);
            ioctl(m_fd, PERF_EVENT_IOC_ENABLE, 0);
        }
    }

    /// Instructions since Start(), or -1 without a counter.
    int64_t Stop()
    {
        if (m_fd < 0)
        {
            return -1;
        }
        ioctl(m_fd, PERF_EVENT_IOC_DISABLE, 0);
        uint64_t count = 0;
        return read(m_fd, &count, sizeof(count)) == sizeof(count) ? static_cast<int64_t>(count)
                                                                  : -1;
    }

  private:
    int m_fd;
};

/// Wall, user and system CPU seconds of this process.
struct Clocks
{
    double wall;
    double user;
    double system;

    static Clocks Now()
    {
        rusage usage{};
        getrusage(RUSAGE_SELF, &usage);
        auto seconds = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec * 1e-6; };
        return {std::chrono::duration<double>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count(),
                seconds(usage.ru_utime),
                seconds(usage.ru_stime)};
    }
};

/// Rows of a CSV table (lines after the header).
uint64_t
CountRows(const std::string& csv)
{
    uint64_t lines = 0;
    for (char c : csv)
    {
        lines += c == '\n';
    }
    return lines > 0 ? lines - 1 : 0;
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string recipePath;
    std::string tablesDir;
    CommandLine cmd(__FILE__);
    cmd.AddValue("recipe", "recipe file written by harness/engine/recipe.py", recipePath);
    cmd.AddValue("tables", "directory to write the raw result tables into", tablesDir);
    double windowFrom = -1;
    double windowTo = -1;
    cmd.AddValue("window-from", "instrument from this simulated second (callgrind)", windowFrom);
    cmd.AddValue("window-to", "instrument until this simulated second, and stop there", windowTo);
    cmd.Parse(argc, argv);
    NS_ABORT_MSG_IF(recipePath.empty(), "--recipe=PATH is required");
    const bool window = windowFrom >= 0 || windowTo >= 0;
    NS_ABORT_MSG_IF(window && !(0 <= windowFrom && windowFrom < windowTo),
                    "--window-from and --window-to go together, 0 <= from < to");

    // The TCP fast path must be first in the program's symbol scope (linked
    // first, --no-as-needed), as the harness loads it: same code, same speed.
    // DDNN_BENCH_STOCK_TCP: ns-3's own TcpTxBuffer, what an expert's program runs.
#ifndef DDNN_BENCH_STOCK_TCP
    int fastPathMembers = 0;
    const int fastPathInForce = ddnn_tcp_fastpath_in_force(&fastPathMembers);
    NS_ABORT_MSG_IF(fastPathInForce != fastPathMembers,
                    "the TCP fast path is not in force (" << fastPathInForce << " of "
                                                          << fastPathMembers
                                                          << " members): link it first");
#else
    const int fastPathInForce = 0;
#endif

    std::ifstream file(recipePath);
    NS_ABORT_MSG_IF(!file, "cannot read " << recipePath);
    std::stringstream text;
    text << file.rdbuf();
    Ptr<ScenarioRecipe> scenario = CreateObject<ScenarioRecipe>();
    scenario->Apply(text.str()); // aborts on a recipe of another format
    const Time duration = scenario->GetStopTime();
    NS_ABORT_MSG_IF(duration.IsZero(), recipePath << " has no stop directive");
    const Ptr<TrainingJob> job = scenario->GetNJobs() > 0 ? scenario->GetJob(0) : nullptr;
    const Ptr<FlowLog> flowLog = scenario->GetFlowLog();

    InstructionCounter instructions;
    const Clocks before = Clocks::Now();
    instructions.Start();
    // The window's ends are events of their own, at the window's times.
    struct
    {
        uint64_t from = 0;
        uint64_t to = 0;
    } windowEvents;
    if (window)
    {
        NS_ABORT_MSG_IF(Seconds(windowTo) > duration,
                        "--window-to is past the run's end, " << duration.GetSeconds() << " s");
        Simulator::Schedule(Seconds(windowFrom), [&windowEvents]() {
            windowEvents.from = Simulator::GetEventCount();
            CALLGRIND_START_INSTRUMENTATION;
        });
        Simulator::Schedule(Seconds(windowTo), [&windowEvents]() {
            CALLGRIND_STOP_INSTRUMENTATION;
            windowEvents.to = Simulator::GetEventCount();
            Simulator::Stop();
        });
    }
    else
    {
        CALLGRIND_START_INSTRUMENTATION;
    }
    Simulator::Stop(duration);
    Simulator::Run();
    if (!window)
    {
        CALLGRIND_STOP_INSTRUMENTATION;
    }
    const int64_t simInstructions = instructions.Stop();
    const Clocks after = Clocks::Now();
    // The Stop event is ours, not the scenario's (as harness/engine/simulation.py counts),
    // where it ran (not when the run ended sooner), and so are a measurement
    // target's stop (run.min_iterations) and the window's end.
    const bool stoppedAtTarget = job && job->HasStoppedAtTarget();
    const bool stopRan =
        !stoppedAtTarget && !scenario->HasEndedEarly() && Simulator::Now() == duration;
    const uint64_t events = Simulator::GetEventCount() - (stopRan ? 1 : 0) -
                            (stoppedAtTarget ? 1 : 0) - scenario->GetOwnEvents();

    std::map<std::string, std::string> tables;
    tables["queues"] = scenario->GetQueueTracker()->ToCsv();
    tables["utilization"] = scenario->GetUtilizationTracker()->ToCsv();
    if (flowLog)
    {
        tables["flows"] = flowLog->ToCsv();
    }
    if (job)
    {
        tables["iterations"] = job->IterationsCsv();
        tables["compute"] = job->ComputeCsv();
    }

    if (window)
    {
        std::cout << "window_events " << windowEvents.to - windowEvents.from << "\n";
    }
    std::cout << "events " << events << "\n"
              << "simulated_ns " << Simulator::Now().GetNanoSeconds() << "\n"
              << "sim_wall_s " << after.wall - before.wall << "\n"
              << "sim_user_s " << after.user - before.user << "\n"
              << "sim_system_s " << after.system - before.system << "\n"
              << "sim_instructions " << simInstructions << "\n"
              << "tcp_fastpath_in_force " << fastPathInForce << "\n";
    if (flowLog)
    {
        std::cout << "flows " << flowLog->GetNFlows() << "\n"
                  << "flows_completed " << flowLog->GetNCompleted() << "\n"
                  << "flow_errors " << flowLog->GetNErrors() << "\n";
    }
    if (job)
    {
        std::cout << "iterations " << job->GetNIterations() << "\n"
                  << "job_errors " << job->GetNErrors() << "\n";
    }
    for (const auto& [name, csv] : tables)
    {
        std::cout << "rows_" << name << " " << CountRows(csv) << "\n";
        if (!tablesDir.empty())
        {
            std::ofstream(tablesDir + "/" + name + ".csv") << csv;
        }
    }
    Simulator::Destroy();
    return 0;
}
