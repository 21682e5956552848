#include "scenario-recipe.h"

#include "queue-disc-installer.h"

#include "ns3/abort.h"
#include "ns3/config.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ScenarioRecipe");
NS_OBJECT_ENSURE_REGISTERED(ScenarioRecipe);

namespace
{

/// A comma-separated list ("-": empty) as numbers.
template <typename T>
std::vector<T>
ParseList(const std::string& csv)
{
    std::vector<T> values;
    if (csv == "-")
    {
        return values;
    }
    std::istringstream in(csv);
    std::string item;
    while (std::getline(in, item, ','))
    {
        if constexpr (std::is_floating_point_v<T>)
        {
            values.push_back(static_cast<T>(std::stod(item)));
        }
        else
        {
            values.push_back(static_cast<T>(std::stoll(item)));
        }
    }
    return values;
}

/// A comma-separated list ("-": empty) as the space-separated string ns-3
/// attributes such as PrioQueueDisc's Priomap take.
std::string
Spaced(const std::string& csv)
{
    if (csv == "-")
    {
        return "";
    }
    std::string out = csv;
    std::replace(out.begin(), out.end(), ',', ' ');
    return out;
}

/// The rest of the stream's tokens.
std::vector<std::string>
RestOf(std::istringstream& in)
{
    std::vector<std::string> tokens;
    std::string token;
    while (in >> token)
    {
        tokens.push_back(token);
    }
    return tokens;
}

} // namespace

TypeId
ScenarioRecipe::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ScenarioRecipe")
                            .SetParent<Object>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<ScenarioRecipe>();
    return tid;
}

void
ScenarioRecipe::Apply(const std::string& text)
{
    std::istringstream lines(text);
    std::string line;
    std::getline(lines, line);
    NS_ABORT_MSG_IF(line != FORMAT, "not a " << FORMAT << " recipe: first line '" << line << "'");
    uint32_t lineNo = 1;
    while (std::getline(lines, line))
    {
        ++lineNo;
        if (!line.empty() && line[0] != '#')
        {
            ApplyLine(line, lineNo);
        }
    }
}

TrainingJobHelper&
ScenarioRecipe::JobHelper(uint32_t lineNo)
{
    NS_ABORT_MSG_IF(!m_ringHelper && !m_psHelper,
                    "recipe line " << lineNo << ": a job directive before `job`");
    if (m_ringHelper)
    {
        return *m_ringHelper;
    }
    return *m_psHelper;
}

