// The stream socket a training job moves its bytes over: the harness's TCP
// (CreateTcpSocket) or an RDMA queue pair of the host's RoCEv2 stack
// (RdmaSocketFactory, a `rdma` recipe line). A job's Transport attribute
// names the factory; its channels make every socket here.
#ifndef DDNN_TRANSPORT_SOCKET_H
#define DDNN_TRANSPORT_SOCKET_H

#include "ns3/node.h"
#include "ns3/socket.h"
#include "ns3/type-id.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief A socket of `transport` (ns3::TcpSocketFactory or
 * ns3::RdmaSocketFactory) on `node`; aborts naming the node if it has no
 * such stack.
 */
Ptr<Socket> CreateTransportSocket(Ptr<Node> node, TypeId transport);

} // namespace ns3

#endif
