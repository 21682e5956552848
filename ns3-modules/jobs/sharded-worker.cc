#include "sharded-worker.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ShardedWorker");

NS_OBJECT_ENSURE_REGISTERED(ShardedWorker);

TypeId
ShardedWorker::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ShardedWorker")
                            .SetParent<RingWorker>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<ShardedWorker>();
    return tid;
}

ShardedWorker::ShardedWorker()
    : m_iteration(0),
      m_phase(0),
      m_layerInPhase(0),
      m_busy(false),
      m_phasesDone(false),
      m_nextIssue(0),
      m_reduceScattered(0),
      m_collSlot(0),
      m_collGroup(0)
{
    NS_LOG_FUNCTION(this);
}

void
ShardedWorker::Setup(Ptr<ShardedJob> job, uint32_t rank, Ipv4Address left, Ipv4Address right)
{
    NS_LOG_FUNCTION(this << job << rank << left << right);
    SetupRing(job, rank, left, right);
    m_job = job;
}

uint64_t
ShardedWorker::GetCurrentIteration() const
{
    NS_LOG_FUNCTION(this);
    return m_iteration;
}

uint32_t
ShardedWorker::GetPhase() const
{
    NS_LOG_FUNCTION(this);
    return m_phase;
}

void
ShardedWorker::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_event.Cancel();
    m_job = nullptr;
    RingWorker::DoDispose();
}

// ------------------------------------------------------------------ start and stop

void
ShardedWorker::StartApplication()
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(!m_job, "ShardedWorker: Setup() before the application starts");
    m_running = true;
    StartCommunication();
    m_iteration = 0;
    BeginIteration();
}

void
ShardedWorker::StopApplication()
{
    NS_LOG_FUNCTION(this);
    // Compute stops; the connections are left as they are (a close would
    // look like a failure to the peers that are still running).
    m_running = false;
    m_event.Cancel();
    m_busy = false;
    StopCommunication();
}

void
ShardedWorker::StartCommunication()
{
    NS_LOG_FUNCTION(this);
    // The first data on the connection is the all-gather of group 0: its
    // class is the connection's class until the first collective.
    OpenRing("collective", m_job->GetGroupTos(0));
}

void
ShardedWorker::GradientsReady(uint64_t, uint32_t)
{
    NS_LOG_FUNCTION(this);
    // LayerCompute's callback: its timeline is not run by this worker.
}

// ------------------------------------------------------------------ compute

void
ShardedWorker::BeginIteration()
{
    NS_LOG_FUNCTION(this);
    m_job->NotifyIterationStart(m_rank, m_iteration);
    m_phase = 0;
    m_layerInPhase = 0;
    m_busy = false;
    m_phasesDone = false;
    m_nextIssue = 0;
    m_reduceScattered = 0;
    m_gathered.assign(m_job->GetNPhases(), false);
    PhaseDue();
}

void
ShardedWorker::PhaseDue()
{
    NS_LOG_FUNCTION(this);
    // phase m_phase is due: issue the all-gathers up to PrefetchDepth phases ahead
    const uint64_t last =
        std::min<uint64_t>(uint64_t(m_phase) + m_job->GetPrefetchDepth(), m_job->GetNPhases() - 1);
    for (; m_nextIssue <= last; ++m_nextIssue)
    {
        if (m_job->PhaseGathers(m_nextIssue))
        {
            m_job->NotifyCollectiveReady(m_rank, m_iteration, m_nextIssue);
        }
    }
    TryStartPhase();
}

void
ShardedWorker::TryStartPhase()
{
    NS_LOG_FUNCTION(this);
    if (!m_running || m_busy || m_phasesDone)
    {
        return;
    }
    if (m_job->PhaseGathers(m_phase) && !m_gathered[m_phase])
    {
        return; // resumed by the all-gather of this phase
    }
    m_busy = true;
    m_layerInPhase = 0;
    ComputeLayer();
}

uint32_t
ShardedWorker::CurrentLayer() const
{
    NS_LOG_FUNCTION(this);
    const uint32_t group = m_job->GetPhaseGroup(m_phase);
    return m_job->IsBackwardPhase(m_phase) ? m_job->GetGroupLast(group) - m_layerInPhase
                                           : m_job->GetGroupFirst(group) + m_layerInPhase;
}

