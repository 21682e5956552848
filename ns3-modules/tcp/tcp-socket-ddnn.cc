#include "tcp-socket-ddnn.h"

#include "ns3/abort.h"
#include "ns3/ipv4-end-point.h"
#include "ns3/log.h"
#include "ns3/object-map.h"
#include "ns3/object-factory.h"
#include "ns3/rtt-estimator.h"
#include "ns3/simulator.h"
#include "ns3/tcp-tx-buffer.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-recovery-ops.h"
#include "ns3/type-id.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TcpSocketDdnn");

NS_OBJECT_ENSURE_REGISTERED(TcpSocketDdnn);

TypeId
TcpSocketDdnn::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TcpSocketDdnn")
                            .SetParent<TcpSocketBase>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<TcpSocketDdnn>()
                            .AddTraceSource("Timeout",
                                            "A retransmission timeout counted: the last "
                                            "progress it waited from, its time, and whether "
                                            "it was spurious",
                                            MakeTraceSourceAccessor(&TcpSocketDdnn::m_timeoutTrace),
                                            "ns3::TcpSocketDdnn::TimeoutCallback");
    return tid;
}

TcpSocketDdnn::TcpSocketDdnn()
    : TcpSocketBase()
{
    NS_LOG_FUNCTION(this);
    WatchStates();
}

TcpSocketDdnn::TcpSocketDdnn(const TcpSocketDdnn& sock)
    : TcpSocketBase(sock),
      m_lastProgress(Simulator::Now()),   // a listener's fork: the peer's SYN arrived now
      m_peerReceived(sock.m_peerReceived),
      m_peerKey(sock.m_peerKey)
{
    NS_LOG_FUNCTION(this);
    WatchStates();
}

void
TcpSocketDdnn::WatchStates()
{
    TraceConnectWithoutContext("CongState", MakeCallback(&TcpSocketDdnn::CongStateChanged, this));
    TraceConnectWithoutContext("State", MakeCallback(&TcpSocketDdnn::StateChanged, this));
}

const TcpSocketDdnn::LossEvents&
TcpSocketDdnn::GetLossEvents() const
{
    return m_loss;
}

void
TcpSocketDdnn::SetPeerReceived(Callback<uint64_t, uint64_t> received, uint64_t key)
{
    m_peerReceived = received;
    m_peerKey = key;
}

int
TcpSocketDdnn::Connect(const Address& address)
{
    m_lastProgress = Simulator::Now();
    return TcpSocketBase::Connect(address);
}

int
TcpSocketDdnn::Send(Ptr<Packet> p, uint32_t flags)
{
    if (m_txBuffer->Size() == 0)
    {
        m_lastProgress = Simulator::Now();
    }
    return TcpSocketBase::Send(p, flags);
}

void
TcpSocketDdnn::CongStateChanged(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t to)
{
    if (to == TcpSocketState::CA_RECOVERY)
    {
        ++m_loss.fastRetransmits;
    }
}

void
TcpSocketDdnn::StateChanged(TcpStates_t, TcpStates_t to)
{
    if (to == ESTABLISHED)
    {
        m_lastProgress = Simulator::Now();
    }
}

void
TcpSocketDdnn::ReTxTimeout()
{
    NS_LOG_FUNCTION(this);
    // the timeouts TcpSocketBase acts on: a SYN, data or a FIN to resend
    // (in CLOSED and TIME_WAIT, or with nothing left to send, it returns)
    bool resends = m_state == SYN_SENT || m_state == SYN_RCVD || m_txBuffer->Size() > 0 ||
                   m_state == FIN_WAIT_1 || m_state == CLOSING || m_state == LAST_ACK;
    if (m_state != CLOSED && m_state != TIME_WAIT && resends)
    {
        Time now = Simulator::Now();
        ++m_loss.timeouts;
        m_loss.timeoutWait += now - m_lastProgress;
        m_backoffs.emplace_back(m_lastProgress.GetNanoSeconds(), now.GetNanoSeconds());
        // spurious: the peer application already has the head segment's bytes
        bool spurious = !m_peerReceived.IsNull() && m_txBuffer->Size() > 0 &&
                        m_peerReceived(m_peerKey) > m_ackedBytes;
        if (spurious)
        {
            ++m_loss.spuriousTimeouts;
        }
        m_timeoutTrace(m_lastProgress, now, spurious);
        m_lastProgress = now;   // a further timeout waits from this one
    }
    TcpSocketBase::ReTxTimeout();
}

TcpSocketDdnn::~TcpSocketDdnn()
{
    NS_LOG_FUNCTION(this);
}

TypeId
TcpSocketDdnn::GetInstanceTypeId() const
{
    return TcpSocketDdnn::GetTypeId();
}

