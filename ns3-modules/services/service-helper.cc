#include "service-helper.h"

#include "ns3/boolean.h"
#include "ns3/bulk-send-application.h"
#include "ns3/inet-socket-address.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/ipv4-address.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ServiceHelper");

ServiceHelper::ServiceHelper(Ptr<ServiceLog> log)
    : m_log(log)
{
    NS_LOG_FUNCTION(this << log);
}

Ptr<RequestServerApplication>
ServiceHelper::InstallServer(Ptr<Node> node, uint16_t port, uint8_t tos) const
{
    NS_LOG_FUNCTION(this << node << port << static_cast<uint32_t>(tos));
    auto server = CreateObject<RequestServerApplication>();
    server->SetServiceLog(m_log);
    server->SetAttribute("Port", UintegerValue(port));
    server->SetAttribute("Tos", UintegerValue(tos));
    node->AddApplication(server);
    return server;
}

Ptr<RequestClientApplication>
ServiceHelper::InstallClient(Ptr<Node> node,
                             uint16_t port,
                             uint8_t tos,
                             bool persistent,
                             uint32_t outstanding) const
{
    NS_LOG_FUNCTION(this << node << port << static_cast<uint32_t>(tos) << persistent
                         << outstanding);
    auto client = CreateObject<RequestClientApplication>();
    client->SetServiceLog(m_log);
    client->SetAttribute("RemotePort", UintegerValue(port));
    client->SetAttribute("Tos", UintegerValue(tos));
    client->SetAttribute("Persistent", BooleanValue(persistent));
    client->SetAttribute("Outstanding", UintegerValue(outstanding));
    node->AddApplication(client);
    return client;
}

Ptr<StreamReceiverApplication>
ServiceHelper::InstallStreamReceiver(Ptr<Node> node, uint16_t port) const
{
    NS_LOG_FUNCTION(this << node << port);
    auto receiver = CreateObject<StreamReceiverApplication>();
    receiver->SetAttribute("Port", UintegerValue(port));
    node->AddApplication(receiver);
    return receiver;
}

Ptr<StreamSenderApplication>
ServiceHelper::InstallStreamSender(Ptr<Node> node,
                                   Ipv4Address dst,
                                   uint16_t port,
                                   uint8_t tos,
                                   DataRate rate,
                                   uint32_t packetSize,
                                   Time start,
                                   Time stop,
                                   int64_t poissonStream) const
{
    NS_LOG_FUNCTION(this << node << dst << port << static_cast<uint32_t>(tos) << rate
                         << packetSize << start << stop << poissonStream);
    auto sender = CreateObject<StreamSenderApplication>();
    sender->SetAttribute("RemoteAddress", Ipv4AddressValue(dst));
    sender->SetAttribute("RemotePort", UintegerValue(port));
    sender->SetAttribute("DataRate", DataRateValue(rate));
    sender->SetAttribute("PacketSize", UintegerValue(packetSize));
    sender->SetAttribute("Tos", UintegerValue(tos));
    sender->SetStartTime(start);
    sender->SetStopTime(stop);
    if (poissonStream >= 0)
    {
        sender->SetAttribute("Poisson", BooleanValue(true));
        sender->AssignStreams(poissonStream);
    }
    node->AddApplication(sender);
    return sender;
}

Ptr<PacketSink>
ServiceHelper::InstallBulk(Ptr<Node> src,
                           Ptr<Node> dst,
                           Ipv4Address dstAddress,
                           uint16_t port,
                           uint8_t tos,
                           uint32_t sendSize,
                           Time start) const
{
    NS_LOG_FUNCTION(this << src << dst << dstAddress << port << static_cast<uint32_t>(tos)
                         << sendSize << start);
    auto sink = CreateObject<PacketSink>();
    sink->SetAttribute("Protocol", TypeIdValue(TcpSocketFactory::GetTypeId()));
    sink->SetAttribute("Local", AddressValue(InetSocketAddress(Ipv4Address::GetAny(), port)));
    dst->AddApplication(sink);
    auto sender = CreateObject<BulkSendApplication>();
    sender->SetAttribute("Protocol", TypeIdValue(TcpSocketFactory::GetTypeId()));
    sender->SetAttribute("Remote", AddressValue(InetSocketAddress(dstAddress, port)));
    sender->SetAttribute("Tos", UintegerValue(tos));
    sender->SetAttribute("SendSize", UintegerValue(sendSize));
    sender->SetAttribute("MaxBytes", UintegerValue(0)); // no limit: long-lived
    sender->SetStartTime(start);
    src->AddApplication(sender);
    return sink;
}

} // namespace ns3
