#include "ring-channel.h"

#include "transport-socket.h"

#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/packet.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RingChannel");

NS_OBJECT_ENSURE_REGISTERED(RingChannel);

TypeId
RingChannel::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RingChannel")
                            .SetParent<Object>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<RingChannel>();
    return tid;
}

RingChannel::RingChannel()
    : m_rank(0),
      m_n(0),
      m_port(0),
      m_ackTos(-1),
      m_collective("collective"),
      m_open(false),
      m_active(false),
      m_steps(0),
      m_tos(0),
      m_rxStep(0),
      m_rxInStep(0),
      m_rxUnclaimed(0),
      m_rxTotal(0),
      m_txBacklog(0),
      m_connected(false),
      m_leftUp(false)
{
    NS_LOG_FUNCTION(this);
}

void
RingChannel::Setup(Ptr<Node> node,
                   uint32_t rank,
                   uint32_t nRanks,
                   Ipv4Address left,
                   Ipv4Address right,
                   uint16_t port,
                   int32_t ackTos,
                   const std::string& collective,
                   TypeId transport)
{
    NS_LOG_FUNCTION(this << node << rank << nRanks << left << right << port << ackTos
                         << collective);
    m_node = node;
    m_rank = rank;
    m_n = nRanks;
    m_left = left;
    m_right = right;
    m_port = port;
    m_ackTos = ackTos;
    m_collective = collective;
    m_transport = transport;
}

void
RingChannel::SetPartitionBytesCallback(Callback<uint64_t, uint32_t> partitionBytes)
{
    NS_LOG_FUNCTION(this);
    m_partitionBytes = partitionBytes;
}

void
RingChannel::SetPartitionSentCallback(Callback<void, uint32_t, uint32_t, uint64_t> sent)
{
    NS_LOG_FUNCTION(this);
    m_partitionSent = sent;
}

void
RingChannel::SetBytesSentCallback(Callback<void, uint64_t> bytesSent)
{
    NS_LOG_FUNCTION(this);
    m_bytesSent = bytesSent;
}

void
RingChannel::SetPartitionReceivedCallback(Callback<void, uint32_t> received)
{
    NS_LOG_FUNCTION(this);
    m_partitionReceived = received;
}

void
RingChannel::SetFinishedCallback(Callback<void> finished)
{
    NS_LOG_FUNCTION(this);
    m_finished = finished;
}

void
RingChannel::SetErrorCallback(Callback<void, const std::string&> error)
{
    NS_LOG_FUNCTION(this);
    m_error = error;
}

bool
RingChannel::IsActive() const
{
    NS_LOG_FUNCTION(this);
    return m_active;
}

bool
RingChannel::IsConnected() const
{
    NS_LOG_FUNCTION(this);
    return m_connected;
}

bool
RingChannel::HasLeftConnection() const
{
    NS_LOG_FUNCTION(this);
    return m_leftUp;
}

uint64_t
RingChannel::GetBytesReceived() const
{
    NS_LOG_FUNCTION(this);
    return m_rxTotal;
}