Time
ShardedWorker::Duration(Time work) const
{
    NS_LOG_FUNCTION(this << work);
    // as LayerCompute: the iteration's factor, then the slowdown periods
    const double f = m_compute.GetIterationFactor(m_iteration);
    if (f != 1.0)
    {
        work = NanoSeconds(int64_t(double(work.GetNanoSeconds()) * f + 0.5));
    }
    return m_compute.Stretch(work);
}

void
ShardedWorker::ComputeLayer()
{
    NS_LOG_FUNCTION(this);
    const uint32_t layer = CurrentLayer();
    const Time work = m_job->IsBackwardPhase(m_phase) ? m_job->GetBackwardTime(layer)
                                                      : m_job->GetForwardTime(layer);
    m_computeStart = Simulator::Now();
    m_event = Simulator::Schedule(Duration(work), &ShardedWorker::LayerDone, this);
}

void
ShardedWorker::LayerDone()
{
    NS_LOG_FUNCTION(this);
    const uint32_t layer = CurrentLayer();
    const bool backward = m_job->IsBackwardPhase(m_phase);
    m_job->NotifyComputeDone(m_rank, m_iteration, layer, backward, m_computeStart);
    if (!m_running)
    {
        return;
    }
    const uint32_t group = m_job->GetPhaseGroup(m_phase);
    const uint32_t size = m_job->GetGroupLast(group) - m_job->GetGroupFirst(group) + 1;
    if (++m_layerInPhase < size)
    {
        ComputeLayer();
        return;
    }
    PhaseDone();
}

void
ShardedWorker::PhaseDone()
{
    NS_LOG_FUNCTION(this);
    m_busy = false;
    if (m_job->IsBackwardPhase(m_phase))
    {
        const uint32_t group = m_job->GetPhaseGroup(m_phase);
        m_job->NotifyCollectiveReady(m_rank, m_iteration, m_job->GetReduceScatterSlot(group));
    }
    if (++m_phase < m_job->GetNPhases())
    {
        PhaseDue();
        return;
    }
    m_phasesDone = true;
    CheckIterationEnd();
}

void
ShardedWorker::CollectiveDone(uint32_t slot)
{
    NS_LOG_FUNCTION(this << slot);
    if (m_job->GetSlotKind(slot) == ShardedJob::ALL_GATHER)
    {
        m_gathered.at(slot) = true;
        TryStartPhase();
        return;
    }
    m_reduceScattered++;
    CheckIterationEnd();
}

void
ShardedWorker::CheckIterationEnd()
{
    NS_LOG_FUNCTION(this);
    if (!m_running || !m_phasesDone || m_reduceScattered < m_job->GetNGroups())
    {
        return;
    }
    // every gradient shard is reduced here: the optimizer step is local
    m_iteration++;
    BeginIteration();
}

// ------------------------------------------------------------------ ring

void
ShardedWorker::StartCollective(uint64_t iteration, uint32_t slot)
{
    NS_LOG_FUNCTION(this << iteration << slot);
    if (!m_running)
    {
        return;
    }
    if (m_ring->IsActive())
    {
        Error("collective started while another one is in flight here");
        return;
    }
    if (iteration != m_iteration)
    {
        Error("collective of iteration " + std::to_string(iteration) + " started in iteration " +
              std::to_string(m_iteration));
    }
    m_collSlot = slot;
    m_collGroup = m_job->GetSlotGroup(slot);
    m_ring->Start(m_job->GetNWorkers() - 1, m_job->GetGroupTos(m_collGroup));
}

uint64_t
ShardedWorker::PartitionBytes(uint32_t partition) const
{
    NS_LOG_FUNCTION(this << partition);
    return m_job->GetPartitionBytes(m_collGroup, partition);
}

void
ShardedWorker::CollectiveFinished()
{
    NS_LOG_FUNCTION(this);
    // Last partition in: the group is gathered (or its gradient shard reduced) here.
    m_job->NotifyCollectiveFinished(m_rank);
    CollectiveDone(m_collSlot);
}

} // namespace ns3
