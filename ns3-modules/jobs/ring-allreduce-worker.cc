#include "ring-allreduce-worker.h"

#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-factory.h"

#include <algorithm>
#include <sstream>

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
    : m_n(0),
      m_arActive(false),
      m_arIteration(0),
      m_arBuffer(0),
      m_rxStep(0),
      m_rxInStep(0),
      m_rxUnclaimed(0),
      m_rxTotal(0),
      m_txBacklog(0),
      m_connected(false),
      m_leftUp(false),
      m_ackTos(-1)
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
    return m_connected;
}

bool
RingAllreduceWorker::HasLeftConnection() const
{
    NS_LOG_FUNCTION(this);
    return m_leftUp;
}

uint64_t
RingAllreduceWorker::GetBytesReceived() const
{
    NS_LOG_FUNCTION(this);
    return m_rxTotal;
}

void
RingAllreduceWorker::ClearCallbacks(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    if (!socket)
    {
        return;
    }
    socket->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
    socket->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
    socket->SetConnectCallback(MakeNullCallback<void, Ptr<Socket>>(),
                               MakeNullCallback<void, Ptr<Socket>>());
    socket->SetCloseCallbacks(MakeNullCallback<void, Ptr<Socket>>(),
                              MakeNullCallback<void, Ptr<Socket>>());
    socket->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                              MakeNullCallback<void, Ptr<Socket>, const Address&>());
}

void
RingAllreduceWorker::DoDispose()
{
    NS_LOG_FUNCTION(this);
    // The run may end with an allreduce in flight: detach from the sockets
    // so nothing calls back into a disposed worker while ns-3 tears down.
    ClearCallbacks(m_sendSocket);
    ClearCallbacks(m_recvSocket);
    ClearCallbacks(m_listener);
    m_sendSocket = nullptr;
    m_recvSocket = nullptr;
    m_listener = nullptr;
    m_job = nullptr;
    TrainingWorker::DoDispose();
}

// ------------------------------------------------------------------ start

void
RingAllreduceWorker::StartCommunication()
{
    NS_LOG_FUNCTION(this);
    m_n = m_job->GetNWorkers();
    m_ackTos = m_job->GetAckTos();
    m_partsSynced.assign(m_job->GetNLayers(), 0);

    const uint16_t port = m_job->GetPort();
    // The first data on the connection is buffer 0 (the first to close):
    // its class is the connection's class until the first allreduce.
    const uint8_t firstTos = m_job->GetBufferTos(0);

    m_listener = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    m_listener->SetIpTos(m_ackTos < 0 ? firstTos : uint8_t(m_ackTos)); // SYN-ACK
    if (m_listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), port)) != 0)
    {
        Error("cannot bind port " + std::to_string(port));
    }
    m_listener->Listen();
    m_listener->SetAcceptCallback(MakeCallback(&RingAllreduceWorker::AcceptRequest, this),
                                  MakeCallback(&RingAllreduceWorker::Accepted, this));

    m_sendSocket = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    m_sendSocket->SetIpTos(firstTos); // before Connect(): the SYN travels in this class
    m_sendSocket->Bind();
    m_sendSocket->SetConnectCallback(
        MakeCallback(&RingAllreduceWorker::ConnectionSucceeded, this),
        MakeCallback(&RingAllreduceWorker::ConnectionFailed, this));
    m_sendSocket->SetCloseCallbacks(MakeCallback(&RingAllreduceWorker::SendSocketClosed, this),
                                    MakeCallback(&RingAllreduceWorker::SendSocketError, this));
    m_sendSocket->Connect(InetSocketAddress(m_right, port));
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

uint32_t
RingAllreduceWorker::SendPartition(uint32_t step) const
{
    NS_LOG_FUNCTION(this << step);
    return (m_rank + m_n - step % m_n) % m_n;
}

uint32_t
RingAllreduceWorker::ReceivePartition(uint32_t step) const
{
    NS_LOG_FUNCTION(this << step);
    // what the left neighbour (rank - 1) sends at this step
    return (m_rank + 2 * m_n - 1 - step % m_n) % m_n;
}

void
RingAllreduceWorker::SetTos(uint8_t tos)
{
    NS_LOG_FUNCTION(this << static_cast<uint32_t>(tos));
    // Segments (and retransmissions) take the socket's ToS when they are
    // sent, so the class switches for all data not yet transmitted. The
    // previous buffer is completely received (hence sent) by now.
    m_sendSocket->SetIpTos(tos);
    if (m_recvSocket)
    {
        m_recvSocket->SetIpTos(m_ackTos < 0 ? tos : uint8_t(m_ackTos));
    }
}

void
RingAllreduceWorker::StartAllreduce(uint64_t iteration, uint32_t buffer)
{
    NS_LOG_FUNCTION(this << iteration << buffer);
    if (!m_running)
    {
        return;
    }
    if (m_arActive)
    {
        Error("allreduce started while another one is in flight here");
        return;
    }
    m_arActive = true;
    m_arIteration = iteration;
    m_arBuffer = buffer;
    m_rxStep = 0;
    m_rxInStep = 0;
    SetTos(m_job->GetBufferTos(buffer));
    SendStep(0);
    ProcessReceived();
}