void
RingChannel::ClearCallbacks(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(socket);
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
RingChannel::DoDispose()
{
    NS_LOG_FUNCTION(this);
    // The run may end with a collective in flight: detach from the sockets
    // so nothing calls back into a disposed owner while ns-3 tears down.
    m_open = false;
    ClearCallbacks(m_sendSocket);
    ClearCallbacks(m_recvSocket);
    ClearCallbacks(m_listener);
    m_sendSocket = nullptr;
    m_recvSocket = nullptr;
    m_listener = nullptr;
    m_node = nullptr;
    m_partitionBytes = MakeNullCallback<uint64_t, uint32_t>();
    m_partitionSent = MakeNullCallback<void, uint32_t, uint32_t, uint64_t>();
    m_bytesSent = MakeNullCallback<void, uint64_t>();
    m_partitionReceived = MakeNullCallback<void, uint32_t>();
    m_finished = MakeNullCallback<void>();
    m_error = MakeNullCallback<void, const std::string&>();
    Object::DoDispose();
}

// ------------------------------------------------------------------ open and halt

void
RingChannel::Open(uint8_t firstTos)
{
    NS_LOG_FUNCTION(this << static_cast<uint32_t>(firstTos));
    m_open = true;
    m_listener = CreateTransportSocket(m_node, m_transport);
    m_listener->SetIpTos(m_ackTos < 0 ? firstTos : uint8_t(m_ackTos)); // SYN-ACK
    if (m_listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_port)) != 0)
    {
        m_error("cannot bind port " + std::to_string(m_port));
    }
    m_listener->Listen();
    m_listener->SetAcceptCallback(MakeCallback(&RingChannel::AcceptRequest, this),
                                  MakeCallback(&RingChannel::Accepted, this));

    m_sendSocket = CreateTransportSocket(m_node, m_transport);
    m_sendSocket->SetIpTos(firstTos); // before Connect(): the SYN travels in this class
    m_sendSocket->Bind();
    m_sendSocket->SetConnectCallback(MakeCallback(&RingChannel::ConnectionSucceeded, this),
                                     MakeCallback(&RingChannel::ConnectionFailed, this));
    m_sendSocket->SetCloseCallbacks(MakeCallback(&RingChannel::SendSocketClosed, this),
                                    MakeCallback(&RingChannel::SendSocketError, this));
    m_sendSocket->Connect(InetSocketAddress(m_right, m_port));
}

void
RingChannel::Halt()
{
    NS_LOG_FUNCTION(this);
    m_open = false;
}

// ------------------------------------------------------------------ steps

uint32_t
RingChannel::SendPartition(uint32_t step) const
{
    NS_LOG_FUNCTION(this << step);
    return (m_rank + m_n - step % m_n) % m_n;
}

uint32_t
RingChannel::ReceivePartition(uint32_t step) const
{
    NS_LOG_FUNCTION(this << step);
    // what the left neighbour (rank - 1) sends at this step
    return (m_rank + 2 * m_n - 1 - step % m_n) % m_n;
}

void
RingChannel::SetTos(uint8_t tos)
{
    NS_LOG_FUNCTION(this << static_cast<uint32_t>(tos));
    // Segments (and retransmissions) take the socket's ToS when they are
    // sent, so the class switches for all data not yet transmitted. The
    // previous collective is completely received (hence sent) by now.
    m_tos = tos;
    m_sendSocket->SetIpTos(tos);
    if (m_recvSocket)
    {
        m_recvSocket->SetIpTos(m_ackTos < 0 ? tos : uint8_t(m_ackTos));
    }
}

void
RingChannel::Start(uint32_t steps, uint8_t tos)
{
    NS_LOG_FUNCTION(this << steps << static_cast<uint32_t>(tos));
    if (m_active)
    {
        m_error(m_collective + " started while another one is in flight here");
        return;
    }
    m_active = true;
    m_steps = steps;
    m_rxStep = 0;
    m_rxInStep = 0;
    SetTos(tos);
    SendStep(0);
    ProcessReceived();
}

void
RingChannel::Raise(uint8_t tos)
{
    NS_LOG_FUNCTION(this << static_cast<uint32_t>(tos));
    if (m_active && m_open && tos != m_tos)
    {
        SetTos(tos);
    }
}

void
RingChannel::SendStep(uint32_t step)
{
    NS_LOG_FUNCTION(this << step);
    const uint32_t partition = SendPartition(step);
    const uint64_t bytes = m_partitionBytes(partition);
    m_partitionSent(step, partition, bytes);
    m_txBacklog += bytes;
    Flush(m_sendSocket, 0);
}

