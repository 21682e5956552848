#include "tcp-socket-ddnn.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/object-factory.h"
#include "ns3/rtt-estimator.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-recovery-ops.h"
#include "ns3/type-id.h"

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
                            .AddConstructor<TcpSocketDdnn>();
    return tid;
}

TcpSocketDdnn::TcpSocketDdnn()
    : TcpSocketBase()
{
    NS_LOG_FUNCTION(this);
}

TcpSocketDdnn::TcpSocketDdnn(const TcpSocketDdnn& sock)
    : TcpSocketBase(sock)
{
    NS_LOG_FUNCTION(this);
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
