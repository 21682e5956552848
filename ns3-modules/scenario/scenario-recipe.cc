#include "scenario-recipe.h"

#include "rdma-socket-factory.h"

#include "queue-disc-installer.h"

#include "ns3/abort.h"
#include "ns3/config.h"
#include "ns3/error-model.h"
#include "ns3/pointer.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/object-factory.h"
#include "ns3/packet-sink.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/traffic-control-layer.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ScenarioRecipe");
NS_OBJECT_ENSURE_REGISTERED(ScenarioRecipe);

TypeId
ScenarioRecipe::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ScenarioRecipe")
                            .SetParent<Object>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<ScenarioRecipe>()
                            .AddAttribute("EventQueue",
                                          "The Scheduler TypeId Apply sets as the simulator's "
                                          "event queue.",
                                          StringValue(EVENT_QUEUE),
                                          MakeStringAccessor(&ScenarioRecipe::m_eventQueue),
                                          MakeStringChecker());
    return tid;
}

void
ScenarioRecipe::Apply(const std::string& text)
{
    NS_LOG_FUNCTION(this << text);
    std::istringstream lines(text);
    std::string line;
    std::getline(lines, line);
    NS_ABORT_MSG_IF(line != FORMAT, "not a " << FORMAT << " recipe: first line '" << line << "'");
    Simulator::SetScheduler(ObjectFactory(m_eventQueue));
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

const std::map<std::string, ScenarioRecipe::Handler>&
ScenarioRecipe::GetHandlers()
{
    NS_LOG_FUNCTION_NOARGS();
    static const std::map<std::string, Handler> handlers{
        {"default", &ScenarioRecipe::ApplyDefault},
        {"seed", &ScenarioRecipe::ApplySeed},
        {"run", &ScenarioRecipe::ApplyRun},
        {"nodes", &ScenarioRecipe::ApplyNodes},
        {"link", &ScenarioRecipe::ApplyLink},
        {"queue-disc", &ScenarioRecipe::ApplyQueueDisc},
        {"pfc", &ScenarioRecipe::ApplyPfc},
        {"rdma", &ScenarioRecipe::ApplyRdma},
        {"assign", &ScenarioRecipe::ApplyAssign},
        {"host", &ScenarioRecipe::ApplyHost},
        {"route", &ScenarioRecipe::ApplyRoute},
        {"link-rate", &ScenarioRecipe::ApplyLinkRate},
        {"loss", &ScenarioRecipe::ApplyLoss},
        {"utilization", &ScenarioRecipe::ApplyUtilization},
        {"app-ports", &ScenarioRecipe::ApplyAppPorts},
        {"track", &ScenarioRecipe::ApplyTrack},
        {"queue-sampler", &ScenarioRecipe::ApplyQueueSampler},
        {"sample-queue", &ScenarioRecipe::ApplySampleQueue},
        {"job", &ScenarioRecipe::ApplyJob},
        {"job-install", &ScenarioRecipe::ApplyJobInstall},
        {"target", &ScenarioRecipe::ApplyTarget},
        {"flow-apps", &ScenarioRecipe::ApplyFlowApps},
        {"flow-host", &ScenarioRecipe::ApplyFlowHost},
        {"flow", &ScenarioRecipe::ApplyFlow},
        {"service-log", &ScenarioRecipe::ApplyServiceLog},
        {"service-app", &ScenarioRecipe::ApplyServiceApp},
        {"service-request", &ScenarioRecipe::ApplyServiceRequest},
        {"service-note-rx", &ScenarioRecipe::ApplyServiceNoteRx},
        {"window", &ScenarioRecipe::ApplyWindow},
        {"stop", &ScenarioRecipe::ApplyStop},
    };
    return handlers;
}

void
ScenarioRecipe::ApplyLine(const std::string& line, uint32_t lineNo)
{
    NS_LOG_FUNCTION(this << lineNo);
    RecipeArgs args(line, lineNo);
    const auto& handlers = GetHandlers();
    const auto handler = handlers.find(args.GetDirective());
    if (handler != handlers.end())
    {
        (this->*handler->second)(args);
    }
    else if (args.GetDirective().rfind("job-", 0) == 0) // the job's own: its helper's to read
    {
        ApplyJobDirective(args);
    }
    else
    {
        args.Fail("unknown directive '" + args.GetDirective() + "'");
    }
    if (!args.AtEnd()) // a line the handler did not read whole was not meant for it
    {
        args.FailArguments();
    }
}

// ------------------------------------------------------------------ network

void
ScenarioRecipe::ApplyDefault(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto name = args.Next<std::string>();
    const auto value = args.Next<std::string>();
    Config::SetDefault(name, StringValue(value));
}

void
ScenarioRecipe::ApplySeed(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    RngSeedManager::SetSeed(args.Next<uint32_t>());
}

void
ScenarioRecipe::ApplyRun(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    RngSeedManager::SetRun(args.Next<uint64_t>());
    RngSeedManager::ResetNextStreamIndex();
}

void
ScenarioRecipe::ApplyNodes(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto n = args.Next<uint32_t>();
    m_topology = CreateObject<TopologyBuilder>();
    m_topology->CreateNodes(n);
    m_queues = CreateObject<QueueTracker>();
}

void
ScenarioRecipe::ApplyLink(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto a = args.Next<uint32_t>();
    const auto b = args.Next<uint32_t>();
    const auto rateBps = args.Next<uint64_t>();
    const auto delayNs = args.Next<uint64_t>();
    const auto mtu = args.Next<uint32_t>();
    m_topology->AddLink(a, b, rateBps, delayNs, mtu);
}

void
ScenarioRecipe::ApplyQueueDisc(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto link = args.Next<uint32_t>();
    const auto side = args.Next<uint32_t>();
    const auto from = args.Next<uint32_t>();
    const auto to = args.Next<uint32_t>();
    const RecipeComponent egress(args, QueueDiscInstaller::GetTypeId());
    Ptr<QueueDiscInstaller> installer = egress.GetFactory().Create<QueueDiscInstaller>();
    installer->SetRoot(RecipeComponent(args, QueueDisc::GetTypeId()));
    installer->SetBands(RecipeComponent(args, QueueDisc::GetTypeId(), installer->GetNBands()));
    Ptr<QueueDisc> qdisc = installer->Install(m_topology->GetLinkDevice(link, side));
    m_queues->TrackPrio(qdisc, link, from, to);
}

void
ScenarioRecipe::ApplyPfc(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto link = args.Next<uint32_t>();
    const auto side = args.Next<uint32_t>();
    args.Next<uint32_t>(); // FROM and TO: for the reader of the recipe
    args.Next<uint32_t>();
    const RecipeComponent port(args, PfcPort::GetTypeId());
    Ptr<PfcPort> pfc = port.GetFactory().Create<PfcPort>();
    pfc->Install(m_topology->GetLinkDevice(link, side));
    m_pfcPorts.push_back(pfc);
}

void
ScenarioRecipe::ApplyRdma(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto host = args.Next<uint32_t>();
    const RecipeComponent stack(args, RdmaSocketFactory::GetTypeId());
    Ptr<RdmaSocketFactory> factory = stack.GetFactory().Create<RdmaSocketFactory>();
    Ptr<Node> node = m_topology->GetNode(host);
    factory->SetNode(node);
    node->AggregateObject(factory);
    m_rdmaStacks.emplace_back(host, factory);
}

uint32_t
ScenarioRecipe::GetNRdmaStacks() const
{
    return m_rdmaStacks.size();
}

Ptr<RdmaSocketFactory>
ScenarioRecipe::GetRdmaStack(uint32_t i) const
{
    return m_rdmaStacks.at(i).second;
}

uint32_t
ScenarioRecipe::GetRdmaStackHost(uint32_t i) const
{
    return m_rdmaStacks.at(i).first;
}

uint32_t
ScenarioRecipe::GetNPfcPorts() const
{
    return m_pfcPorts.size();
}

Ptr<PfcPort>
ScenarioRecipe::GetPfcPort(uint32_t i) const
{
    return m_pfcPorts.at(i);
}

void
ScenarioRecipe::ApplyAssign(RecipeArgs&)
{
    NS_LOG_FUNCTION(this);
    m_topology->AssignAddresses();
}

void
ScenarioRecipe::ApplyHost(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto host = args.Next<uint32_t>();
    const auto link = args.Next<uint32_t>();
    m_hostAddresses.resize(std::max<size_t>(m_hostAddresses.size(), host + 1));
    m_hostAddresses[host] = m_topology->GetLinkAddress(link, 0);
    // a host is single-homed: everything it sends leaves over its one link
    m_topology->AddDefaultRoute(m_topology->GetLinkNode(link, 0), link);
}

void
ScenarioRecipe::ApplyRoute(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto node = args.Next<uint32_t>();
    const auto host = args.Next<uint32_t>();
    const auto link = args.Next<uint32_t>();
    m_topology->AddRoute(node, m_hostAddresses.at(host), link);
}

void
ScenarioRecipe::ApplyLinkRate(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto link = args.Next<uint32_t>();
    const auto atNs = args.Next<int64_t>();
    const auto rateBps = args.Next<uint64_t>();
    m_topology->ScheduleLinkRate(link, atNs, rateBps);
}

void
ScenarioRecipe::ApplyLoss(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto link = args.Next<uint32_t>();
    const auto side = args.Next<uint32_t>();
    const auto rate = args.Next<double>();
    const auto stream = args.Next<int64_t>();
    auto loss = CreateObject<RateErrorModel>();
    loss->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
    loss->SetRate(rate);
    loss->AssignStreams(stream);
    m_topology->GetLinkDevice(link, side)->SetAttribute("ReceiveErrorModel", PointerValue(loss));
}

// ------------------------------------------------------------------ measurement

void
ScenarioRecipe::ApplyUtilization(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto intervalNs = args.Next<int64_t>();
    m_utilization = CreateObject<LinkUtilizationTracker>();
    m_utilization->SetAttribute("Interval", TimeValue(NanoSeconds(intervalNs)));
}

void
ScenarioRecipe::ApplyAppPorts(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto lo = args.Next<uint16_t>();
    const auto hi = args.Next<uint16_t>();
    const auto app = args.Next<uint32_t>();
    m_utilization->AddApplicationPorts(lo, hi, app);
}

void
ScenarioRecipe::ApplyTrack(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto link = args.Next<uint32_t>();
    const auto side = args.Next<uint32_t>();
    const auto from = args.Next<uint32_t>();
    const auto to = args.Next<uint32_t>();
    m_utilization->Track(m_topology->GetLinkDevice(link, side), link, from, to);
}

void
ScenarioRecipe::ApplyQueueSampler(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto intervalNs = args.Next<int64_t>();
    const auto startNs = args.Next<int64_t>();
    const auto stopNs = args.Next<int64_t>();
    m_sampler = CreateObject<QueueSampler>();
    m_sampler->SetAttribute("Interval", TimeValue(NanoSeconds(intervalNs)));
    m_sampler->SetAttribute("Start", TimeValue(NanoSeconds(startNs)));
    m_sampler->SetAttribute("Stop", TimeValue(NanoSeconds(stopNs)));
}

void
ScenarioRecipe::ApplySampleQueue(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto link = args.Next<uint32_t>();
    const auto side = args.Next<uint32_t>();
    const auto from = args.Next<uint32_t>();
    const auto to = args.Next<uint32_t>();
    const auto bands = args.NextList<uint32_t>();
    if (!m_sampler)
    {
        args.Fail("`sample-queue` before `queue-sampler`");
    }
    Ptr<NetDevice> device = m_topology->GetLinkDevice(link, side);
    Ptr<QueueDisc> qdisc =
        device->GetNode()->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(device);
    if (!qdisc)
    {
        args.Fail("link " + std::to_string(link) + " side " + std::to_string(side) +
                  " has no queue disc (a `queue-disc` line first)");
    }
    m_sampler->Track(qdisc, link, from, to, bands);
}

// ------------------------------------------------------------------ training jobs

TrainingJobHelper&
ScenarioRecipe::JobHelper(const RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    if (!m_job)
    {
        args.Fail("a job directive before `job`");
    }
    return *m_job;
}

void
ScenarioRecipe::ApplyJob(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto name = args.Next<std::string>();
    const auto typeName = args.Next<std::string>();
    if (m_job)
    {
        args.Fail("the previous job was not installed");
    }
    TypeId type;
    if (!TypeId::LookupByNameFailSafe(typeName, &type) ||
        !type.IsChildOf(TrainingJob::GetTypeId()))
    {
        args.Fail("job " + name + ": " + typeName + " is not a TrainingJob TypeId");
    }
    m_job = TrainingJobHelper::Create(type);
    if (!m_job)
    {
        args.Fail("job " + name + ": no helper is registered for " + typeName +
                  " (DDNN_JOB_HELPER)");
    }
    m_jobName = name;
}

void
ScenarioRecipe::ApplyJobDirective(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    if (!JobHelper(args).ApplyDirective(args.GetDirective(), args))
    {
        args.Fail("a " + m_jobName + " job has no directive '" + args.GetDirective() + "'");
    }
}

TrainingJobHelper::Hosts
ScenarioRecipe::HostsOf(const std::vector<uint32_t>& hosts) const
{
    NS_LOG_FUNCTION(this << hosts);
    TrainingJobHelper::Hosts out;
    for (uint32_t host : hosts)
    {
        out.nodeIds.push_back(m_topology->GetNode(host)->GetId());
        out.addresses.push_back(m_hostAddresses.at(host).Get());
    }
    return out;
}

void
ScenarioRecipe::ApplyJobInstall(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    std::vector<TrainingJobHelper::Hosts> lists;
    while (!args.AtEnd())
    {
        lists.push_back(HostsOf(args.NextList<uint32_t>()));
    }
    m_jobs.push_back(JobHelper(args).Install(lists));
    m_job.reset();
}

void
ScenarioRecipe::ApplyTarget(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto count = args.Next<uint64_t>();
    const auto sinceNs = args.Next<int64_t>();
    const auto stopDelayNs = args.Next<int64_t>();
    if (m_jobs.empty())
    {
        args.Fail("a target without a job");
    }
    m_jobs.front()->SetMeasurementTarget(count,
                                         NanoSeconds(sinceNs),
                                         NanoSeconds(stopDelayNs),
                                         MakeCallback(&ScenarioRecipe::WindowEnded, this));
    m_hasTarget = true;
}

// ------------------------------------------------------------------ background flows, the run

void
ScenarioRecipe::ApplyFlowApps(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto port = args.Next<uint16_t>();
    m_flowLog = CreateObject<FlowLog>();
    m_flowHelper.emplace(m_flowLog, port);
}

void
ScenarioRecipe::ApplyFlowHost(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto host = args.Next<uint32_t>();
    const auto ackTos = args.Next<int32_t>();
    const auto listenTos = args.Next<uint32_t>();
    Ptr<Node> node = m_topology->GetNode(host);
    m_flowHelper->InstallSink(node, ackTos, static_cast<uint8_t>(listenTos));
    m_senders[host] = m_flowHelper->InstallSender(node);
}

void
ScenarioRecipe::ApplyFlow(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto id = args.Next<uint64_t>();
    const auto src = args.Next<uint32_t>();
    const auto dst = args.Next<uint32_t>();
    const auto size = args.Next<uint64_t>();
    const auto tos = args.Next<uint32_t>();
    const auto startNs = args.Next<int64_t>();
    const uint64_t added = m_flowLog->AddFlow(src,
                                              dst,
                                              m_hostAddresses.at(dst),
                                              size,
                                              static_cast<uint8_t>(tos),
                                              NanoSeconds(startNs));
    if (added != id)
    {
        args.Fail("flow ids must follow the schedule");
    }
    m_senders.at(src)->AddFlow(added);
}

// ------------------------------------------------------------------ services

void
ScenarioRecipe::ApplyServiceLog(RecipeArgs&)
{
    NS_LOG_FUNCTION(this);
    m_serviceLog = CreateObject<ServiceLog>();
    m_serviceHelper.emplace(m_serviceLog);
}

void
ScenarioRecipe::ApplyServiceApp(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto service = args.Next<uint32_t>();
    const auto host = args.Next<uint32_t>();
    const auto peer = args.Next<int64_t>();
    const auto port = args.Next<uint16_t>();
    const auto stream = args.Next<int64_t>();
    const RecipeComponent app(args, Application::GetTypeId());
    if (!m_serviceHelper)
    {
        args.Fail("a service-app before service-log");
    }
    std::optional<Ipv4Address> peerAddress;
    if (peer >= 0)
    {
        peerAddress = m_hostAddresses.at(peer);
    }
    Ptr<Application> installed = m_serviceHelper->Install(m_topology->GetNode(host),
                                                          app.GetFactory(),
                                                          peerAddress,
                                                          port,
                                                          stream);
    // the requests of a `service-request` line go to their client
    if (auto client = DynamicCast<RequestClientApplication>(installed))
    {
        m_serviceClients[{service, host}] = client;
    }
    m_serviceApps.push_back(installed);
    m_serviceAppServices.push_back(service);
}

void
ScenarioRecipe::ApplyServiceRequest(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto id = args.Next<uint64_t>();
    const auto service = args.Next<uint32_t>();
    const auto query = args.Next<int64_t>();
    const auto client = args.Next<uint32_t>();
    const auto server = args.Next<uint32_t>();
    const auto requestBytes = args.Next<uint64_t>();
    const auto responseBytes = args.Next<uint64_t>();
    const auto startNs = args.Next<int64_t>();
    const auto it = m_serviceClients.find({service, client});
    if (it == m_serviceClients.end())
    {
        args.Fail("a service-request without its service's RequestClientApplication on CLIENT");
    }
    const uint64_t added = m_serviceLog->AddRequest(service,
                                                    query,
                                                    client,
                                                    server,
                                                    m_hostAddresses.at(server),
                                                    requestBytes,
                                                    responseBytes,
                                                    NanoSeconds(startNs));
    if (added != id)
    {
        args.Fail("request ids must follow the schedule");
    }
    it->second->AddRequest(added);
}

void
ScenarioRecipe::ApplyServiceNoteRx(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto i = args.Next<uint32_t>();
    const auto fromNs = args.Next<int64_t>();
    const auto toNs = args.Next<int64_t>();
    if (i >= m_serviceApps.size() || !DynamicCast<PacketSink>(m_serviceApps[i]))
    {
        args.Fail("service-note-rx of service app " + std::to_string(i) +
                  ", which is not a PacketSink installed before it");
    }
    m_serviceRx[i] = {0, 0};
    Simulator::Schedule(NanoSeconds(fromNs) - Simulator::Now(),
                        &ScenarioRecipe::NoteServiceRx,
                        this,
                        i,
                        false);
    Simulator::Schedule(NanoSeconds(toNs) - Simulator::Now(),
                        &ScenarioRecipe::NoteServiceRx,
                        this,
                        i,
                        true);
}

void
ScenarioRecipe::NoteServiceRx(uint32_t i, bool atEnd)
{
    NS_LOG_FUNCTION(this << i << atEnd);
    m_ownEvents++;
    const uint64_t rx = DynamicCast<PacketSink>(m_serviceApps.at(i))->GetTotalRx();
    auto& noted = m_serviceRx.at(i);
    (atEnd ? noted.second : noted.first) = rx;
}

uint32_t
ScenarioRecipe::GetNServiceApps() const
{
    NS_LOG_FUNCTION(this);
    return m_serviceApps.size();
}

Ptr<Application>
ScenarioRecipe::GetServiceApp(uint32_t i) const
{
    NS_LOG_FUNCTION(this << i);
    return m_serviceApps.at(i);
}

uint32_t
ScenarioRecipe::GetServiceAppService(uint32_t i) const
{
    NS_LOG_FUNCTION(this << i);
    return m_serviceAppServices.at(i);
}

bool
ScenarioRecipe::HasServiceRx(uint32_t i) const
{
    NS_LOG_FUNCTION(this << i);
    return m_serviceRx.count(i) > 0;
}

uint64_t
ScenarioRecipe::GetServiceRx(uint32_t i, bool atEnd) const
{
    NS_LOG_FUNCTION(this << i << atEnd);
    const auto& rx = m_serviceRx.at(i);
    return atEnd ? rx.second : rx.first;
}

void
ScenarioRecipe::ApplyWindow(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    const auto fromNs = args.Next<int64_t>();
    const auto toNs = args.Next<int64_t>();
    m_hasWindow = true;
    m_windowFrom = NanoSeconds(fromNs);
    if (!m_hasTarget) // else the target ends the window
    {
        Simulator::Schedule(NanoSeconds(toNs) - Simulator::Now(),
                            &ScenarioRecipe::WindowEndEvent,
                            this);
    }
}

void
ScenarioRecipe::ApplyStop(RecipeArgs& args)
{
    NS_LOG_FUNCTION(this);
    m_stop = NanoSeconds(args.Next<int64_t>());
}

Ptr<TopologyBuilder>
ScenarioRecipe::GetTopology() const
{
    NS_LOG_FUNCTION(this);
    return m_topology;
}

Ptr<QueueSampler>
ScenarioRecipe::GetQueueSampler() const
{
    return m_sampler;
}

Ptr<QueueTracker>
ScenarioRecipe::GetQueueTracker() const
{
    NS_LOG_FUNCTION(this);
    return m_queues;
}

Ptr<LinkUtilizationTracker>
ScenarioRecipe::GetUtilizationTracker() const
{
    NS_LOG_FUNCTION(this);
    return m_utilization;
}

Ptr<FlowLog>
ScenarioRecipe::GetFlowLog() const
{
    NS_LOG_FUNCTION(this);
    return m_flowLog;
}

Ptr<ServiceLog>
ScenarioRecipe::GetServiceLog() const
{
    NS_LOG_FUNCTION(this);
    return m_serviceLog;
}

uint32_t
ScenarioRecipe::GetNJobs() const
{
    NS_LOG_FUNCTION(this);
    return m_jobs.size();
}

Ptr<TrainingJob>
ScenarioRecipe::GetJob(uint32_t i) const
{
    NS_LOG_FUNCTION(this << i);
    NS_ABORT_MSG_IF(i >= m_jobs.size(), "no job " << i << " (" << m_jobs.size() << " installed)");
    return m_jobs[i];
}

Ipv4Address
ScenarioRecipe::GetHostAddress(uint32_t h) const
{
    NS_LOG_FUNCTION(this << h);
    NS_ABORT_MSG_IF(h >= m_hostAddresses.size(), "no address for host " << h);
    return m_hostAddresses[h];
}

Time
ScenarioRecipe::GetStopTime() const
{
    NS_LOG_FUNCTION(this);
    return m_stop;
}

bool
ScenarioRecipe::HasEndedEarly() const
{
    NS_LOG_FUNCTION(this);
    return m_endedEarly || (m_flowLog && m_flowLog->HasStoppedOnceDone());
}

uint32_t
ScenarioRecipe::GetOwnEvents() const
{
    NS_LOG_FUNCTION(this);
    return m_ownEvents;
}

void
ScenarioRecipe::WindowEndEvent()
{
    NS_LOG_FUNCTION(this);
    m_ownEvents++;
    WindowEnded();
}

void
ScenarioRecipe::WindowEnded()
{
    NS_LOG_FUNCTION(this);
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
    NS_LOG_FUNCTION(this);
    m_job.reset();
    m_jobs.clear();
    m_senders.clear();
    m_flowHelper.reset();
    m_flowLog = nullptr;
    m_serviceClients.clear();
    m_serviceApps.clear();
    m_serviceAppServices.clear();
    m_serviceRx.clear();
    m_serviceHelper.reset();
    m_serviceLog = nullptr;
    m_utilization = nullptr;
    m_queues = nullptr;
    m_topology = nullptr;
    m_pfcPorts.clear();
    m_rdmaStacks.clear();
    Object::DoDispose();
}

} // namespace ns3