void
RingAllreduceWorker::SendStep(uint32_t step)
{
    NS_LOG_FUNCTION(this << step);
    const uint32_t partition = SendPartition(step);
    const uint64_t bytes = m_job->GetPartitionBytes(m_arBuffer, partition);
    m_job->NotifyPartitionSent(m_rank, step, partition, bytes);
    m_txBacklog += bytes;
    Flush(m_sendSocket, 0);
}

void
RingAllreduceWorker::Flush(Ptr<Socket>, uint32_t)
{
    NS_LOG_FUNCTION(this);
    if (!m_connected || !m_running)
    {
        return; // sent once the connection is up
    }
    while (m_txBacklog > 0)
    {
        const uint32_t room = m_sendSocket->GetTxAvailable();
        if (room == 0)
        {
            return; // the send callback calls again when the buffer drains
        }
        const uint32_t chunk = uint32_t(std::min<uint64_t>(m_txBacklog, room));
        const int accepted = m_sendSocket->Send(Create<Packet>(chunk));
        if (accepted < 0)
        {
            Error("send failed (errno " + std::to_string(int(m_sendSocket->GetErrno())) + ")");
            return;
        }
        if (accepted == 0)
        {
            return;
        }
        m_txBacklog -= uint64_t(accepted);
        m_job->NotifyBytesSent(m_rank, uint64_t(accepted));
    }
}

void
RingAllreduceWorker::Receive(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    while (Ptr<Packet> packet = socket->Recv())
    {
        const uint32_t size = packet->GetSize();
        if (size == 0)
        {
            break;
        }
        m_rxUnclaimed += size;
        m_rxTotal += size;
    }
    ProcessReceived();
}

void
RingAllreduceWorker::ProcessReceived()
{
    NS_LOG_FUNCTION(this);
    const uint32_t steps = 2 * (m_n - 1);
    while (m_arActive && m_running)
    {
        const uint64_t size = m_job->GetPartitionBytes(m_arBuffer, ReceivePartition(m_rxStep));
        const uint64_t take = std::min(m_rxUnclaimed, size - m_rxInStep);
        m_rxInStep += take;
        m_rxUnclaimed -= take;
        if (m_rxInStep < size)
        {
            return; // more of this partition to come
        }
        m_job->NotifyPartitionReceived(m_rank, m_rxStep);
        m_rxStep++;
        m_rxInStep = 0;
        if (m_rxStep == steps)
        {
            // Last partition in: this worker holds the whole reduced buffer.
            m_arActive = false;
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
            break;
        }
        SendStep(m_rxStep); // step s+1 only after the whole step-s partition arrived
    }
    if (!m_arActive && m_rxUnclaimed > 0)
    {
        Error(std::to_string(m_rxUnclaimed) +
              " bytes received from the left neighbour outside any allreduce");
        m_rxUnclaimed = 0;
    }
}

// ------------------------------------------------------------------ sockets

void
RingAllreduceWorker::ConnectionSucceeded(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    m_connected = true;
    socket->SetSendCallback(MakeCallback(&RingAllreduceWorker::Flush, this));
    Flush(socket, socket->GetTxAvailable());
}

void
RingAllreduceWorker::ConnectionFailed(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    Error("connection to the right neighbour " + [this] {
        std::ostringstream os;
        os << m_right;
        return os.str();
    }() + " failed (errno " + std::to_string(int(socket->GetErrno())) + ")");
}

bool
RingAllreduceWorker::AcceptRequest(Ptr<Socket>, const Address& from)
{
    NS_LOG_FUNCTION(this << from);
    const Ipv4Address peer = InetSocketAddress::ConvertFrom(from).GetIpv4();
    if (peer != m_left || m_recvSocket)
    {
        std::ostringstream os;
        os << "refused a connection from " << peer << " (expected one from the left neighbour "
           << m_left << ")";
        Error(os.str());
        return false;
    }
    return true;
}

void
RingAllreduceWorker::Accepted(Ptr<Socket> socket, const Address&)
{
    NS_LOG_FUNCTION(this << socket);
    m_recvSocket = socket;
    m_leftUp = true;
    if (m_arActive)
    {
        m_recvSocket->SetIpTos(m_ackTos < 0 ? m_job->GetBufferTos(m_arBuffer)
                                            : uint8_t(m_ackTos));
    }
    socket->SetRecvCallback(MakeCallback(&RingAllreduceWorker::Receive, this));
    socket->SetCloseCallbacks(MakeCallback(&RingAllreduceWorker::RecvSocketClosed, this),
                              MakeCallback(&RingAllreduceWorker::RecvSocketError, this));
}

void
RingAllreduceWorker::SendSocketClosed(Ptr<Socket>)
{
    NS_LOG_FUNCTION(this);
    m_connected = false;
    Error("the connection to the right neighbour was closed");
}

void
RingAllreduceWorker::SendSocketError(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    // (ns-3 leaves errno at 0 when the retransmissions run out)
    m_connected = false;
    Error("the connection to the right neighbour failed (errno " +
          std::to_string(int(socket->GetErrno())) + ")");
}

void
RingAllreduceWorker::RecvSocketClosed(Ptr<Socket>)
{
    NS_LOG_FUNCTION(this);
    m_leftUp = false;
    Error("the left neighbour closed its connection");
}

void
RingAllreduceWorker::RecvSocketError(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    m_leftUp = false;
    Error("the connection from the left neighbour failed (errno " +
          std::to_string(int(socket->GetErrno())) + ")");
}

} // namespace ns3
