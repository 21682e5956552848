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
                            .SetParent<Application>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<PsWorker>();
    return tid;
}

PsWorker::PsWorker()
    : m_rank(0),
      m_running(false)
{
}

void
PsWorker::Setup(Ptr<PsJob> job, uint32_t rank)
{
    m_job = job;
    m_rank = rank;
}

void
PsWorker::AddChannel(uint32_t shard, Ptr<PsChannel> channel)
{
    if (m_channels.size() <= shard)
    {
        m_channels.resize(shard + 1);
    }
    m_channels[shard] = channel;
    channel->SetCallbacks(MakeCallback(&PsWorker::PullReceived, this),
                          MakeNullCallback<void, const PsChunk&, uint64_t, uint64_t>(),
                          MakeCallback(&PsWorker::ChannelError, this));
}

void
PsWorker::SetSlowdowns(const std::vector<LayerCompute::Slowdown>& slowdowns)
{
    m_compute.SetSlowdowns(slowdowns);
}

void
PsWorker::SetComputeFactors(const std::vector<double>& factors)
{
    m_compute.SetIterationFactors(factors);
}

uint32_t
PsWorker::GetRank() const
{
    return m_rank;
}

uint64_t
PsWorker::GetIteration() const
{
    return m_compute.GetIteration();
}

bool
PsWorker::IsConnected() const
{
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
    m_running = false;
    m_compute.Stop();
    m_channels.clear();
    m_job = nullptr;
    Application::DoDispose();
}

void
PsWorker::StartApplication()
{
    NS_ABORT_MSG_IF(!m_job, "PsWorker: Setup() before the application starts");
    NS_ABORT_MSG_IF(m_channels.size() != m_job->GetNShards(),
                    "PsWorker: not wired (PsJob::Wire() after installing every application)");
    const uint32_t L = m_job->GetNLayers();
    std::vector<Time> forward;
    std::vector<Time> backward;
    m_untilNeeded.assign(L, Time(0));
    Time sum(0);
    for (uint32_t i = 0; i < L; ++i)
    {
        forward.push_back(m_job->GetForwardTime(i));
        backward.push_back(m_job->GetBackwardTime(i));
        // after backward of layer i: backward of i-1..0, then forward of 0..i-1
        m_untilNeeded[i] = sum;
        sum += forward[i] + backward[i];
    }
    m_compute.Setup(forward,
                    backward,
                    m_job->GetBarrier(),
                    MakeCallback(&PsWorker::IterationStarted, this),
                    MakeCallback(&PsWorker::ComputeDone, this),
                    MakeCallback(&PsWorker::GradientsReady, this));
    m_running = true;
    for (uint32_t s = 0; s < m_channels.size(); ++s)
    {
        if (!m_channels[s]->IsLocal())
        {
            m_channels[s]->Connect(m_job->GetServerAddress(s));
        }
    }
    m_compute.Start();
}

void
PsWorker::StopApplication()
{
    // Compute stops; connections stay (a close would look like a failure).
    m_running = false;
    m_compute.Stop();
}

void
PsWorker::IterationStarted(uint64_t iteration)
{
    m_job->NotifyIterationStart(m_rank, iteration);
}

void
PsWorker::ComputeDone(uint64_t iteration, uint32_t layer, bool backward, Time start)
{
    m_job->NotifyComputeDone(m_rank, iteration, layer, backward, start);
}

void
PsWorker::GradientsReady(uint64_t iteration, uint32_t layer)
{
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
        ChannelError("pulled " + std::to_string(got) + " bytes of tensor " +
                     std::to_string(chunk.tensor) + " (" + std::to_string(size) + " expected)");
    }
    m_compute.SetSynced(chunk.tensor, chunk.iteration);
    m_compute.TryForward();
}

void
PsWorker::ChannelError(const std::string& what)
{
    if (m_job)
    {
        m_job->NotifyError("worker " + std::to_string(m_rank), what);
    }
}

} // namespace ns3
