#include "ps-server.h"

#include "tcp-socket-ddnn.h"

#include "ns3/abort.h"
#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PsServer");

NS_OBJECT_ENSURE_REGISTERED(PsServer);

TypeId
PsServer::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PsServer")
                            .SetParent<Application>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<PsServer>();
    return tid;
}

PsServer::PsServer()
    : m_shard(0),
      m_nAggregated(0)
{
    NS_LOG_FUNCTION(this);
}

void
PsServer::Setup(Ptr<PsJob> job, uint32_t shard)
{
    NS_LOG_FUNCTION(this << job << shard);
    m_job = job;
    m_shard = shard;
}

void
PsServer::AddChannel(uint32_t worker, Ptr<PsChannel> channel)
{
    NS_LOG_FUNCTION(this << worker << channel);
    if (m_channels.size() <= worker)
    {
        m_channels.resize(worker + 1);
    }
    m_channels[worker] = channel;
    channel->SetCallbacks(MakeNullCallback<void, const PsChunk&>(),
                          MakeCallback(&PsServer::PushProgress, this, worker),
                          MakeCallback(&PsServer::ChannelError, this, worker));
}

uint32_t
PsServer::GetShard() const
{
    NS_LOG_FUNCTION(this);
    return m_shard;
}

uint64_t
PsServer::GetNAggregated() const
{
    NS_LOG_FUNCTION(this);
    return m_nAggregated;
}

void
PsServer::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (auto& l : m_listeners)
    {
        l->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                             MakeNullCallback<void, Ptr<Socket>, const Address&>());
    }
    m_listeners.clear();
    m_channels.clear();
    m_job = nullptr;
    Application::DoDispose();
}

void
PsServer::StartApplication()
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(!m_job, "PsServer: Setup() before the application starts");
    const auto& classes = m_job->GetClasses();
    for (uint32_t cls = 0; cls < classes.size(); ++cls)
    {
        Ptr<Socket> listener = m_job->CreateSocket(GetNode());
        listener->SetIpTos(classes[cls]); // SYN-ACKs
        const uint16_t port = m_job->GetPort() + cls;
        if (listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), port)) != 0)
        {
            ChannelError(0, "shard cannot bind port " + std::to_string(port));
        }
        listener->Listen();
        listener->SetAcceptCallback(MakeCallback(&PsServer::AcceptRequest, this),
                                    MakeCallback(&PsServer::Accepted, this));
        m_listeners.push_back(listener);
    }
}

void
PsServer::StopApplication()
{
    NS_LOG_FUNCTION(this);
    // Connections stay open: a close would look like a failure to the workers.
}

bool
PsServer::AcceptRequest(Ptr<Socket>, const Address& from)
{
    NS_LOG_FUNCTION(this << from);
    const Ipv4Address peer = InetSocketAddress::ConvertFrom(from).GetIpv4();
    if (m_job->GetWorkerRank(peer) < 0)
    {
        std::ostringstream os;
        os << "refused a connection from " << peer << " (not a worker of the job)";
        m_job->NotifyError("shard " + std::to_string(m_shard), os.str());
        return false;
    }
    return true;
}

void
PsServer::Accepted(Ptr<Socket> socket, const Address& from)
{
    NS_LOG_FUNCTION(this << socket << from);
    const int32_t rank = m_job->GetWorkerRank(InetSocketAddress::ConvertFrom(from).GetIpv4());
    Address local;
    socket->GetSockName(local);
    const uint32_t cls = InetSocketAddress::ConvertFrom(local).GetPort() - m_job->GetPort();
    m_channels.at(rank)->Attach(cls, socket);
}

uint64_t
PsServer::UnitBytes(uint32_t tensor) const
{
    NS_LOG_FUNCTION(this << tensor);
    const uint64_t unit = m_job->GetAggregationBytes();
    const uint64_t size = m_job->GetLayerBytes(tensor);
    return unit == 0 ? size : std::min(unit, size);
}

