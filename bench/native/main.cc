// The harness's scenario without Python: replays a recipe written by
// bench/recipe.py (the ns-3 calls harness/run.py makes for one plan, in the
// same order) with the same C++ classes from ns3-modules/, runs it, and
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
#include <optional>
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

/// What a recipe builds; every directive adds to it.
struct Network
{
    Ptr<TopologyBuilder> builder;
    Ptr<QueueTracker> queues;
    Ptr<LinkUtilizationTracker> utilization;
    std::vector<Ipv4Address> hostAddresses;
    RingAllreduceHelper jobHelper;
    Ptr<RingAllreduceJob> job;
    Ptr<FlowLog> flowLog;
    std::optional<FlowAppHelper> flowHelper;
    std::map<uint32_t, Ptr<FlowSendApplication>> senders;
    Time duration;
};

template <typename T>
std::vector<T>
ParseList(const std::string& csv)
{
    std::vector<T> values;
    std::istringstream in(csv);
    std::string item;
    while (std::getline(in, item, ','))
    {
        values.push_back(static_cast<T>(std::stoll(item)));
    }
    return values;
}

/// Apply one recipe line (see bench/recipe.py for the directives).
void
Apply(const std::string& line, uint32_t lineNo, Network& net)
{
    std::istringstream in(line);
    std::string directive;
    in >> directive;
    if (directive == "default")
    {
        std::string name;
        std::string value;
        in >> name >> value;
        Config::SetDefault(name, StringValue(value));
    }
    else if (directive == "seed")
    {
        uint32_t seed;
        in >> seed;
        RngSeedManager::SetSeed(seed);
    }
    else if (directive == "run")
    {
        uint64_t run;
        in >> run;
        RngSeedManager::SetRun(run);
        RngSeedManager::ResetNextStreamIndex();
    }
    else if (directive == "nodes")
    {
        uint32_t n;
        in >> n;
        net.builder = CreateObject<TopologyBuilder>();
        net.builder->CreateNodes(n);
        net.queues = CreateObject<QueueTracker>();
    }
    else if (directive == "link")
    {
        uint32_t a;
        uint32_t b;
        uint64_t rateBps;
        uint64_t delayNs;
        uint32_t mtu;
        in >> a >> b >> rateBps >> delayNs >> mtu;
        net.builder->AddLink(a, b, rateBps, delayNs, mtu);
    }
    else if (directive == "prio")
    {
        uint32_t link;
        uint32_t side;
        uint32_t from;
        uint32_t to;
        uint32_t bands;
        uint32_t limit;
        in >> link >> side >> from >> to >> bands >> limit;
        std::string priomap;
        std::getline(in >> std::ws, priomap);
        Ptr<QueueDisc> qdisc = QueueDiscInstaller::InstallPrio(net.builder->GetLinkDevice(link, side),
                                                               bands,
                                                               priomap,
                                                               limit);
        net.queues->TrackPrio(qdisc, link, from, to);
    }
    else if (directive == "assign")
    {
        net.builder->AssignAddresses();
    }
    else if (directive == "host")
    {
        uint32_t host;
        uint32_t link;
        in >> host >> link;
        net.hostAddresses.resize(std::max<size_t>(net.hostAddresses.size(), host + 1));
        net.hostAddresses[host] = net.builder->GetLinkAddress(link, 0);
    }
    else if (directive == "route")
    {
        uint32_t node;
        uint32_t host;
        uint32_t link;
        in >> node >> host >> link;
        net.builder->AddRoute(node, net.hostAddresses.at(host), link);
    }
    else if (directive == "utilization")
    {
        int64_t intervalNs;
        in >> intervalNs;
        net.utilization = CreateObject<LinkUtilizationTracker>();
        net.utilization->SetAttribute("Interval", TimeValue(NanoSeconds(intervalNs)));
    }
    else if (directive == "app-ports")
    {
        uint16_t lo;
        uint16_t hi;
        uint32_t app;
        in >> lo >> hi >> app;
        net.utilization->AddApplicationPorts(lo, hi, app);
    }
    else if (directive == "track")
    {
        uint32_t link;
        uint32_t side;
        uint32_t from;
        uint32_t to;
        in >> link >> side >> from >> to;
        net.utilization->Track(net.builder->GetLinkDevice(link, side), link, from, to);
    }
    else if (directive == "job-layers")
    {
        std::string bytes;
        std::string fp;
        std::string bp;
        in >> bytes >> fp >> bp;
        net.jobHelper.SetLayers(ParseList<uint64_t>(bytes),
                                ParseList<int64_t>(fp),
                                ParseList<int64_t>(bp));
    }
    else if (directive == "job-layer-classes")
    {
        std::string tos;
        in >> tos;
        net.jobHelper.SetLayerClasses(ParseList<uint32_t>(tos));
    }
    else if (directive == "job-buffers")
    {
        std::string first;
        std::string last;
        std::string bytes;
        std::string tos;
        in >> first >> last >> bytes >> tos;
        net.jobHelper.SetBuffers(ParseList<uint32_t>(first),
                                 ParseList<uint32_t>(last),
                                 ParseList<uint64_t>(bytes),
                                 ParseList<uint32_t>(tos));
    }
    else if (directive == "job-scheduler")
    {
        std::string typeId;
        std::vector<std::string> attributes;
        std::string attribute;
        in >> typeId;
        while (in >> attribute)
        {
            attributes.push_back(attribute);
        }
        net.jobHelper.SetScheduler(typeId, attributes);
    }
    else if (directive == "job-attribute")
    {
        std::string name;
        std::string value;
        in >> name >> value;
        net.jobHelper.SetJobAttribute(name, StringValue(value));
    }
    else if (directive == "job-install")
    {
        std::vector<uint32_t> nodeIds;
        std::vector<uint32_t> addresses;
        uint32_t host;
        while (in >> host)
        {
            nodeIds.push_back(net.builder->GetNode(host)->GetId());
            addresses.push_back(net.hostAddresses.at(host).Get());
        }
        net.job = net.jobHelper.Install(nodeIds, addresses);
    }
    else if (directive == "flow-apps")
    {
        uint16_t port;
        in >> port;
        net.flowLog = CreateObject<FlowLog>();
        net.flowHelper.emplace(net.flowLog, port);
    }
    else if (directive == "flow-host")
    {
        uint32_t host;
        int32_t ackTos;
        uint32_t listenTos;
        in >> host >> ackTos >> listenTos;
        Ptr<Node> node = net.builder->GetNode(host);
        net.flowHelper->InstallSink(node, ackTos, static_cast<uint8_t>(listenTos));
        net.senders[host] = net.flowHelper->InstallSender(node);
    }
    else if (directive == "flow")
    {
        uint64_t id;
        uint32_t src;
        uint32_t dst;
        uint64_t size;
        uint32_t tos;
        int64_t startNs;
        in >> id >> src >> dst >> size >> tos >> startNs;
        uint64_t added = net.flowLog->AddFlow(src,
                                              dst,
                                              net.hostAddresses.at(dst),
                                              size,
                                              static_cast<uint8_t>(tos),
                                              NanoSeconds(startNs));
        NS_ABORT_MSG_IF(added != id, "recipe line " << lineNo << ": flow ids must follow the schedule");
        net.senders.at(src)->AddFlow(added);
    }
    else if (directive == "stop")
    {
        int64_t durationNs;
        in >> durationNs;
        net.duration = NanoSeconds(durationNs);
    }
    else
    {
        NS_FATAL_ERROR("recipe line " << lineNo << ": unknown directive '" << directive << "'");
    }
    NS_ABORT_MSG_IF(in.fail() && !in.eof(), "recipe line " << lineNo << ": bad arguments: " << line);
}

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
    cmd.AddValue("recipe", "recipe file written by bench/recipe.py", recipePath);
    cmd.AddValue("tables", "directory to write the raw result tables into", tablesDir);
    cmd.Parse(argc, argv);
    NS_ABORT_MSG_IF(recipePath.empty(), "--recipe=PATH is required");

    // The TCP fast path must be first in the program's symbol scope (linked
    // first, --no-as-needed), as the harness loads it: same code, same speed.
    int fastPathMembers = 0;
    const int fastPathInForce = ddnn_tcp_fastpath_in_force(&fastPathMembers);
    NS_ABORT_MSG_IF(fastPathInForce != fastPathMembers,
                    "the TCP fast path is not in force (" << fastPathInForce << " of "
                                                          << fastPathMembers
                                                          << " members): link it first");

    std::ifstream recipe(recipePath);
    NS_ABORT_MSG_IF(!recipe, "cannot read " << recipePath);
    std::string line;
    std::getline(recipe, line);
    NS_ABORT_MSG_IF(line != "ddnn-recipe 1", recipePath << " is not a ddnn-recipe 1 file");

    Network net;
    uint32_t lineNo = 1;
    while (std::getline(recipe, line))
    {
        ++lineNo;
        if (!line.empty() && line[0] != '#')
        {
            Apply(line, lineNo, net);
        }
    }
    NS_ABORT_MSG_IF(net.duration.IsZero(), recipePath << " has no stop directive");

    InstructionCounter instructions;
    const Clocks before = Clocks::Now();
    instructions.Start();
    CALLGRIND_START_INSTRUMENTATION;
    Simulator::Stop(net.duration);
    Simulator::Run();
    CALLGRIND_STOP_INSTRUMENTATION;
    const int64_t simInstructions = instructions.Stop();
    const Clocks after = Clocks::Now();
    // The Stop event is ours, not the scenario's (as harness/run.py counts).
    const uint64_t events = Simulator::GetEventCount() - 1;

    std::map<std::string, std::string> tables;
    tables["queues"] = net.queues->ToCsv();
    tables["utilization"] = net.utilization->ToCsv();
    if (net.flowLog)
    {
        tables["flows"] = net.flowLog->ToCsv();
    }
    if (net.job)
    {
        tables["iterations"] = net.job->IterationsCsv();
        tables["transfers"] = net.job->TransfersCsv();
        tables["compute"] = net.job->ComputeCsv();
    }

    std::cout << "events " << events << "\n"
              << "simulated_ns " << Simulator::Now().GetNanoSeconds() << "\n"
              << "sim_wall_s " << after.wall - before.wall << "\n"
              << "sim_user_s " << after.user - before.user << "\n"
              << "sim_system_s " << after.system - before.system << "\n"
              << "sim_instructions " << simInstructions << "\n"
              << "tcp_fastpath_in_force " << fastPathInForce << "\n";
    if (net.flowLog)
    {
        std::cout << "flows " << net.flowLog->GetNFlows() << "\n"
                  << "flows_completed " << net.flowLog->GetNCompleted() << "\n"
                  << "flow_errors " << net.flowLog->GetNErrors() << "\n";
    }
    if (net.job)
    {
        std::cout << "iterations " << net.job->GetNIterations() << "\n"
                  << "allreduces " << net.job->GetNAllreduces() << "\n"
                  << "job_errors " << net.job->GetNErrors() << "\n";
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