void
ScenarioRecipe::ApplyLine(const std::string& line, uint32_t lineNo)
{
    NS_LOG_FUNCTION(this << lineNo);
    std::istringstream in(line);
    std::string directive;
    in >> directive;
    // network
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
        m_topology = CreateObject<TopologyBuilder>();
        m_topology->CreateNodes(n);
        m_queues = CreateObject<QueueTracker>();
    }
    else if (directive == "link")
    {
        uint32_t a;
        uint32_t b;
        uint64_t rateBps;
        uint64_t delayNs;
        uint32_t mtu;
        in >> a >> b >> rateBps >> delayNs >> mtu;
        m_topology->AddLink(a, b, rateBps, delayNs, mtu);
    }
    else if (directive == "queue-disc")
    {
        uint32_t link;
        uint32_t side;
        uint32_t from;
        uint32_t to;
        std::string root;
        uint32_t bands;
        std::string limit;
        std::string priomap;
        std::string quanta;
        std::string ecn;
        bool setEct;
        std::string buffer;
        std::string pool;
        std::string alphas;
        in >> link >> side >> from >> to >> root >> bands >> limit >> priomap >> quanta >> ecn >>
            setEct >> buffer >> pool >> alphas;
        QueueDiscInstaller installer(root, bands, Spaced(priomap));
        installer.SetQuanta(Spaced(quanta));
        installer.SetEcnThresholds(Spaced(ecn), setEct);
        installer.SetBuffer(QueueDiscInstaller::ParseBufferModel(buffer),
                            QueueSize(limit),
                            pool == "switch",
                            Spaced(alphas));
        Ptr<QueueDisc> qdisc = installer.Install(m_topology->GetLinkDevice(link, side));
        m_queues->TrackPrio(qdisc, link, from, to);
    }
    else if (directive == "assign")
    {
        m_topology->AssignAddresses();
    }
    else if (directive == "host")
    {
        uint32_t host;
        uint32_t link;
        in >> host >> link;
        m_hostAddresses.resize(std::max<size_t>(m_hostAddresses.size(), host + 1));
        m_hostAddresses[host] = m_topology->GetLinkAddress(link, 0);
    }
    else if (directive == "route")
    {
        uint32_t node;
        uint32_t host;
        uint32_t link;
        in >> node >> host >> link;
        m_topology->AddRoute(node, m_hostAddresses.at(host), link);
    }
    else if (directive == "link-rate")
    {
        uint32_t link;
        int64_t atNs;
        uint64_t rateBps;
        in >> link >> atNs >> rateBps;
        m_topology->ScheduleLinkRate(link, atNs, rateBps);
    }
    // measurement
    else if (directive == "utilization")
    {
        int64_t intervalNs;
        in >> intervalNs;
        m_utilization = CreateObject<LinkUtilizationTracker>();
        m_utilization->SetAttribute("Interval", TimeValue(NanoSeconds(intervalNs)));
    }
    else if (directive == "app-ports")
    {
        uint16_t lo;
        uint16_t hi;
        uint32_t app;
        in >> lo >> hi >> app;
        m_utilization->AddApplicationPorts(lo, hi, app);
    }
    else if (directive == "track")
    {
        uint32_t link;
        uint32_t side;
        uint32_t from;
        uint32_t to;
        in >> link >> side >> from >> to;
        m_utilization->Track(m_topology->GetLinkDevice(link, side), link, from, to);
    }
    // training jobs
    else if (directive == "job")
    {
        std::string architecture;
        in >> architecture;
        NS_ABORT_MSG_IF(m_ringHelper || m_psHelper,
                        "recipe line " << lineNo << ": the previous job was not installed");
        if (architecture == "ring")
        {
            m_ringHelper.emplace();
        }
        else if (architecture == "ps")
        {
            m_psHelper.emplace();
        }
        else
        {
            NS_FATAL_ERROR("recipe line " << lineNo << ": unknown architecture '" << architecture
                                          << "' (ring, ps)");
        }
    }
    else if (directive == "job-attribute")
    {
        std::string name;
        std::string value;
        in >> name >> value;
        JobHelper(lineNo).SetJobAttribute(name, StringValue(value));
    }
    else if (directive == "job-start")
    {
        int64_t ns;
        in >> ns;
        JobHelper(lineNo).SetStartTime(NanoSeconds(ns));
    }
    else if (directive == "job-layers")
    {
        std::string bytes;
        std::string fp;
        std::string bp;
        in >> bytes >> fp >> bp;
        JobHelper(lineNo).SetLayers(ParseList<uint64_t>(bytes),
                                    ParseList<int64_t>(fp),
                                    ParseList<int64_t>(bp));
    }
    else if (directive == "job-layer-classes")
    {
        std::string tos;
        in >> tos;
        JobHelper(lineNo).SetLayerClasses(ParseList<uint32_t>(tos));
    }
    else if (directive == "job-slowdown")
    {
        uint32_t rank;
        int64_t startNs;
        int64_t endNs;
        std::string factor;
        in >> rank >> startNs >> endNs >> factor;
        JobHelper(lineNo).AddSlowdown(rank, startNs, endNs, std::stod(factor));
    }
    else if (directive == "job-compute-factors")
    {
        uint32_t rank;
        std::string factors;
        in >> rank >> factors;
        JobHelper(lineNo).SetComputeFactors(rank, ParseList<double>(factors));
    }
    else if (directive == "job-buffers")
    {
        std::string first;
        std::string last;
        std::string bytes;
        std::string tos;
        in >> first >> last >> bytes >> tos;
        NS_ABORT_MSG_IF(!m_ringHelper, "recipe line " << lineNo << ": buffers of a non-ring job");
        m_ringHelper->SetBuffers(ParseList<uint32_t>(first),
                                 ParseList<uint32_t>(last),
                                 ParseList<uint64_t>(bytes),
                                 ParseList<uint32_t>(tos));
    }
    else if (directive == "job-scheduler")
    {
        std::string side;
        std::string typeId;
        in >> side >> typeId;
        NS_ABORT_MSG_IF(side != "push" && side != "pull",
                        "recipe line " << lineNo << ": scheduler side '" << side
                                       << "' (push, pull)");
        const std::vector<std::string> attributes = RestOf(in);
        JobHelper(lineNo); // a job is being described
        if (m_ringHelper)
        {
            NS_ABORT_MSG_IF(side != "push",
                            "recipe line " << lineNo << ": a ring job has one (push) policy");
            m_ringHelper->SetScheduler(typeId, attributes);
        }
        else
        {
            m_psHelper->SetScheduler(side == "push", typeId, attributes);
        }
    }
    else if (directive == "job-shards")
    {
        std::string shards;
        in >> shards;
        NS_ABORT_MSG_IF(!m_psHelper, "recipe line " << lineNo << ": shards of a non-PS job");
        m_psHelper->SetTensorShards(ParseList<uint32_t>(shards));
    }
    else if (directive == "job-install")
    {
        std::string workerList;
        std::string serverList = "-";
        in >> workerList;
        if (m_psHelper)
        {
            in >> serverList;
        }
        auto nodesAndAddresses = [this](const std::string& list) {
            std::pair<std::vector<uint32_t>, std::vector<uint32_t>> out;
            for (uint32_t host : ParseList<uint32_t>(list))
            {
                out.first.push_back(m_topology->GetNode(host)->GetId());
                out.second.push_back(m_hostAddresses.at(host).Get());
            }
            return out;
        };
        auto [workerNodes, workerAddresses] = nodesAndAddresses(workerList);
        JobHelper(lineNo);
        if (m_ringHelper)
        {
            m_jobs.push_back(m_ringHelper->Install(workerNodes, workerAddresses));
            m_ringHelper.reset();
        }
        else
        {
            auto [serverNodes, serverAddresses] = nodesAndAddresses(serverList);
            m_jobs.push_back(
                m_psHelper->Install(workerNodes, workerAddresses, serverNodes, serverAddresses));
            m_psHelper.reset();
        }
    }
    else if (directive == "target")
    {
        uint64_t count;
        int64_t sinceNs;
        int64_t stopDelayNs;
        in >> count >> sinceNs >> stopDelayNs;
        NS_ABORT_MSG_IF(m_jobs.empty(), "recipe line " << lineNo << ": a target without a job");
        m_jobs.front()->SetMeasurementTarget(count,
                                             NanoSeconds(sinceNs),
                                             NanoSeconds(stopDelayNs),
                                             MakeCallback(&ScenarioRecipe::WindowEnded, this));
        m_hasTarget = true;
    }
    // background flows
    else if (directive == "flow-apps")
    {
        uint16_t port;
        in >> port;
        m_flowLog = CreateObject<FlowLog>();
        m_flowHelper.emplace(m_flowLog, port);
    }
    else if (directive == "flow-host")
    {
        uint32_t host;
        int32_t ackTos;
        uint32_t listenTos;
        in >> host >> ackTos >> listenTos;
        Ptr<Node> node = m_topology->GetNode(host);
        m_flowHelper->InstallSink(node, ackTos, static_cast<uint8_t>(listenTos));
        m_senders[host] = m_flowHelper->InstallSender(node);
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
        uint64_t added = m_flowLog->AddFlow(src,
                                            dst,
                                            m_hostAddresses.at(dst),
                                            size,
                                            static_cast<uint8_t>(tos),
                                            NanoSeconds(startNs));
        NS_ABORT_MSG_IF(added != id,
                        "recipe line " << lineNo << ": flow ids must follow the schedule");
        m_senders.at(src)->AddFlow(added);
    }
    else if (directive == "window")
    {
        int64_t fromNs;
        int64_t toNs;
        in >> fromNs >> toNs;
        m_hasWindow = true;
        m_windowFrom = NanoSeconds(fromNs);
        if (!m_hasTarget) // else the target ends the window
        {
            Simulator::Schedule(NanoSeconds(toNs) - Simulator::Now(),
                                &ScenarioRecipe::WindowEndEvent,
                                this);
        }
    }
    else if (directive == "stop")
    {
        int64_t durationNs;
        in >> durationNs;
        m_stop = NanoSeconds(durationNs);
    }
    else
    {
        NS_FATAL_ERROR("recipe line " << lineNo << ": unknown directive '" << directive << "'");
    }
    NS_ABORT_MSG_IF(in.fail() && !in.eof(),
                    "recipe line " << lineNo << ": bad arguments: " << line);
}