std::vector<Ptr<TcpSocketDdnn>>
TcpSocketDdnn::OnPorts(Ptr<Node> node, uint16_t firstPort, uint16_t lastPort)
{
    std::vector<Ptr<TcpSocketDdnn>> out;
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    if (!tcp)
    {
        return out;
    }
    // the protocol's own list of its sockets (its SocketList attribute)
    ObjectMapValue sockets;
    tcp->GetAttribute("SocketList", sockets);
    const auto inRange = [=](uint16_t port) { return firstPort <= port && port <= lastPort; };
    for (auto it = sockets.Begin(); it != sockets.End(); ++it)
    {
        Ptr<TcpSocketDdnn> socket = DynamicCast<TcpSocketDdnn>(it->second);
        if (socket && socket->m_endPoint &&
            (inRange(socket->m_endPoint->GetLocalPort()) ||
             inRange(socket->m_endPoint->GetPeerPort())))
        {
            out.push_back(socket);
        }
    }
    return out;
}

TcpSocketDdnn::LossEvents
TcpSocketDdnn::SumOnPorts(Ptr<Node> node, uint16_t firstPort, uint16_t lastPort)
{
    NS_LOG_FUNCTION(node << firstPort << lastPort);
    LossEvents sum;
    for (const Ptr<TcpSocketDdnn>& socket : OnPorts(node, firstPort, lastPort))
    {
        const LossEvents& loss = socket->m_loss;
        sum.timeouts += loss.timeouts;
        sum.spuriousTimeouts += loss.spuriousTimeouts;
        sum.fastRetransmits += loss.fastRetransmits;
        sum.timeoutWait += loss.timeoutWait;
    }
    return sum;
}

std::string
TcpSocketDdnn::BackoffsOnPorts(Ptr<Node> node, uint16_t firstPort, uint16_t lastPort)
{
    NS_LOG_FUNCTION(node << firstPort << lastPort);
    std::ostringstream out;
    for (const Ptr<TcpSocketDdnn>& socket : OnPorts(node, firstPort, lastPort))
    {
        for (const auto& [from, to] : socket->m_backoffs)
        {
            out << from << ',' << to << '\n';
        }
    }
    return out.str();
}

Ptr<TcpSocketBase>
TcpSocketDdnn::Fork()
{
    // a listener's connections are of its class
    return CopyObject<TcpSocketDdnn>(this);
}

void
TcpSocketDdnn::ProcessAck(const SequenceNumber32& ackNumber,
                          bool scoreboardUpdated,
                          uint32_t currentDelivered,
                          const SequenceNumber32& oldHeadSequence,
                          bool receivedData)
{
    NS_LOG_FUNCTION(this << ackNumber);
    if (m_tcb->m_congState == TcpSocketState::CA_OPEN && m_dupAckCount != 0)
    {
        NS_LOG_DEBUG("Open with " << m_dupAckCount << " duplicate ACKs left from CWR: cleared");
        m_dupAckCount = 0;
    }
    if (ackNumber > oldHeadSequence)
    {
        // progress: the head moved (the FIN's byte, acked last, counts too)
        m_ackedBytes += static_cast<uint32_t>(ackNumber - oldHeadSequence);
        m_lastProgress = Simulator::Now();
    }
    TcpSocketBase::ProcessAck(ackNumber,
                              scoreboardUpdated,
                              currentDelivered,
                              oldHeadSequence,
                              receivedData);
}

Ptr<Socket>
CreateTcpSocket(Ptr<Node> node)
{
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    NS_ABORT_MSG_IF(!tcp, "CreateTcpSocket: node " << node->GetId() << " has no TCP");
    // TcpL4Protocol::CreateSocket's recipe, with this class for the socket
    TypeIdValue congestion;
    TypeIdValue recovery;
    TypeIdValue rtt;
    tcp->GetAttribute("SocketType", congestion);
    tcp->GetAttribute("RecoveryType", recovery);
    tcp->GetAttribute("RttEstimatorType", rtt);
    ObjectFactory congestionFactory;
    ObjectFactory recoveryFactory;
    ObjectFactory rttFactory;
    congestionFactory.SetTypeId(congestion.Get());
    recoveryFactory.SetTypeId(recovery.Get());
    rttFactory.SetTypeId(rtt.Get());

    Ptr<TcpSocketDdnn> socket = CreateObject<TcpSocketDdnn>();
    socket->SetNode(node);
    socket->SetTcp(tcp);
    socket->SetRtt(rttFactory.Create<RttEstimator>());
    socket->SetCongestionControlAlgorithm(congestionFactory.Create<TcpCongestionOps>());
    socket->SetRecoveryAlgorithm(recoveryFactory.Create<TcpRecoveryOps>());
    // TcpL4Protocol lists it when it is bound (Bind, Connect), as it lists
    // every socket; listing it here too would cost a scan of its list
    return socket;
}

} // namespace ns3
