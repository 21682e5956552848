#include "pfc-port.h"

#include "pfc-ingress-tag.h"
#include "shared-buffer.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/channel.h"
#include "ns3/double.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/prio-queue-disc.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PfcPort");

NS_OBJECT_ENSURE_REGISTERED(PfcPort);

TypeId
PfcPort::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PfcPort")
            .SetParent<Object>()
            .SetGroupName("Ddnn")
            .AddConstructor<PfcPort>()
            .AddAttribute("Generate",
                          "Account the lossless bands' ingress and pause the upstream port "
                          "(a switch's port); false: only honour pause frames (a host's NIC)",
                          BooleanValue(true),
                          MakeBooleanAccessor(&PfcPort::m_generate),
                          MakeBooleanChecker())
            .AddAttribute("Xoff",
                          "Static XOFF: bytes of a lossless band come in by this port and "
                          "queued in the switch above which the port pauses upstream "
                          "(ignored with XoffAlpha > 0)",
                          UintegerValue(30000),
                          MakeUintegerAccessor(&PfcPort::m_xoff),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("XoffAlpha",
                          "Dynamic XOFF: XoffAlpha x the free bytes of the switch's pool "
                          "(a SharedBuffer aggregated to the node); 0 = the static Xoff",
                          DoubleValue(0.0),
                          MakeDoubleAccessor(&PfcPort::m_xoffAlpha),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("XonOffset",
                          "XON = XOFF - XonOffset bytes: the port resumes upstream at or "
                          "below it (with its headroom empty)",
                          UintegerValue(3000),
                          MakeUintegerAccessor(&PfcPort::m_xonOffset),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Headroom",
                          "Bytes per lossless band this port can hold beyond XOFF: what is "
                          "in flight when the pause is decided",
                          UintegerValue(9000),
                          MakeUintegerAccessor(&PfcPort::m_headroom),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("PauseQuanta",
                          "Quanta of 512 bit times a pause frame asks for (repeated every "
                          "half of it while above XON)",
                          UintegerValue(65535),
                          MakeUintegerAccessor(&PfcPort::m_quanta),
                          MakeUintegerChecker<uint16_t>(1))
            .AddAttribute("WindowStart",
                          "Paused and pausing time is counted from here (the run's "
                          "measurement window)",
                          TimeValue(Seconds(0)),
                          MakeTimeAccessor(&PfcPort::m_windowStart),
                          MakeTimeChecker())
            .AddAttribute("WindowEnd",
                          "... and up to here",
                          TimeValue(Time::Max()),
                          MakeTimeAccessor(&PfcPort::m_windowEnd),
                          MakeTimeChecker())
            .AddTraceSource("PauseSent",
                            "A pause frame was sent upstream: (band, quanta; 0 = resume)",
                            MakeTraceSourceAccessor(&PfcPort::m_pauseSent),
                            "ns3::PfcPort::PauseCallback")
            .AddTraceSource("PauseReceived",
                            "A pause frame arrived for this port's egress: (band, quanta)",
                            MakeTraceSourceAccessor(&PfcPort::m_pauseReceived),
                            "ns3::PfcPort::PauseCallback");
    return tid;
}

PfcPort::PfcPort()
    : m_generate(true),
      m_xoff(30000),
      m_xoffAlpha(0.0),
      m_xonOffset(3000),
      m_headroom(9000),
      m_quanta(65535),
      m_windowStart(Seconds(0)),
      m_windowEnd(Time::Max())
{
    NS_LOG_FUNCTION(this);
}

PfcPort::~PfcPort() = default;

void
PfcPort::Install(Ptr<NetDevice> device)
{
    NS_LOG_FUNCTION(this << device);
    NS_ABORT_MSG_IF(m_device, "PfcPort: installed twice");
    Ptr<Node> node = device->GetNode();
    Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
    m_root = tc ? tc->GetRootQueueDiscOnDevice(device) : nullptr;
    NS_ABORT_MSG_IF(!m_root,
                    "PfcPort: node " << node->GetId() << " device " << device->GetIfIndex()
                                     << " has no queue disc: install the queue discs first");
    PriomapValue priomap;
    m_root->GetAttribute("Priomap", priomap);
    m_priomap = priomap.Get();
    for (std::size_t i = 0; i < m_root->GetNQueueDiscClasses(); ++i)
    {
        Ptr<BandQueueDisc> queue =
            DynamicCast<BandQueueDisc>(m_root->GetQueueDiscClass(i)->GetQueueDisc());
        NS_ABORT_MSG_IF(!queue, "PfcPort: the egress's bands must be ns3::BandQueueDisc");
        Band band;
        band.queue = queue;
        m_bands.push_back(band);
        queue->SetPfc(this, i);
    }
    m_device = device;
    device->AggregateObject(this);
    if (m_generate)
    {
        // registered before IP's handler (which AssignAddresses adds), so a
        // packet is tagged before it is routed
        Ptr<Ipv4> ipv4 = node->GetObject<Ipv4>();
        NS_ABORT_MSG_IF(ipv4 && ipv4->GetInterfaceForDevice(device) >= 0,
                        "PfcPort: install before the device's addresses are assigned");
        node->RegisterProtocolHandler(MakeCallback(&PfcPort::Arrived, this),
                                      0x0800,
                                      device);
    }
}

Ptr<PfcPort>
PfcPort::GetNodePort(uint32_t index) const
{
    return m_device->GetNode()->GetDevice(index)->GetObject<PfcPort>();
}

uint32_t
PfcPort::GetNBands() const
{
    return m_bands.size();
}

void
PfcPort::Arrived(Ptr<NetDevice> device,
                 Ptr<const Packet> packet,
                 uint16_t protocol,
                 const Address& from,
                 const Address& to,
                 NetDevice::PacketType type)
{
    NS_LOG_FUNCTION(this << packet);
    uint8_t head[2];
    if (packet->CopyData(head, sizeof(head)) != sizeof(head))
    {
        return;
    }
    // the band the packet will join at the egress: every egress of the
    // switch has the same priomap (ToS -> priority -> band, as the root does)
    uint16_t band = m_priomap[Socket::IpTos2Priority(head[1])];
    if (band < m_bands.size() && m_bands[band].queue->IsLossless())
    {
        PfcIngressTag tag(device->GetIfIndex());
        // the packet IP then routes is this one: tag it in place
        const_cast<Packet&>(*packet).ReplacePacketTag(tag);
    }
}

uint32_t
PfcPort::Xoff() const
{
    if (m_xoffAlpha <= 0.0)
    {
        return m_xoff;
    }
    Ptr<SharedBuffer> pool = m_device->GetNode()->GetObject<SharedBuffer>();
    NS_ABORT_MSG_IF(!pool, "PfcPort: XoffAlpha needs the switch's pool (BufferPool = switch)");
    uint64_t size = pool->GetSize().GetValue();
    uint64_t used = pool->GetOccupancy();
    uint64_t unit = pool->GetSize().GetUnit() == QueueSizeUnit::BYTES ? 1 : m_device->GetMtu();
    uint64_t freeBytes = used < size ? (size - used) * unit : 0;
    return static_cast<uint32_t>(std::min<double>(m_xoffAlpha * freeBytes, UINT32_MAX));
}

bool
PfcPort::Charge(uint32_t band, uint32_t bytes)
{
    NS_LOG_FUNCTION(this << band << bytes);
    Band& b = m_bands[band];
    uint32_t xoff = Xoff();
    if (b.shared + bytes <= xoff)
    {
        b.shared += bytes;
    }
    else if (b.headroom + bytes <= m_headroom)
    {
        b.headroom += bytes;
    }
    else
    {
        return false;
    }
    b.maxHeadroom = std::max(b.maxHeadroom, b.headroom);
    b.maxBytes = std::max(b.maxBytes, b.shared + b.headroom);
    if (!b.pausing && (b.headroom > 0 || b.shared >= xoff))
    {
        b.pausing = true;
        b.pausingSince = Simulator::Now();
        Refresh(band); // the first pause frame, and its refresh half a pause later
    }
    return true;
}

void
PfcPort::Credit(uint32_t band, uint32_t bytes)
{
    NS_LOG_FUNCTION(this << band << bytes);
    Band& b = m_bands[band];
    uint32_t fromHeadroom = std::min(b.headroom, bytes);
    b.headroom -= fromHeadroom;
    NS_ASSERT(b.shared >= bytes - fromHeadroom);
    b.shared -= bytes - fromHeadroom;
    if (!b.pausing || b.headroom > 0)
    {
        return;
    }
    uint32_t xoff = Xoff();
    if (b.shared + m_xonOffset <= xoff || b.shared == 0)
    {
        b.pausing = false;
        b.pausingTotal += InWindow(b.pausingSince, Simulator::Now());
        b.refresh.Cancel();
        SendPause(band, 0);
    }
}

void
PfcPort::Refresh(uint32_t band)
{
    NS_LOG_FUNCTION(this << band);
    if (!m_bands[band].pausing)
    {
        return;
    }
    SendPause(band, m_quanta);
    m_bands[band].refresh =
        Simulator::Schedule(PauseDuration(m_quanta) / 2, &PfcPort::Refresh, this, band);
}

void
PfcPort::SendPause(uint32_t band, uint16_t quanta)
{
    NS_LOG_FUNCTION(this << band << quanta);
    if (!m_peer)
    {
        Ptr<Channel> channel = m_device->GetChannel();
        for (std::size_t i = 0; i < channel->GetNDevices() && !m_peer; ++i)
        {
            if (channel->GetDevice(i) != m_device)
            {
                m_peer = channel->GetDevice(i)->GetObject<PfcPort>();
            }
        }
        NS_ABORT_MSG_IF(!m_peer,
                        "PfcPort: node " << m_device->GetNode()->GetId()
                                         << " pauses a link whose other end has no PfcPort");
    }
    ++m_bands[band].framesSent;
    m_pauseSent(band, quanta);
    TimeValue delay;
    m_device->GetChannel()->GetAttribute("Delay", delay);
    Time wire = Rate().CalculateBytesTxTime(FRAME_BYTES) + delay.Get();
    Simulator::Schedule(wire, &PfcPort::ReceivePause, m_peer, band, quanta);
}

void
PfcPort::ReceivePause(uint32_t band, uint16_t quanta)
{
    NS_LOG_FUNCTION(this << band << quanta);
    if (band >= m_bands.size())
    {
        return;
    }
    Band& b = m_bands[band];
    ++b.framesReceived;
    m_pauseReceived(band, quanta);
    if (quanta == 0)
    {
        Resume(band);
        return;
    }
    if (!b.paused)
    {
        b.paused = true;
        b.pausedSince = Simulator::Now();
        b.queue->SetPaused(true);
    }
    b.expiry.Cancel();
    b.expiry = Simulator::Schedule(PauseDuration(quanta), &PfcPort::Resume, this, band);
}

void
PfcPort::Resume(uint32_t band)
{
    NS_LOG_FUNCTION(this << band);
    Band& b = m_bands[band];
    if (!b.paused)
    {
        return;
    }
    b.paused = false;
    b.pausedTotal += InWindow(b.pausedSince, Simulator::Now());
    b.expiry.Cancel();
    b.queue->SetPaused(false);
    m_root->Run(); // the device may be idle with this band's packets waiting
}

DataRate
PfcPort::Rate() const
{
    DataRateValue rate;
    m_device->GetAttribute("DataRate", rate);
    return rate.Get();
}

Time
PfcPort::PauseDuration(uint16_t quanta) const
{
    return Seconds(double(quanta) * QUANTUM_BITS / Rate().GetBitRate());
}

uint64_t
PfcPort::GetPauseFramesSent(uint32_t band) const
{
    return m_bands.at(band).framesSent;
}

uint64_t
PfcPort::GetPauseFramesReceived(uint32_t band) const
{
    return m_bands.at(band).framesReceived;
}

Time
PfcPort::GetPausedTime(uint32_t band) const
{
    const Band& b = m_bands.at(band);
    return b.pausedTotal + (b.paused ? InWindow(b.pausedSince, Simulator::Now()) : Time(0));
}

Time
PfcPort::GetPausingTime(uint32_t band) const
{
    const Band& b = m_bands.at(band);
    return b.pausingTotal + (b.pausing ? InWindow(b.pausingSince, Simulator::Now()) : Time(0));
}

Time
PfcPort::InWindow(Time from, Time to) const
{
    Time start = std::max(from, m_windowStart);
    Time end = std::min(to, m_windowEnd);
    return end > start ? end - start : Time(0);
}

uint32_t
PfcPort::GetMaxHeadroom(uint32_t band) const
{
    return m_bands.at(band).maxHeadroom;
}

uint32_t
PfcPort::GetMaxIngressBytes(uint32_t band) const
{
    return m_bands.at(band).maxBytes;
}

void
PfcPort::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (Band& b : m_bands)
    {
        b.expiry.Cancel();
        b.refresh.Cancel();
        b.queue = nullptr;
    }
    m_device = nullptr;
    m_root = nullptr;
    m_peer = nullptr;
    Object::DoDispose();
}

} // namespace ns3