Ptr<TopologyBuilder>
ScenarioRecipe::GetTopology() const
{
    return m_topology;
}

Ptr<QueueTracker>
ScenarioRecipe::GetQueueTracker() const
{
    return m_queues;
}

Ptr<LinkUtilizationTracker>
ScenarioRecipe::GetUtilizationTracker() const
{
    return m_utilization;
}

Ptr<FlowLog>
ScenarioRecipe::GetFlowLog() const
{
    return m_flowLog;
}

uint32_t
ScenarioRecipe::GetNJobs() const
{
    return m_jobs.size();
}

Ptr<TrainingJob>
ScenarioRecipe::GetJob(uint32_t i) const
{
    NS_ABORT_MSG_IF(i >= m_jobs.size(), "no job " << i << " (" << m_jobs.size() << " installed)");
    return m_jobs[i];
}

Ptr<RingAllreduceJob>
ScenarioRecipe::GetRingJob(uint32_t i) const
{
    Ptr<RingAllreduceJob> job = DynamicCast<RingAllreduceJob>(GetJob(i));
    NS_ABORT_MSG_IF(!job, "job " << i << " is not a ring-allreduce job");
    return job;
}

Ptr<PsJob>
ScenarioRecipe::GetPsJob(uint32_t i) const
{
    Ptr<PsJob> job = DynamicCast<PsJob>(GetJob(i));
    NS_ABORT_MSG_IF(!job, "job " << i << " is not a parameter-server job");
    return job;
}

