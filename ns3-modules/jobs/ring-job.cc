#include "ring-job.h"

#include "ring-worker.h"

#include "ns3/abort.h"
#include "ns3/integer.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RingJob");

NS_OBJECT_ENSURE_REGISTERED(RingJob);

TypeId
RingJob::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RingJob")
            .SetParent<TrainingJob>()
            .SetGroupName("Ddnn")
            .AddAttribute("AckTos",
                          "IP ToS of the receiving side of each ring connection (its ACKs); "
                          "-1 = the class of the collective in flight.",
                          IntegerValue(-1),
                          MakeIntegerAccessor(&RingJob::m_ackTos),
                          MakeIntegerChecker<int32_t>(-1, 255))
            .AddTraceSource("TransferCompleted",
                            "A partition a worker sent was wholly received by its right "
                            "neighbour: (worker, iteration, unit, step, partition, bytes, "
                            "start, end); one call per row of TransfersCsv() with an end.",
                            MakeTraceSourceAccessor(&RingJob::m_transferTrace),
                            "ns3::RingJob::TransferCallback");
    return tid;
}

RingJob::RingJob()
    : m_ackTos(-1),
      m_collIteration(0),
      m_collUnit(0),
      m_collTos(0),
      m_active(false),
      m_current(0, 0),
      m_finishedWorkers(0)
{
    NS_LOG_FUNCTION(this);
}

void
RingJob::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_tryStartEvent.Cancel();
    m_ringWorkers.clear();
    TrainingJob::DoDispose();
}

uint32_t
RingJob::GetNWorkers() const
{
    NS_LOG_FUNCTION(this);
    return m_ringWorkers.size();
}

int32_t
RingJob::GetAckTos() const
{
    NS_LOG_FUNCTION(this);
    return m_ackTos;
}

uint32_t
RingJob::AddRingWorker(Ptr<RingWorker> worker)
{
    NS_LOG_FUNCTION(this << worker);
    m_ringWorkers.push_back(worker);
    m_workerFinished.push_back(false);
    m_records.AddWorker(m_ringWorkers.size() - 1);
    m_transfers.AddWorker();
    return m_ringWorkers.size() - 1;
}

void
RingJob::SetCollective(uint64_t iteration, uint32_t unit, uint8_t tos)
{
    NS_LOG_FUNCTION(this << iteration << unit << unsigned(tos));
    m_collIteration = iteration;
    m_collUnit = unit;
    m_collTos = tos;
}

void
RingJob::CheckRank(uint32_t rank) const
{
    NS_LOG_FUNCTION(this << rank);
    NS_ABORT_MSG_IF(rank >= m_ringWorkers.size(),
                    GetInstanceTypeId().GetName() << ": no worker " << rank);
}

// ------------------------------------------------------------------ the arbiter

void
RingJob::ScheduleTryStart()
{
    NS_LOG_FUNCTION(this);
    if (!m_tryStartEvent.IsPending())
    {
        m_tryStartEvent = Simulator::ScheduleNow(&RingJob::TryStart, this);
    }
}

void
RingJob::TryStart()
{
    NS_LOG_FUNCTION(this);
    Collective next;
    // one collective at a time: the order is asked only with none in flight
    if (m_active || !PickCollective(next))
    {
        return;
    }
    m_current = Key(next.iteration, next.unit);
    m_active = true;
    m_finishedWorkers = 0;
    std::fill(m_workerFinished.begin(), m_workerFinished.end(), false);
    SetCollective(next.iteration, next.unit, next.tos);
    StartCollective(next);
}

void
RingJob::NotifyWorkerFinished(uint32_t rank, const char* what)
{
    NS_LOG_FUNCTION(this << rank << what);
    CheckRank(rank);
    if (!m_active || m_workerFinished[rank])
    {
        NotifyError(rank, std::string(what) + " finished twice or while none is in flight");
        return;
    }
    m_workerFinished[rank] = true;
    if (++m_finishedWorkers < m_ringWorkers.size())
    {
        return;
    }
    m_active = false;
    DoCollectiveFinished();
    ScheduleTryStart();
}

bool
RingJob::IsCollectiveActive() const
{
    NS_LOG_FUNCTION(this);
    return m_active;
}

RingJob::Key
RingJob::GetCurrentCollective() const
{
    NS_LOG_FUNCTION(this);
    return m_current;
}

// ------------------------------------------------------------------ records

void
RingJob::NotifyPartitionSent(uint32_t rank, uint32_t step, uint32_t partition, uint64_t bytes)
{
    NS_LOG_FUNCTION(this << rank << step << partition << bytes);
    CheckRank(rank);
    m_transfers.Sent(rank, m_collIteration, m_collUnit, m_collTos, step, partition, bytes);
}

void
RingJob::NotifyPartitionReceived(uint32_t rank, uint32_t step)
{
    NS_LOG_FUNCTION(this << rank << step);
    CheckRank(rank);
    std::string error;
    const RingTransfers::Row* row =
        m_transfers.Received(rank, step, m_collIteration, m_collUnit, error);
    if (!error.empty())
    {
        NotifyError(rank, error);
    }
    if (row)
    {
        m_transferTrace(row->worker,
                        row->iteration,
                        row->unit,
                        row->step,
                        row->partition,
                        row->bytes,
                        NanoSeconds(row->startNs),
                        NanoSeconds(row->endNs));
    }
}

void
RingJob::NotifyBytesSent(uint32_t rank, uint64_t bytes)
{
    NS_LOG_FUNCTION(this << rank << bytes);
    CheckRank(rank);
    m_transfers.AddBytesSent(rank, bytes);
}

void
RingJob::NotifyError(uint32_t rank, const std::string& what)
{
    NS_LOG_FUNCTION(this << rank << what);
    NotifyError("worker " + std::to_string(rank), what);
}

// ------------------------------------------------------------------ results

uint64_t
RingJob::GetBytesSent(uint32_t worker) const
{
    NS_LOG_FUNCTION(this << worker);
    CheckRank(worker);
    return m_transfers.GetBytesSent(worker);
}

uint32_t
RingJob::GetNConnectedWorkers() const
{
    NS_LOG_FUNCTION(this);
    uint32_t n = 0;
    for (const auto& worker : m_ringWorkers)
    {
        n += worker->IsConnected() && worker->HasLeftConnection();
    }
    return n;
}

} // namespace ns3
