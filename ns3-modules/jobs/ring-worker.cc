#include "ring-worker.h"

#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RingWorker");

NS_OBJECT_ENSURE_REGISTERED(RingWorker);

TypeId
RingWorker::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RingWorker").SetParent<TrainingWorker>().SetGroupName("Ddnn");
    return tid;
}

RingWorker::RingWorker()
    : m_ring(CreateObject<RingChannel>())
{
    NS_LOG_FUNCTION(this);
}

void
RingWorker::SetupRing(Ptr<RingJob> job, uint32_t rank, Ipv4Address left, Ipv4Address right)
{
    NS_LOG_FUNCTION(this << job << rank << left << right);
    SetupWorker(job, rank);
    m_ringJob = job;
    m_left = left;
    m_right = right;
}

bool
RingWorker::IsConnected() const
{
    NS_LOG_FUNCTION(this);
    return m_ring->IsConnected();
}

bool
RingWorker::HasLeftConnection() const
{
    NS_LOG_FUNCTION(this);
    return m_ring->HasLeftConnection();
}

uint64_t
RingWorker::GetBytesReceived() const
{
    NS_LOG_FUNCTION(this);
    return m_ring->GetBytesReceived();
}

void
RingWorker::DoDispose()
{
    NS_LOG_FUNCTION(this);
    // The run may end with a collective in flight: the channel detaches
    // from its sockets so nothing calls back while ns-3 tears down.
    m_ring->Dispose();
    m_ring = nullptr;
    m_ringJob = nullptr;
    TrainingWorker::DoDispose();
}

void
RingWorker::OpenRing(const std::string& collective, uint8_t firstTos)
{
    NS_LOG_FUNCTION(this << collective << unsigned(firstTos));
    m_ring->Setup(GetNode(),
                  m_rank,
                  m_ringJob->GetNWorkers(),
                  m_left,
                  m_right,
                  m_ringJob->GetPort(),
                  m_ringJob->GetAckTos(),
                  collective,
                  m_ringJob->GetTransport());
    m_ring->SetPartitionBytesCallback(MakeCallback(&RingWorker::PartitionBytes, this));
    m_ring->SetPartitionSentCallback(MakeCallback(&RingWorker::PartitionSent, this));
    m_ring->SetBytesSentCallback(MakeCallback(&RingWorker::BytesSent, this));
    m_ring->SetPartitionReceivedCallback(MakeCallback(&RingWorker::PartitionReceived, this));
    m_ring->SetFinishedCallback(MakeCallback(&RingWorker::CollectiveFinished, this));
    m_ring->SetErrorCallback(MakeCallback(&RingWorker::Error, this));
    m_ring->Open(firstTos);
}

void
RingWorker::StopCommunication()
{
    NS_LOG_FUNCTION(this);
    m_ring->Halt();
}

void
RingWorker::PartitionSent(uint32_t step, uint32_t partition, uint64_t bytes)
{
    NS_LOG_FUNCTION(this << step << partition << bytes);
    m_ringJob->NotifyPartitionSent(m_rank, step, partition, bytes);
}

void
RingWorker::BytesSent(uint64_t bytes)
{
    NS_LOG_FUNCTION(this << bytes);
    m_ringJob->NotifyBytesSent(m_rank, bytes);
}

void
RingWorker::PartitionReceived(uint32_t step)
{
    NS_LOG_FUNCTION(this << step);
    m_ringJob->NotifyPartitionReceived(m_rank, step);
}

} // namespace ns3
