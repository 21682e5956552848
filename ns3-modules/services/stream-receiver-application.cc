#include "stream-receiver-application.h"

#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/seq-ts-header.h"
#include "ns3/simulator.h"
#include "ns3/udp-socket-factory.h"
#include "ns3/uinteger.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("StreamReceiverApplication");

NS_OBJECT_ENSURE_REGISTERED(StreamReceiverApplication);

TypeId
StreamReceiverApplication::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::StreamReceiverApplication")
            .SetParent<Application>()
            .SetGroupName("Ddnn")
            .AddConstructor<StreamReceiverApplication>()
            .AddAttribute("Port",
                          "UDP port to receive on.",
                          UintegerValue(7500),
                          MakeUintegerAccessor(&StreamReceiverApplication::m_port),
                          MakeUintegerChecker<uint16_t>(1))
            .AddTraceSource("PacketReceived",
                            "A packet arrived: (sequence number, one-way delay).",
                            MakeTraceSourceAccessor(
                                &StreamReceiverApplication::m_packetReceivedTrace),
                            "ns3::StreamReceiverApplication::PacketReceivedCallback");
    return tid;
}

StreamReceiverApplication::StreamReceiverApplication()
    : m_port(7500)
{
    NS_LOG_FUNCTION(this);
}

void
StreamReceiverApplication::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_socket = nullptr;
    Application::DoDispose();
}

uint64_t
StreamReceiverApplication::GetReceived() const
{
    NS_LOG_FUNCTION(this);
    return m_arrivals.size();
}

void
StreamReceiverApplication::StartApplication()
{
    NS_LOG_FUNCTION(this);
    m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
    m_socket->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_port));
    m_socket->SetRecvCallback(MakeCallback(&StreamReceiverApplication::Receive, this));
}

void
StreamReceiverApplication::StopApplication()
{
    NS_LOG_FUNCTION(this);
    if (m_socket)
    {
        m_socket->Close();
    }
}

void
StreamReceiverApplication::Receive(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    while (Ptr<Packet> packet = socket->Recv())
    {
        SeqTsHeader header;
        packet->RemoveHeader(header);
        const Time now = Simulator::Now();
        m_arrivals.push_back({header.GetSeq(), header.GetTs().GetNanoSeconds(), now.GetNanoSeconds()});
        m_packetReceivedTrace(header.GetSeq(), now - header.GetTs());
    }
}

std::string
StreamReceiverApplication::ToCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream out;
    out << "seq,sent_ns,received_ns\n";
    for (const Arrival& a : m_arrivals)
    {
        out << a.seq << ',' << a.sentNs << ',' << a.receivedNs << '\n';
    }
    return out.str();
}

} // namespace ns3
