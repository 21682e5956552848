#include "ring-allreduce-worker.h"

#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RingAllreduceWorker");

NS_OBJECT_ENSURE_REGISTERED(RingAllreduceWorker);

TypeId
RingAllreduceWorker::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RingAllreduceWorker")
                            .SetParent<RingWorker>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<RingAllreduceWorker>();
    return tid;
}

RingAllreduceWorker::RingAllreduceWorker()
    : m_arIteration(0),
      m_arBuffer(0)
{
    NS_LOG_FUNCTION(this);
}

void
RingAllreduceWorker::Setup(Ptr<RingAllreduceJob> job,
                           uint32_t rank,
                           Ipv4Address left,
                           Ipv4Address right)
{
    NS_LOG_FUNCTION(this << job << rank << left << right);
    SetupRing(job, rank, left, right);
    m_job = job;
}

void
RingAllreduceWorker::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_job = nullptr;
    RingWorker::DoDispose();
}

// ------------------------------------------------------------------ start

void
RingAllreduceWorker::StartCommunication()
{
    NS_LOG_FUNCTION(this);
    m_partsSynced.assign(m_job->GetNLayers(), 0);
    // The first data on the connection is buffer 0 (the first to close):
    // its class is the connection's class until the first allreduce.
    OpenRing("allreduce", m_job->GetBufferTos(0));
}

// ------------------------------------------------------------------ compute

void
RingAllreduceWorker::GradientsReady(uint64_t iteration, uint32_t layer)
{
    NS_LOG_FUNCTION(this << iteration << layer);
    for (uint32_t buffer : m_job->GetBuffersClosingAfter(layer))
    {
        m_job->NotifyBufferReady(m_rank, iteration, buffer);
    }
}

// ------------------------------------------------------------------ ring

void
RingAllreduceWorker::StartAllreduce(uint64_t iteration, uint32_t buffer, uint8_t tos)
{
    NS_LOG_FUNCTION(this << iteration << buffer << unsigned(tos));
    if (!m_running)
    {
        return;
    }
    if (m_ring->IsActive())
    {
        Error("allreduce started while another one is in flight here");
        return;
    }
    m_arIteration = iteration;
    m_arBuffer = buffer;
    m_ring->Start(2 * (m_job->GetNWorkers() - 1), tos);
}

void
RingAllreduceWorker::RaiseAllreduce(uint8_t tos)
{
    NS_LOG_FUNCTION(this << unsigned(tos));
    if (m_running)
    {
        m_ring->Raise(tos);
    }
}

uint64_t
RingAllreduceWorker::PartitionBytes(uint32_t partition) const
{
    NS_LOG_FUNCTION(this << partition);
    return m_job->GetPartitionBytes(m_arBuffer, partition);
}

void
RingAllreduceWorker::CollectiveFinished()
{
    NS_LOG_FUNCTION(this);
    // Last partition in: this worker holds the whole reduced buffer.
    const auto& buffer = m_job->GetBuffer(m_arBuffer);
    for (uint32_t layer : buffer.layers)
    {
        // a partitioned layer is synchronised with its last partition
        // (all of them finish before the next iteration's are ready)
        if (++m_partsSynced[layer] == m_job->GetNBuffersOfLayer(layer))
        {
            m_partsSynced[layer] = 0;
            m_compute.SetSynced(layer, m_arIteration);
        }
    }
    m_job->NotifyAllreduceFinished(m_rank);
    m_compute.TryForward();
}

} // namespace ns3
