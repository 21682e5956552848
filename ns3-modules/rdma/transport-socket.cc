#include "transport-socket.h"

#include "rdma-socket-factory.h"
#include "tcp-socket-ddnn.h"

#include "ns3/abort.h"
#include "ns3/tcp-socket-factory.h"

namespace ns3
{

Ptr<Socket>
CreateTransportSocket(Ptr<Node> node, TypeId transport)
{
    if (transport == TcpSocketFactory::GetTypeId())
    {
        return CreateTcpSocket(node);
    }
    Ptr<SocketFactory> factory = node->GetObject<SocketFactory>(transport);
    NS_ABORT_MSG_IF(!factory,
                    "node " << node->GetId() << " has no " << transport.GetName()
                            << " (an RDMA job on a host without its `rdma` line)");
    return factory->CreateSocket();
}

} // namespace ns3
