#include "rdma-socket.h"

#include "dcqcn.h"
#include "rdma-socket-factory.h"

#include "ns3/abort.h"
#include "ns3/data-rate.h"
#include "ns3/inet6-socket-address.h"
#include "ns3/integer.h"
#include "ns3/ipv4-route.h"
#include "ns3/ipv4-routing-protocol.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/prio-queue-disc.h"
#include "ns3/simulator.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/udp-socket-factory.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaSocket");

NS_OBJECT_ENSURE_REGISTERED(RdmaSocket);

namespace
{
/// IP and UDP header bytes of every RoCEv2 packet.
constexpr uint32_t IP_UDP_BYTES = 20 + 8;
/// ECT(0) in the IP header's ECN field.
constexpr uint8_t ECT0 = 0x02;
/// Connection requests sent before the connection counts as failed.
constexpr uint32_t CONNECT_TRIES = 10;
} // namespace

TypeId
RdmaSocket::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaSocket")
            .SetParent<Socket>()
            .SetGroupName("Ddnn")
            .AddConstructor<RdmaSocket>()
            .AddAttribute("SndBufSize",
                          "Bytes the application may have written and not yet had "
                          "acknowledged",
                          UintegerValue(33554432),
                          MakeUintegerAccessor(&RdmaSocket::m_sndBufSize),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("PayloadSize",
                          "Payload bytes per packet: the MTU less the IP, UDP, BTH and ICRC "
                          "bytes (1456 at a 1500-byte MTU)",
                          UintegerValue(1456),
                          MakeUintegerAccessor(&RdmaSocket::m_payload),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("AckInterval",
                          "Every this many data packets ask for an ACK (and the last one "
                          "the sender has)",
                          UintegerValue(4),
                          MakeUintegerAccessor(&RdmaSocket::m_ackInterval),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("RetransmitTimeout",
                          "Go back to the first unacknowledged packet when nothing is "
                          "acknowledged for this long",
                          TimeValue(MilliSeconds(10)),
                          MakeTimeAccessor(&RdmaSocket::m_rto),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("CnpInterval",
                          "DCQCN's notification point: at most one CNP per this interval "
                          "(paper: 50 us)",
                          TimeValue(MicroSeconds(50)),
                          MakeTimeAccessor(&RdmaSocket::m_cnpInterval),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("CnpTos",
                          "IP ToS of CNPs; -1: the class of the receiving socket (its ACKs')",
                          IntegerValue(-1),
                          MakeIntegerAccessor(&RdmaSocket::m_cnpTos),
                          MakeIntegerChecker<int32_t>(-1, 255))
            .AddAttribute("NicQueuePackets",
                          "The queue pair waits while its class's band at the host's egress "
                          "holds this many packets (paused, or shared with other queue pairs)",
                          UintegerValue(2),
                          MakeUintegerAccessor(&RdmaSocket::m_nicQueuePackets),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("ConnectTimeout",
                          "A connection request unanswered this long is sent again (10 tries)",
                          TimeValue(MilliSeconds(1)),
                          MakeTimeAccessor(&RdmaSocket::m_connectTimeout),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("RateControl",
                          "The sender's congestion control: an ns3::RdmaRateControl TypeId",
                          TypeIdValue(TypeId::LookupByName("ns3::Dcqcn")),
                          MakeTypeIdAccessor(&RdmaSocket::m_rateControlType),
                          MakeTypeIdChecker());
    return tid;
}

RdmaSocket::RdmaSocket()
    : m_sndBufSize(33554432),
      m_payload(1456),
      m_ackInterval(4),
      m_rto(MilliSeconds(10)),
      m_cnpInterval(MicroSeconds(50)),
      m_cnpTos(-1),
      m_nicQueuePackets(2),
      m_connectTimeout(MilliSeconds(1)),
      m_state(CLOSED),
      m_errno(ERROR_NOTERROR),
      m_ownsUdp(false),
      m_peer(Ipv4Address::GetAny(), 0),
      m_localPort(0)
{
    NS_LOG_FUNCTION(this);
}

RdmaSocket::~RdmaSocket() = default;

void
RdmaSocket::SetStack(Ptr<Node> node, Ptr<RdmaSocketFactory> stack)
{
    m_node = node;
    m_stack = stack;
}

// ------------------------------------------------------------------ ns3::Socket

Socket::SocketErrno
RdmaSocket::GetErrno() const
{
    return m_errno;
}

Socket::SocketType
RdmaSocket::GetSocketType() const
{
    return NS3_SOCK_STREAM;
}

Ptr<Node>
RdmaSocket::GetNode() const
{
    return m_node;
}

int
RdmaSocket::Bind(const Address& address)
{
    NS_LOG_FUNCTION(this << address);
    NS_ABORT_MSG_IF(m_udp, "RdmaSocket: bound twice");
    m_udp = Socket::CreateSocket(m_node, UdpSocketFactory::GetTypeId());
    m_ownsUdp = true;
    if (m_udp->Bind(address) != 0)
    {
        m_errno = m_udp->GetErrno();
        return -1;
    }
    m_udp->SetIpRecvTos(true); // the received ECN field: CE marks
    m_udp->SetRecvCallback(MakeCallback(&RdmaSocket::ReadUdp, this));
    // ns-3's sinks given only a port bind IPv6's any beside IPv4's: such a
    // queue pair listens and is never reached (the fabric carries IPv4)
    Address bound;
    m_udp->GetSockName(bound);
    m_localPort = Inet6SocketAddress::IsMatchingType(bound)
                      ? Inet6SocketAddress::ConvertFrom(bound).GetPort()
                      : InetSocketAddress::ConvertFrom(bound).GetPort();
    return 0;
}

int
RdmaSocket::Bind()
{
    return Bind(InetSocketAddress(Ipv4Address::GetAny(), 0));
}

int
RdmaSocket::Bind6()
{
    m_errno = ERROR_AFNOSUPPORT;
    return -1;
}

int
RdmaSocket::Close()
{
    NS_LOG_FUNCTION(this);
    m_sendEvent.Cancel();
    m_rtoEvent.Cancel();
    m_connectEvent.Cancel();
    if (m_udp && m_ownsUdp)
    {
        m_udp->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
        m_udp->Close();
    }
    m_state = CLOSED;
    return 0;
}

int
RdmaSocket::ShutdownSend()
{
    return 0;
}

int
RdmaSocket::ShutdownRecv()
{
    return 0;
}

int
RdmaSocket::Connect(const Address& address)
{
    NS_LOG_FUNCTION(this << address);
    if (!InetSocketAddress::IsMatchingType(address))
    {
        m_errno = ERROR_AFNOSUPPORT;
        return -1;
    }
    if (!m_udp && Bind() != 0)
    {
        return -1;
    }
    m_peer = InetSocketAddress::ConvertFrom(address);
    m_state = CONNECTING;
    SendConnect();
    return 0;
}

int
RdmaSocket::Listen()
{
    NS_LOG_FUNCTION(this);
    if (!m_udp)
    {
        m_errno = ERROR_INVAL;
        return -1;
    }
    m_state = LISTENING;
    return 0;
}

uint32_t
RdmaSocket::GetTxAvailable() const
{
    uint64_t held = m_appEnd - m_sndUna;
    return held >= m_sndBufSize ? 0 : static_cast<uint32_t>(m_sndBufSize - held);
}

int
RdmaSocket::Send(Ptr<Packet> p, uint32_t flags)
{
    NS_LOG_FUNCTION(this << p);
    if (m_state != CONNECTED)
    {
        m_errno = ERROR_NOTCONN;
        return -1;
    }
    uint32_t size = p->GetSize();
    if (size > GetTxAvailable())
    {
        m_errno = ERROR_MSGSIZE;
        return -1;
    }
    m_appEnd += size;
    ScheduleSend();
    return static_cast<int>(size);
}

int
RdmaSocket::SendTo(Ptr<Packet> p, uint32_t flags, const Address&)
{
    return Send(p, flags);
}

uint32_t
RdmaSocket::GetRxAvailable() const
{
    return static_cast<uint32_t>(std::min<uint64_t>(m_rxAvailable, UINT32_MAX));
}

Ptr<Packet>
RdmaSocket::Recv(uint32_t maxSize, uint32_t flags)
{
    if (m_rxAvailable == 0)
    {
        m_errno = ERROR_AGAIN;
        return nullptr;
    }
    uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(maxSize, m_rxAvailable));
    m_rxAvailable -= n;
    return Create<Packet>(n);
}

Ptr<Packet>
RdmaSocket::RecvFrom(uint32_t maxSize, uint32_t flags, Address& fromAddress)
{
    fromAddress = m_peer;
    return Recv(maxSize, flags);
}

int
RdmaSocket::GetSockName(Address& address) const
{
    address = InetSocketAddress(Ipv4Address::GetAny(), m_localPort);
    return 0;
}

int
RdmaSocket::GetPeerName(Address& address) const
{
    if (m_state != CONNECTED)
    {
        return -1;
    }
    address = m_peer;
    return 0;
}

bool
RdmaSocket::SetAllowBroadcast(bool)
{
    return false;
}

bool
RdmaSocket::GetAllowBroadcast() const
{
    return false;
}

// ------------------------------------------------------------------ connection

void
RdmaSocket::SendConnect()
{
    NS_LOG_FUNCTION(this);
    static_assert(CONNECT_TRIES > 0);
    if (m_state != CONNECTING)
    {
        return;
    }
    if (m_connectTries++ == CONNECT_TRIES)
    {
        m_state = CLOSED;
        m_errno = ERROR_NOROUTETOHOST;
        NotifyConnectionFailed();
        return;
    }
    SendControl(RdmaHeader::CONNECT, 0, GetIpTos());
    m_connectEvent = Simulator::Schedule(m_connectTimeout, &RdmaSocket::SendConnect, this);
}

void
RdmaSocket::Accept(const InetSocketAddress& from)
{
    NS_LOG_FUNCTION(this << from);
    if (!NotifyConnectionRequest(from))
    {
        return;
    }
    Ptr<RdmaSocket> child = DynamicCast<RdmaSocket>(m_stack->CreateSocket());
    child->m_udp = m_udp;
    child->m_ownsUdp = false;
    child->m_listener = this;
    child->m_peer = from;
    child->m_localPort = m_localPort;
    child->SetIpTos(GetIpTos());
    m_accepted[{from.GetIpv4().Get(), from.GetPort()}] = child;
    child->Established();
    child->SendControl(RdmaHeader::CONNECT_REPLY, 0, GetIpTos());
    NotifyNewConnectionCreated(child, from);
}

void
RdmaSocket::Established()
{
    NS_LOG_FUNCTION(this);
    Ptr<Ipv4> ipv4 = m_node->GetObject<Ipv4>();
    Ipv4Header header;
    header.SetDestination(m_peer.GetIpv4());
    header.SetProtocol(17);
    Socket::SocketErrno err;
    Ptr<Ipv4Route> route =
        ipv4->GetRoutingProtocol()->RouteOutput(Create<Packet>(), header, nullptr, err);
    NS_ABORT_MSG_IF(!route, "RdmaSocket: node " << m_node->GetId() << " has no route to "
                                                << m_peer.GetIpv4());
    m_egress = route->GetOutputDevice();
    // the egress's root and priomap, once: EgressBand() runs for every packet
    Ptr<TrafficControlLayer> tc = m_node->GetObject<TrafficControlLayer>();
    m_egressRoot = tc ? tc->GetRootQueueDiscOnDevice(m_egress) : nullptr;
    if (m_egressRoot && m_egressRoot->GetNQueueDiscClasses() > 0)
    {
        PriomapValue priomap;
        m_egressRoot->GetAttribute("Priomap", priomap);
        m_egressPriomap = priomap.Get();
    }
    DataRateValue line;
    m_egress->GetAttribute("DataRate", line);
    ObjectFactory factory(m_rateControlType.GetName());
    m_rate = factory.Create<RdmaRateControl>();
    NS_ABORT_MSG_IF(!m_rate, "RdmaSocket: RateControl " << m_rateControlType.GetName()
                                                         << " is not an ns3::RdmaRateControl");
    m_rate->Start(line.Get());
    m_state = CONNECTED;
}

// ------------------------------------------------------------------ packets in

void
RdmaSocket::ReadUdp(Ptr<Socket> udp)
{
    Address from;
    while (Ptr<Packet> packet = udp->RecvFrom(from))
    {
        SocketIpTosTag tosTag;
        uint8_t tos = packet->RemovePacketTag(tosTag) ? tosTag.GetTos() : 0;
        if (m_state != LISTENING)
        {
            Process(packet, tos);
            continue;
        }
        InetSocketAddress peer = InetSocketAddress::ConvertFrom(from);
        auto it = m_accepted.find({peer.GetIpv4().Get(), peer.GetPort()});
        if (it != m_accepted.end())
        {
            it->second->Process(packet, tos);
            continue;
        }
        RdmaHeader header;
        packet->PeekHeader(header);
        if (header.GetOpcode() == RdmaHeader::CONNECT)
        {
            Accept(peer);
        }
    }
}

void
RdmaSocket::Process(Ptr<Packet> packet, uint8_t tos)
{
    RdmaHeader header;
    packet->RemoveHeader(header);
    switch (header.GetOpcode())
    {
    case RdmaHeader::DATA:
        if (m_state == CONNECTED)
        {
            Received(header, packet->GetSize(), tos);
        }
        break;
    case RdmaHeader::ACK:
        Acknowledged(header.GetPsn());
        break;
    case RdmaHeader::NAK:
        GoBack(header.GetPsn());
        break;
    case RdmaHeader::CNP:
        ++m_cnpsReceived;
        if (m_rate)
        {
            m_rate->OnCongestionNotification();
        }
        break;
    case RdmaHeader::CONNECT:
        // the reply was lost or is late: say it again
        SendControl(RdmaHeader::CONNECT_REPLY, 0, GetIpTos());
        break;
    case RdmaHeader::CONNECT_REPLY:
        if (m_state == CONNECTING)
        {
            m_connectEvent.Cancel();
            Established();
            NotifyConnectionSucceeded();
        }
        break;
    }
}

void
RdmaSocket::Received(const RdmaHeader& header, uint32_t bytes, uint8_t tos)
{
    uint32_t psn = header.GetPsn();
    if ((tos & 0x03) == 0x03 &&
        (!m_cnpSent || Simulator::Now() - m_lastCnp >= m_cnpInterval))
    {
        m_cnpSent = true;
        m_lastCnp = Simulator::Now();
        ++m_cnpsSent;
        SendControl(RdmaHeader::CNP, 0, m_cnpTos);
    }
    if (psn == m_expectedPsn)
    {
        ++m_expectedPsn;
        m_nakSent = false;
        m_rxAvailable += bytes;
        m_rxTotal += bytes;
        if (header.GetAckRequest() || ++m_sinceAck >= m_ackInterval)
        {
            m_sinceAck = 0;
            SendControl(RdmaHeader::ACK, psn, -1);
        }
        NotifyDataRecv();
    }
    else if (static_cast<int32_t>(psn - m_expectedPsn) > 0)
    {
        // a gap: ask once for the first missing packet (go-back-N)
        if (!m_nakSent)
        {
            m_nakSent = true;
            SendControl(RdmaHeader::NAK, m_expectedPsn, -1);
        }
    }
    else
    {
        SendControl(RdmaHeader::ACK, m_expectedPsn - 1, -1); // a duplicate
    }
}

void
RdmaSocket::Acknowledged(uint32_t psn)
{
    bool progress = false;
    // the sent packets first, then those waiting to be sent again (later PSNs)
    for (auto* queue : {&m_unacked, &m_resend})
    {
        while (!queue->empty() && static_cast<int32_t>(queue->front().first - psn) <= 0)
        {
            m_sndUna = queue->front().second;
            queue->pop_front();
            progress = true;
        }
    }
    if (!progress)
    {
        return;
    }
    m_sndNxt = std::max(m_sndNxt, m_sndUna); // what it was about to send again has arrived
    m_rtoEvent.Cancel();
    if (!m_unacked.empty())
    {
        m_rtoEvent = Simulator::Schedule(m_rto, &RdmaSocket::RetransmitTimeout, this);
    }
    NotifySend(GetTxAvailable());
}

void
RdmaSocket::GoBack(uint32_t psn)
{
    NS_LOG_FUNCTION(this << psn);
    Acknowledged(psn - 1); // a NAK of PSN says every earlier one arrived
    if (m_unacked.empty() || m_unacked.front().first != psn)
    {
        return; // an old NAK: already gone back past it
    }
    Rewind();
}

void
RdmaSocket::RetransmitTimeout()
{
    NS_LOG_FUNCTION(this);
    if (!m_unacked.empty())
    {
        Rewind();
    }
}

void
RdmaSocket::Rewind()
{
    // send again from the first unacknowledged packet, each with its PSN and
    // its bytes as first sent (the queue of those not yet sent again after it)
    ++m_goBacks;
    m_resend.insert(m_resend.begin(), m_unacked.begin(), m_unacked.end());
    m_unacked.clear();
    m_sndNxt = m_sndUna;
    m_sendEvent.Cancel();
    ScheduleSend();
}

// ------------------------------------------------------------------ packets out

void
RdmaSocket::SendControl(RdmaHeader::Opcode opcode, uint32_t psn, int32_t tos)
{
    Ptr<Packet> packet = Create<Packet>();
    packet->AddHeader(RdmaHeader(opcode, psn));
    Transmit(packet, tos < 0 ? GetIpTos() : static_cast<uint8_t>(tos));
}

void
RdmaSocket::Transmit(Ptr<Packet> packet, uint8_t tos)
{
    // a datagram socket keeps the ECN bits of its ToS; set per packet, as
    // an accepted connection shares its listener's UDP socket
    m_udp->SetIpTos(tos);
    m_udp->SendTo(packet, 0, m_peer);
}

Ptr<QueueDisc>
RdmaSocket::EgressBand() const
{
    if (!m_egressRoot || m_egressRoot->GetNQueueDiscClasses() == 0)
    {
        return m_egressRoot;
    }
    uint16_t band = m_egressPriomap[Socket::IpTos2Priority(GetIpTos())];
    return m_egressRoot
        ->GetQueueDiscClass(std::min<std::size_t>(band, m_egressRoot->GetNQueueDiscClasses() - 1))
        ->GetQueueDisc();
}

void
RdmaSocket::ScheduleSend()
{
    if (m_state != CONNECTED || m_sendEvent.IsPending() || m_waitingNic || m_sndNxt >= m_appEnd)
    {
        return;
    }
    Time wait = std::max(Time(0), m_nextSendAt - Simulator::Now());
    m_sendEvent = Simulator::Schedule(wait, &RdmaSocket::SendNext, this);
}

void
RdmaSocket::NicReady()
{
    m_waitingNic = false;
    if (!m_sendEvent.IsPending())
    {
        SendNext();
    }
}

void
RdmaSocket::SendNext()
{
    if (m_state != CONNECTED || m_sndNxt >= m_appEnd)
    {
        return;
    }
    if (Simulator::Now() < m_nextSendAt)
    {
        ScheduleSend();
        return;
    }
    Ptr<QueueDisc> band = EgressBand();
    if (band && band->GetNPackets() >= m_nicQueuePackets)
    {
        m_waitingNic = true;
        m_stack->WaitForNic(this, band);
        return;
    }
    uint32_t psn = m_nextPsn;
    uint32_t bytes = static_cast<uint32_t>(std::min<uint64_t>(m_payload, m_appEnd - m_sndNxt));
    if (!m_resend.empty())
    {
        psn = m_resend.front().first;
        bytes = static_cast<uint32_t>(m_resend.front().second - m_sndNxt);
        m_resend.pop_front();
    }
    else
    {
        ++m_nextPsn;
    }
    bool last = m_sndNxt + bytes >= m_appEnd;
    bool ackRequest = last || ++m_sinceAckRequest >= m_ackInterval;
    if (ackRequest)
    {
        m_sinceAckRequest = 0;
    }
    Ptr<Packet> packet = Create<Packet>(bytes);
    packet->AddHeader(RdmaHeader(RdmaHeader::DATA, psn, ackRequest));
    Transmit(packet, GetIpTos() | ECT0);
    bool again = m_sndNxt < m_highestSent;
    m_unacked.emplace_back(psn, m_sndNxt + bytes);
    m_sndNxt += bytes;
    if (again)
    {
        ++m_retransmissions;
    }
    else
    {
        m_highestSent = m_sndNxt;
        NotifyDataSent(bytes);
    }
    m_rate->OnSent(bytes);
    if (!m_rtoEvent.IsPending())
    {
        m_rtoEvent = Simulator::Schedule(m_rto, &RdmaSocket::RetransmitTimeout, this);
    }
    m_nextSendAt =
        Simulator::Now() + m_rate->GetRate().CalculateBytesTxTime(bytes + RdmaHeader::WIRE_BYTES +
                                                                  IP_UDP_BYTES);
    ScheduleSend();
}

// ------------------------------------------------------------------ counters

uint64_t
RdmaSocket::GetRetransmissions() const
{
    return m_retransmissions;
}

uint64_t
RdmaSocket::GetCnpsReceived() const
{
    return m_cnpsReceived;
}

uint64_t
RdmaSocket::GetCnpsSent() const
{
    return m_cnpsSent;
}

uint64_t
RdmaSocket::GetGoBacks() const
{
    return m_goBacks;
}

Ptr<RdmaRateControl>
RdmaSocket::GetRateControl() const
{
    return m_rate;
}

uint64_t
RdmaSocket::GetBytesReceived() const
{
    return m_rxTotal;
}

uint64_t
RdmaSocket::GetBytesSent() const
{
    return m_highestSent;
}

uint64_t
RdmaSocket::GetBytesAcknowledged() const
{
    return m_sndUna;
}

Ipv4Address
RdmaSocket::GetPeerAddress() const
{
    return m_peer.GetIpv4();
}

bool
RdmaSocket::IsAccepted() const
{
    return m_listener != nullptr;
}

bool
RdmaSocket::IsListening() const
{
    return m_state == LISTENING;
}

void
RdmaSocket::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_sendEvent.Cancel();
    m_rtoEvent.Cancel();
    m_connectEvent.Cancel();
    m_udp = nullptr;
    m_accepted.clear();
    m_listener = nullptr;
    m_rate = nullptr;
    m_stack = nullptr;
    m_egress = nullptr;
    m_egressRoot = nullptr;
    m_node = nullptr;
    Socket::DoDispose();
}

} // namespace ns3
