#include "link-utilization-tracker.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("LinkUtilizationTracker");

NS_OBJECT_ENSURE_REGISTERED(LinkUtilizationTracker);

namespace
{
// A PointToPointNetDevice frame: 2-byte PPP header, then IPv4 (no options
// in ns-3: 20 bytes), then the L4 ports.
constexpr uint32_t kPppHeader = 2;
constexpr uint32_t kIpv4Header = 20;
constexpr uint16_t kPppIpv4 = 0x0021;
} // namespace

TypeId
LinkUtilizationTracker::GetTypeId()
{
    static TypeId tid = TypeId("ns3::LinkUtilizationTracker")
                            .SetParent<Object>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<LinkUtilizationTracker>()
                            .AddAttribute("Interval",
                                          "Length of one utilisation bin.",
                                          TimeValue(MilliSeconds(100)),
                                          MakeTimeAccessor(&LinkUtilizationTracker::m_interval),
                                          MakeTimeChecker(NanoSeconds(1)));
    return tid;
}

LinkUtilizationTracker::LinkUtilizationTracker()
    : m_interval(MilliSeconds(100))
{
    NS_LOG_FUNCTION(this);
}

void
LinkUtilizationTracker::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_directions.clear();
    Object::DoDispose();
}

void
LinkUtilizationTracker::AddApplicationPorts(uint16_t lo, uint16_t hi, uint32_t app)
{
    NS_LOG_FUNCTION(this << lo << hi << app);
    m_ports.push_back(PortRange{lo, hi, app});
}

void
LinkUtilizationTracker::Track(Ptr<NetDevice> device, uint32_t link, uint32_t fromNode, uint32_t toNode)
{
    NS_LOG_FUNCTION(this << device << link << fromNode << toNode);
    Direction& d = m_directions.emplace_back();
    d.tracker = this;
    d.link = link;
    d.fromNode = fromNode;
    d.toNode = toNode;
    device->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&OnTransmit, &d));
}

uint32_t
LinkUtilizationTracker::Classify(uint16_t srcPort, uint16_t dstPort) const
{
    NS_LOG_FUNCTION(this << srcPort << dstPort);
    for (const PortRange& r : m_ports)
    {
        if ((dstPort >= r.lo && dstPort <= r.hi) || (srcPort >= r.lo && srcPort <= r.hi))
        {
            return r.app;
        }
    }
    return 0;
}

void
LinkUtilizationTracker::OnTransmit(Direction* d, Ptr<const Packet> packet)
{
    NS_LOG_FUNCTION(d << packet);
    uint8_t head[kPppHeader + kIpv4Header + 4] = {};
    uint32_t n = packet->CopyData(head, sizeof(head));
    uint8_t tos = 0;
    uint32_t app = 0;
    if (n >= kPppHeader + kIpv4Header && ((head[0] << 8) | head[1]) == kPppIpv4)
    {
        const uint8_t* ip = head + kPppHeader;
        tos = ip[1] & 0xfc; // the DSCP/class bits: ECN (ECT, CE) bits set by TCP dropped
        uint8_t protocol = ip[9];
        if ((protocol == 6 || protocol == 17) && n == sizeof(head))
        {
            const uint8_t* l4 = ip + kIpv4Header;
            app = d->tracker->Classify((l4[0] << 8) | l4[1], (l4[2] << 8) | l4[3]);
        }
    }
    uint64_t interval = Simulator::Now().GetTimeStep() / d->tracker->m_interval.GetTimeStep();
    uint64_t key = (interval << 40) | (uint64_t(tos) << 32) | app;
    d->bytes[key] += packet->GetSize();
}

std::string
LinkUtilizationTracker::ToCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "link,from_node,to_node,interval,tos,app,bytes\n";
    for (const Direction& d : m_directions)
    {
        for (const auto& [key, bytes] : d.bytes)
        {
            os << d.link << ',' << d.fromNode << ',' << d.toNode << ',' << (key >> 40) << ','
               << ((key >> 32) & 0xff) << ',' << (key & 0xffffffffULL) << ',' << bytes << '\n';
        }
    }
    return os.str();
}

} // namespace ns3
