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
                            .SetParent<TrainingWorker>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<RingAllreduceWorker>();
    return tid;
}

RingAllreduceWorker::RingAllreduceWorker()
    : m_arIteration(0),
      m_arBuffer(0),
      m_ring(CreateObject<RingChannel>())
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
    SetupWorker(job, rank);
    m_job = job;
    m_left = left;
    m_right = right;
}

bool
RingAllreduceWorker::IsConnected() const
{
    NS_LOG_FUNCTION(this);
    return m_ring->IsConnected();
}

bool
RingAllreduceWorker::HasLeftConnection() const
{
    NS_LOG_FUNCTION(this);
    return m_ring->HasLeftConnection();
}

uint64_t
RingAllreduceWorker::GetBytesReceived() const
{
    NS_LOG_FUNCTION(this);
    return m_ring->GetBytesReceived();
}

void
RingAllreduceWorker::DoDispose()
{
    NS_LOG_FUNCTION(this);
    // The run may end with an allreduce in flight: the channel detaches
    // from its sockets so nothing calls back while ns-3 tears down.
    m_ring->Dispose();
    m_ring = nullptr;
    m_job = nullptr;
    TrainingWorker::DoDispose();
}

// ------------------------------------------------------------------ start and stop

void
RingAllreduceWorker::StartCommunication()
{
    NS_LOG_FUNCTION(this);
    m_partsSynced.assign(m_job->GetNLayers(), 0);
    m_ring->Setup(GetNode(),
                  m_rank,
                  m_job->GetNWorkers(),
                  m_left,
                  m_right,
                  m_job->GetPort(),
                  m_job->GetAckTos(),
                  "allreduce");
    m_ring->SetPartitionBytesCallback(MakeCallback(&RingAllreduceWorker::PartitionBytes, this));
    m_ring->SetPartitionSentCallback(MakeCallback(&RingAllreduceWorker::PartitionSent, this));
    m_ring->SetBytesSentCallback(MakeCallback(&RingAllreduceWorker::BytesSent, this));
    m_ring->SetPartitionReceivedCallback(
        MakeCallback(&RingAllreduceWorker::PartitionReceived, this));
    m_ring->SetFinishedCallback(MakeCallback(&RingAllreduceWorker::AllreduceDone, this));
    m_ring->SetErrorCallback(MakeCallback(&RingAllreduceWorker::Error, this));
    // The first data on the connection is buffer 0 (the first to close):
    // its class is the connection's class until the first allreduce.
    m_ring->Open(m_job->GetBufferTos(0));
}

void
RingAllreduceWorker::StopCommunication()
{
    NS_LOG_FUNCTION(this);
    m_ring->Halt();
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
RingAllreduceWorker::PartitionSent(uint32_t step, uint32_t partition, uint64_t bytes)
{
    NS_LOG_FUNCTION(this << step << partition << bytes);
    m_job->NotifyPartitionSent(m_rank, step, partition, bytes);
}

void
RingAllreduceWorker::BytesSent(uint64_t bytes)
{
    NS_LOG_FUNCTION(this << bytes);
    m_job->NotifyBytesSent(m_rank, bytes);
}

void
RingAllreduceWorker::PartitionReceived(uint32_t step)
{
    NS_LOG_FUNCTION(this << step);
    m_job->NotifyPartitionReceived(m_rank, step);
}

void
RingAllreduceWorker::AllreduceDone()
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
