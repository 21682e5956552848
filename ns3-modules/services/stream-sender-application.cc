#include "stream-sender-application.h"

#include "ns3/boolean.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4-address.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/seq-ts-header.h"
#include "ns3/simulator.h"
#include "ns3/udp-socket-factory.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("StreamSenderApplication");

NS_OBJECT_ENSURE_REGISTERED(StreamSenderApplication);

/// Bytes of the SeqTsHeader every packet carries: the smallest packet.
static const uint32_t STREAM_HEADER_BYTES = 12;

TypeId
StreamSenderApplication::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::StreamSenderApplication")
            .SetParent<Application>()
            .SetGroupName("Ddnn")
            .AddConstructor<StreamSenderApplication>()
            .AddAttribute("RemoteAddress",
                          "IPv4 address of the StreamReceiverApplication.",
                          Ipv4AddressValue(),
                          MakeIpv4AddressAccessor(&StreamSenderApplication::m_remote),
                          MakeIpv4AddressChecker())
            .AddAttribute("RemotePort",
                          "UDP port of the StreamReceiverApplication.",
                          UintegerValue(7500),
                          MakeUintegerAccessor(&StreamSenderApplication::m_remotePort),
                          MakeUintegerChecker<uint16_t>(1))
            .AddAttribute("DataRate",
                          "The stream's bitrate (UDP payload).",
                          DataRateValue(DataRate("1Mbps")),
                          MakeDataRateAccessor(&StreamSenderApplication::m_rate),
                          MakeDataRateChecker())
            .AddAttribute("PacketSize",
                          "UDP payload bytes of each packet (at least its 12-byte "
                          "sequence and time stamp).",
                          UintegerValue(1000),
                          MakeUintegerAccessor(&StreamSenderApplication::m_packetSize),
                          MakeUintegerChecker<uint32_t>(STREAM_HEADER_BYTES, 65507))
            .AddAttribute("Tos",
                          "IP ToS of the packets (the stream's traffic class).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&StreamSenderApplication::m_tos),
                          MakeUintegerChecker<uint8_t>())
            .AddAttribute("Poisson",
                          "Exponential gaps of mean PacketSize x 8 / DataRate (Poisson "
                          "arrivals) instead of constant ones.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&StreamSenderApplication::m_poisson),
                          MakeBooleanChecker())
            .AddTraceSource("PacketSent",
                            "A packet was sent: (sequence number).",
                            MakeTraceSourceAccessor(&StreamSenderApplication::m_packetSentTrace),
                            "ns3::StreamSenderApplication::PacketSentCallback");
    return tid;
}

StreamSenderApplication::StreamSenderApplication()
    : m_remotePort(7500),
      m_rate("1Mbps"),
      m_packetSize(1000),
      m_tos(0),
      m_poisson(false),
      m_gap(CreateObject<ExponentialRandomVariable>()),
      m_sent(0)
{
    NS_LOG_FUNCTION(this);
}

void
StreamSenderApplication::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_socket = nullptr;
    Application::DoDispose();
}

uint64_t
StreamSenderApplication::GetSent() const
{
    NS_LOG_FUNCTION(this);
    return m_sent;
}

int64_t
StreamSenderApplication::AssignStreams(int64_t stream)
{
    NS_LOG_FUNCTION(this << stream);
    m_gap->SetStream(stream);
    return 1;
}

void
StreamSenderApplication::StartApplication()
{
    NS_LOG_FUNCTION(this);
    m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
    m_socket->SetIpTos(m_tos);
    m_socket->Bind();
    m_socket->Connect(InetSocketAddress(m_remote, m_remotePort));
    SendPacket();
}

void
StreamSenderApplication::StopApplication()
{
    NS_LOG_FUNCTION(this);
    m_nextEvent.Cancel();
}

void
StreamSenderApplication::SendPacket()
{
    NS_LOG_FUNCTION(this);
    SeqTsHeader header; // stamps the send time
    header.SetSeq(static_cast<uint32_t>(m_sent));
    Ptr<Packet> packet = Create<Packet>(m_packetSize - header.GetSerializedSize());
    packet->AddHeader(header);
    m_socket->Send(packet);
    m_packetSentTrace(m_sent);
    m_sent++;
    Time gap = m_rate.CalculateBytesTxTime(m_packetSize);
    if (m_poisson)
    {
        gap = Seconds(m_gap->GetValue(gap.GetSeconds(), 0));
    }
    m_nextEvent = Simulator::Schedule(gap, &StreamSenderApplication::SendPacket, this);
}

} // namespace ns3