void
PsServer::PushProgress(uint32_t worker, const PsChunk& chunk, uint64_t from, uint64_t to)
{
    NS_LOG_FUNCTION(this << worker << from << to);
    const uint32_t W = m_channels.size();
    const uint64_t size = m_job->GetLayerBytes(chunk.tensor);
    const uint64_t unit = UnitBytes(chunk.tensor);
    const uint32_t nUnits = (size + unit - 1) / unit;
    if (m_job->GetShard(chunk.tensor) != m_shard || chunk.offset + to > size)
    {
        ChannelError(worker, "push of bytes outside tensor " + std::to_string(chunk.tensor) +
                                 " of shard " + std::to_string(m_shard));
        return;
    }
    const auto key = std::make_pair(chunk.iteration, chunk.tensor);
    Aggregate& agg = m_aggregates[key];
    if (agg.bytes.empty())
    {
        agg.bytes.assign(nUnits, std::vector<uint64_t>(W, 0));
        agg.complete.assign(nUnits, 0);
    }
    if (chunk.deadlineNs >= 0 && (agg.deadlineNs < 0 || chunk.deadlineNs < agg.deadlineNs))
    {
        agg.deadlineNs = chunk.deadlineNs;
    }
    // spread [from, to) of the chunk over the aggregation units it covers
    uint64_t a = chunk.offset + from;
    const uint64_t b = chunk.offset + to;
    std::vector<uint32_t> done;
    while (a < b)
    {
        const uint32_t u = a / unit;
        const uint64_t unitEnd = std::min(size, (u + 1) * unit);
        const uint64_t take = std::min(b, unitEnd) - a;
        uint64_t& got = agg.bytes[u][worker];
        got += take;
        if (got == unitEnd - u * unit && ++agg.complete[u] == W)
        {
            done.push_back(u);
        }
        a += take;
    }
    const int64_t deadline = agg.deadlineNs;
    bool finished = false;
    for (uint32_t u : done)
    {
        const uint64_t offset = uint64_t(u) * unit;
        finished = ++agg.unitsDone == nUnits;
        Pull(PsChunk{chunk.iteration,
                     chunk.tensor,
                     offset,
                     std::min(size, offset + unit) - offset,
                     m_job->GetLayerTos(chunk.tensor),
                     deadline,
                     0});
    }
    if (finished)
    {
        m_aggregates.erase(key);
        m_job->NotifyTensorAggregated(chunk.iteration, chunk.tensor);
    }
}

void
PsServer::Pull(const PsChunk& unit)
{
    NS_LOG_FUNCTION(this);
    m_nAggregated++;
    if (m_job->GetPullBarrier())
    {
        m_held[unit.iteration].push_back(unit);
        return;
    }
    SendPull(unit);
}

void
PsServer::ReleasePulls(uint64_t iteration)
{
    NS_LOG_FUNCTION(this << iteration);
    auto it = m_held.find(iteration);
    if (it == m_held.end())
    {
        return;
    }
    const std::vector<PsChunk> units = std::move(it->second);
    m_held.erase(it);
    for (const auto& unit : units)
    {
        SendPull(unit);
    }
}

void
PsServer::SendPull(const PsChunk& unit)
{
    NS_LOG_FUNCTION(this);
    // raise when what is left before the forward pass needs it is its pull
    const Time raiseAt = unit.deadlineNs < 0
                             ? Time(-1)
                             : NanoSeconds(unit.deadlineNs) -
                                   Seconds(unit.bytes * 8.0 / double(m_job->GetLinkBps()));
    for (auto& channel : m_channels)
    {
        channel->Send(unit, raiseAt);
    }
}

void
PsServer::ChannelError(uint32_t worker, const std::string& what)
{
    NS_LOG_FUNCTION(this << worker << what);
    if (m_job)
    {
        m_job->NotifyError("shard " + std::to_string(m_shard) + " (worker " +
                               std::to_string(worker) + ")",
                           what);
    }
}

} // namespace ns3
