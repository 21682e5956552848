#include "rdma-socket-factory.h"

#include "rdma-socket.h"

#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaSocketFactory");

NS_OBJECT_ENSURE_REGISTERED(RdmaSocketFactory);

TypeId
RdmaSocketFactory::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaSocketFactory")
                            .SetParent<SocketFactory>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<RdmaSocketFactory>();
    return tid;
}

RdmaSocketFactory::RdmaSocketFactory() = default;

RdmaSocketFactory::~RdmaSocketFactory() = default;

void
RdmaSocketFactory::SetNode(Ptr<Node> node)
{
    m_node = node;
}

Ptr<Socket>
RdmaSocketFactory::CreateSocket()
{
    NS_LOG_FUNCTION(this);
    Ptr<RdmaSocket> socket = CreateObject<RdmaSocket>();
    socket->SetStack(m_node, this);
    m_sockets.push_back(socket);
    return socket;
}

void
RdmaSocketFactory::WaitForNic(Ptr<RdmaSocket> socket, Ptr<QueueDisc> band)
{
    m_waiting.push_back(socket);
    if (m_watched.insert(band).second)
    {
        band->TraceConnectWithoutContext("Dequeue",
                                         MakeCallback(&RdmaSocketFactory::Dequeued, this));
    }
}

void
RdmaSocketFactory::Dequeued(Ptr<const QueueDiscItem>)
{
    if (m_waiting.empty())
    {
        return;
    }
    // each waiting queue pair tries once; one that still finds its band
    // full waits again (a host has a handful: the ring's two, a PS's few)
    std::vector<Ptr<RdmaSocket>> waiting;
    waiting.swap(m_waiting);
    for (const Ptr<RdmaSocket>& socket : waiting)
    {
        socket->NicReady();
    }
}

const std::vector<Ptr<RdmaSocket>>&
RdmaSocketFactory::GetSockets() const
{
    return m_sockets;
}

void
RdmaSocketFactory::DoDispose()
{
    m_waiting.clear();
    m_watched.clear();
    m_sockets.clear();
    m_node = nullptr;
    SocketFactory::DoDispose();
}

} // namespace ns3
