#include "tcp-app-socket.h"

#include "tcp-socket-ddnn.h"

#include "ns3/inet-socket-address.h"
#include "ns3/ipv4-address.h"
#include "ns3/packet.h"

#include <algorithm>

namespace ns3
{

namespace
{

/// Every connection is welcome: the applications match it to what they planned.
bool
AcceptEvery(Ptr<Socket>, const Address&)
{
    return true;
}

} // namespace

Ptr<Socket>
ListenTcp(Ptr<Node> node,
          uint16_t port,
          uint8_t tos,
          Callback<void, Ptr<Socket>, const Address&> accepted)
{
    Ptr<Socket> listener = CreateTcpSocket(node);
    listener->SetIpTos(tos); // the SYN-ACK, in the application's class
    listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
    listener->Listen();
    listener->SetAcceptCallback(MakeCallback(&AcceptEvery), accepted);
    return listener;
}

uint64_t
ReceiveAll(Ptr<Socket> socket)
{
    uint64_t bytes = 0;
    while (Ptr<Packet> packet = socket->Recv())
    {
        if (packet->GetSize() == 0)
        {
            break;
        }
        bytes += packet->GetSize();
    }
    return bytes;
}

uint64_t
SendAsMuch(Ptr<Socket> socket, uint64_t bytes)
{
    uint64_t sent = 0;
    while (sent < bytes)
    {
        const uint32_t room = socket->GetTxAvailable();
        if (room == 0)
        {
            break; // the send callback calls again when the buffer drains
        }
        const auto chunk = static_cast<uint32_t>(std::min<uint64_t>(bytes - sent, room));
        const int accepted = socket->Send(Create<Packet>(chunk));
        if (accepted <= 0)
        {
            break;
        }
        sent += accepted;
    }
    return sent;
}

} // namespace ns3