void
RingChannel::Flush(Ptr<Socket>, uint32_t)
{
    NS_LOG_FUNCTION(this);
    if (!m_connected || !m_open)
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
            m_error("send failed (errno " + std::to_string(int(m_sendSocket->GetErrno())) + ")");
            return;
        }
        if (accepted == 0)
        {
            return;
        }
        m_txBacklog -= uint64_t(accepted);
        m_bytesSent(uint64_t(accepted));
    }
}

void
RingChannel::Receive(Ptr<Socket> socket)
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
RingChannel::ProcessReceived()
{
    NS_LOG_FUNCTION(this);
    while (m_active && m_open)
    {
        const uint64_t size = m_partitionBytes(ReceivePartition(m_rxStep));
        const uint64_t take = std::min(m_rxUnclaimed, size - m_rxInStep);
        m_rxInStep += take;
        m_rxUnclaimed -= take;
        if (m_rxInStep < size)
        {
            return; // more of this partition to come
        }
        m_partitionReceived(m_rxStep);
        m_rxStep++;
        m_rxInStep = 0;
        if (m_rxStep == m_steps)
        {
            // Last partition in: the collective is complete here.
            m_active = false;
            m_finished();
            break;
        }
        SendStep(m_rxStep); // step s+1 only after the whole step-s partition arrived
    }
    if (!m_active && m_rxUnclaimed > 0)
    {
        m_error(std::to_string(m_rxUnclaimed) +
                " bytes received from the left neighbour outside any " + m_collective);
        m_rxUnclaimed = 0;
    }
}

// ------------------------------------------------------------------ sockets

void
RingChannel::ConnectionSucceeded(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    m_connected = true;
    socket->SetSendCallback(MakeCallback(&RingChannel::Flush, this));
    Flush(socket, socket->GetTxAvailable());
}

void
RingChannel::ConnectionFailed(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    std::ostringstream os;
    os << "connection to the right neighbour " << m_right << " failed (errno "
       << int(socket->GetErrno()) << ")";
    m_error(os.str());
}

bool
RingChannel::AcceptRequest(Ptr<Socket>, const Address& from)
{
    NS_LOG_FUNCTION(this << from);
    const Ipv4Address peer = InetSocketAddress::ConvertFrom(from).GetIpv4();
    if (peer != m_left || m_recvSocket)
    {
        std::ostringstream os;
        os << "refused a connection from " << peer << " (expected one from the left neighbour "
           << m_left << ")";
        m_error(os.str());
        return false;
    }
    return true;
}

void
RingChannel::Accepted(Ptr<Socket> socket, const Address&)
{
    NS_LOG_FUNCTION(this << socket);
    m_recvSocket = socket;
    m_leftUp = true;
    if (m_active)
    {
        m_recvSocket->SetIpTos(m_ackTos < 0 ? m_tos : uint8_t(m_ackTos));
    }
    socket->SetRecvCallback(MakeCallback(&RingChannel::Receive, this));
    socket->SetCloseCallbacks(MakeCallback(&RingChannel::RecvSocketClosed, this),
                              MakeCallback(&RingChannel::RecvSocketError, this));
}

void
RingChannel::SendSocketClosed(Ptr<Socket>)
{
    NS_LOG_FUNCTION(this);
    m_connected = false;
    m_error("the connection to the right neighbour was closed");
}

void
RingChannel::SendSocketError(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    // (ns-3 leaves errno at 0 when the retransmissions run out)
    m_connected = false;
    m_error("the connection to the right neighbour failed (errno " +
            std::to_string(int(socket->GetErrno())) + ")");
}

void
RingChannel::RecvSocketClosed(Ptr<Socket>)
{
    NS_LOG_FUNCTION(this);
    m_leftUp = false;
    m_error("the left neighbour closed its connection");
}

void
RingChannel::RecvSocketError(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    m_leftUp = false;
    m_error("the connection from the left neighbour failed (errno " +
            std::to_string(int(socket->GetErrno())) + ")");
}

} // namespace ns3