Ipv4Address
ScenarioRecipe::GetHostAddress(uint32_t h) const
{
    NS_ABORT_MSG_IF(h >= m_hostAddresses.size(), "no address for host " << h);
    return m_hostAddresses[h];
}

Time
ScenarioRecipe::GetStopTime() const
{
    return m_stop;
}

bool
ScenarioRecipe::HasEndedEarly() const
{
    return m_endedEarly || (m_flowLog && m_flowLog->HasStoppedOnceDone());
}

uint32_t
ScenarioRecipe::GetOwnEvents() const
{
    return m_ownEvents;
}

void
ScenarioRecipe::WindowEndEvent()
{
    m_ownEvents++;
    WindowEnded();
}

void
ScenarioRecipe::WindowEnded()
{
    if (!m_hasWindow)
    {
        return;
    }
    if (m_flowLog)
    {
        m_flowLog->StopOnceDone(m_windowFrom, Simulator::Now());
    }
    else // no flow to wait for
    {
        m_endedEarly = true;
        Simulator::Stop();
    }
}

void
ScenarioRecipe::DoDispose()
{
    m_jobs.clear();
    m_senders.clear();
    m_flowHelper.reset();
    m_flowLog = nullptr;
    m_utilization = nullptr;
    m_queues = nullptr;
    m_topology = nullptr;
    Object::DoDispose();
}

} // namespace ns3
