#include "ps-worker.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PsWorker");

NS_OBJECT_ENSURE_REGISTERED(PsWorker);

TypeId
PsWorker::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PsWorker")
                            .SetParent<TrainingWorker>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<PsWorker>();
    return tid;
}

PsWorker::PsWorker()
{
    NS_LOG_FUNCTION(this);
}

void
PsWorker::Setup(Ptr<PsJob> job, uint32_t rank)
{
    NS_LOG_FUNCTION(this << job << rank);
    SetupWorker(job, rank);
    m_job = job;
}

void
PsWorker::AddChannel(uint32_t shard, Ptr<PsChannel> channel)
{
    NS_LOG_FUNCTION(this << shard << channel);
    if (m_channels.size() <= shard)
    {
        m_channels.resize(shard + 1);
    }
    m_channels[shard] = channel;
    channel->SetCallbacks(MakeCallback(&PsWorker::PullReceived, this),
                          MakeNullCallback<void, const PsChunk&, uint64_t, uint64_t>(),
                          MakeCallback(&PsWorker::Error, this));
}

bool
PsWorker::IsConnected() const
{
    NS_LOG_FUNCTION(this);
    for (const auto& c : m_channels)
    {
        if (!c || !c->IsConnected())
        {
            return false;
        }
    }
    return true;
}

void
PsWorker::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_channels.clear();
    m_job = nullptr;
    TrainingWorker::DoDispose();
}

void
PsWorker::StartCommunication()
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(m_channels.size() != m_job->GetNShards(),
                    "PsWorker: not wired (PsJob::Wire() after installing every application)");
    m_untilNeeded.clear();
    for (uint32_t i = 0; i < m_job->GetNLayers(); ++i)
    {
        m_untilNeeded.push_back(m_job->GetTimeUntilNeeded(i));
    }
    for (uint32_t s = 0; s < m_channels.size(); ++s)
    {
        if (!m_channels[s]->IsLocal())
        {
            m_channels[s]->Connect(m_job->GetServerAddress(s));
        }
    }
}

void
PsWorker::GradientsReady(uint64_t iteration, uint32_t layer)
{
    NS_LOG_FUNCTION(this << iteration << layer);
    if (!m_running)
    {
        return;
    }
    const uint64_t bytes = m_job->GetLayerBytes(layer);
    const Time needed = Simulator::Now() + m_untilNeeded[layer];
    // slack runs out when what is left before the forward pass needs the
    // tensor is its push plus its pull at line rate
    const Time transfer = Seconds(2.0 * bytes * 8 / double(m_job->GetLinkBps()));
    PsChunk item{iteration, layer, 0, bytes, m_job->GetLayerTos(layer), needed.GetNanoSeconds(), 0};
    m_channels[m_job->GetShard(layer)]->Send(item, needed - transfer);
}

void
PsWorker::PullReceived(const PsChunk& chunk)
{
    NS_LOG_FUNCTION(this);
    const auto key = std::make_pair(chunk.iteration, chunk.tensor);
    const uint64_t got = (m_pulled[key] += chunk.bytes);
    const uint64_t size = m_job->GetLayerBytes(chunk.tensor);
    if (got < size)
    {
        return;
    }
    m_pulled.erase(key);
    if (got > size)
    {
        Error("pulled " + std::to_string(got) + " bytes of tensor " + std::to_string(chunk.tensor) +
              " (" + std::to_string(size) + " expected)");
    }
    m_compute.SetSynced(chunk.tensor, chunk.iteration);
    m_compute.TryForward();
}

} // namespace ns3
