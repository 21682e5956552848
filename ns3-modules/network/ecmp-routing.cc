#include "ecmp-routing.h"

#include "ns3/ipv4-route.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/output-stream-wrapper.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("EcmpRouting");
NS_OBJECT_ENSURE_REGISTERED(EcmpRouting);

namespace
{
// splitmix64 finaliser: cheap, well-mixed, deterministic across runs.
uint64_t
Mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
} // namespace

TypeId
EcmpRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::EcmpRouting")
                            .SetParent<Ipv4RoutingProtocol>()
                            .SetGroupName("Internet")
                            .AddConstructor<EcmpRouting>()
                            .AddAttribute("Salt",
                                          "Per-node salt mixed into the flow hash.",
                                          UintegerValue(0),
                                          MakeUintegerAccessor(&EcmpRouting::m_salt),
                                          MakeUintegerChecker<uint64_t>());
    return tid;
}

EcmpRouting::EcmpRouting()
    : m_salt(0)
{
    NS_LOG_FUNCTION(this);
}

void
EcmpRouting::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_ipv4 = nullptr;
    m_ownAddresses.clear();
    m_routes.clear();
    m_default.clear();
    Ipv4RoutingProtocol::DoDispose();
}

void
EcmpRouting::AddRoute(Ipv4Address dest, uint32_t interface, Ipv4Address gateway)
{
    NS_LOG_FUNCTION(this << dest << interface << gateway);
    m_routes[dest.Get()].push_back(NextHop{interface, gateway});
}

void
EcmpRouting::SetDefaultRoute(uint32_t interface, Ipv4Address gateway)
{
    NS_LOG_FUNCTION(this << interface << gateway);
    m_default.assign(1, NextHop{interface, gateway});
}

const std::vector<EcmpRouting::NextHop>&
EcmpRouting::HopsTo(Ipv4Address dest) const
{
    NS_LOG_FUNCTION(this << dest);
    auto it = m_routes.find(dest.Get());
    return it == m_routes.end() ? m_default : it->second;
}

uint32_t
EcmpRouting::GetNRoutes(Ipv4Address dest) const
{
    NS_LOG_FUNCTION(this << dest);
    return HopsTo(dest).size();
}

int32_t
EcmpRouting::GetOutputInterface(Ipv4Address src,
                                Ipv4Address dst,
                                uint8_t protocol,
                                uint16_t srcPort,
                                uint16_t dstPort) const
{
    NS_LOG_FUNCTION(this << src << dst << static_cast<uint32_t>(protocol) << srcPort << dstPort);
    Ipv4Header header;
    header.SetSource(src);
    header.SetDestination(dst);
    header.SetProtocol(protocol);
    Ptr<Ipv4Route> route = Lookup(header, srcPort, dstPort);
    return route ? m_ipv4->GetInterfaceForDevice(route->GetOutputDevice()) : -1;
}

Ptr<Ipv4Route>
EcmpRouting::Lookup(const Ipv4Header& header, uint16_t srcPort, uint16_t dstPort) const
{
    NS_LOG_FUNCTION(this << header << srcPort << dstPort);
    const auto& hops = HopsTo(header.GetDestination());
    if (hops.empty())
    {
        return nullptr;
    }
    size_t choice = 0;
    if (hops.size() > 1)
    {
        uint64_t key = (uint64_t(header.GetSource().Get()) << 32) | header.GetDestination().Get();
        uint64_t ports = (uint64_t(srcPort) << 24) | (uint64_t(dstPort) << 8) | header.GetProtocol();
        choice = Mix(Mix(key ^ m_salt) ^ ports) % hops.size();
    }
    const NextHop& hop = hops[choice];
    auto route = Create<Ipv4Route>();
    route->SetDestination(header.GetDestination());
    route->SetGateway(hop.gateway);
    route->SetOutputDevice(m_ipv4->GetNetDevice(hop.interface));
    route->SetSource(m_ipv4->GetAddress(hop.interface, 0).GetLocal());
    return route;
}

Ptr<Ipv4Route>
EcmpRouting::RouteOutput(Ptr<Packet> p,
                         const Ipv4Header& header,
                         Ptr<NetDevice> oif,
                         Socket::SocketErrno& sockerr)
{
    NS_LOG_FUNCTION(this << p << header << oif);
    // Locally originated traffic comes from single-homed hosts, whose table
    // has one next hop per destination, so the ports are not needed here
    // (the packet handed in does not reliably carry its L4 header yet).
    Ptr<Ipv4Route> route = Lookup(header, 0, 0);
    sockerr = route ? Socket::ERROR_NOTERROR : Socket::ERROR_NOROUTETOHOST;
    return route;
}

bool
EcmpRouting::RouteInput(Ptr<const Packet> p,
                        const Ipv4Header& header,
                        Ptr<const NetDevice> idev,
                        const UnicastForwardCallback& ucb,
                        const MulticastForwardCallback& mcb,
                        const LocalDeliverCallback& lcb,
                        const ErrorCallback& ecb)
{
    NS_LOG_FUNCTION(this << p << header << idev);
    // Ipv4L3Protocol::IsDestinationAddress walks every interface of the node
    // (the weak end-system model): on a switch, every port, for every packet,
    // a cost that grows with the fabric. A destination that is none of the
    // node's own addresses, nor multicast, nor the limited broadcast, is not
    // for the node under either model and is forwarded at once; for the rest
    // ns-3 gives its exact answer.
    const Ipv4Address destination = header.GetDestination();
    if (m_ownAddresses.count(destination.Get()) > 0 || destination.IsMulticast() ||
        destination.IsBroadcast())
    {
        const uint32_t iif = m_ipv4->GetInterfaceForDevice(idev);
        if (m_ipv4->IsDestinationAddress(destination, iif))
        {
            if (!lcb.IsNull())
            {
                lcb(p, header, iif);
                return true;
            }
            return false;
        }
    }
    // The IP header is already removed: TCP and UDP both start with the ports.
    uint16_t srcPort = 0;
    uint16_t dstPort = 0;
    if ((header.GetProtocol() == 6 || header.GetProtocol() == 17) && p->GetSize() >= 4)
    {
        uint8_t buf[4];
        p->CopyData(buf, 4);
        srcPort = (uint16_t(buf[0]) << 8) | buf[1];
        dstPort = (uint16_t(buf[2]) << 8) | buf[3];
    }
    Ptr<Ipv4Route> route = Lookup(header, srcPort, dstPort);
    if (!route)
    {
        ecb(p, header, Socket::ERROR_NOROUTETOHOST);
        return false;
    }
    ucb(route, p, header);
    return true;
}

void
EcmpRouting::NotifyInterfaceUp(uint32_t)
{
    NS_LOG_FUNCTION(this);
}

void
EcmpRouting::NotifyInterfaceDown(uint32_t)
{
    NS_LOG_FUNCTION(this);
}

void
EcmpRouting::NotifyAddAddress(uint32_t, Ipv4InterfaceAddress address)
{
    NS_LOG_FUNCTION(this << address);
    AddOwnAddress(address);
}

void
EcmpRouting::NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress)
{
    NS_LOG_FUNCTION(this);
    CollectOwnAddresses(); // another interface may hold the same one
}

void
EcmpRouting::SetIpv4(Ptr<Ipv4> ipv4)
{
    NS_LOG_FUNCTION(this << ipv4);
    m_ipv4 = ipv4;
    CollectOwnAddresses(); // those assigned before the protocol was installed
}

void
EcmpRouting::CollectOwnAddresses()
{
    NS_LOG_FUNCTION(this);
    m_ownAddresses.clear();
    for (uint32_t i = 0; m_ipv4 && i < m_ipv4->GetNInterfaces(); i++)
    {
        for (uint32_t j = 0; j < m_ipv4->GetNAddresses(i); j++)
        {
            AddOwnAddress(m_ipv4->GetAddress(i, j));
        }
    }
}

void
EcmpRouting::AddOwnAddress(const Ipv4InterfaceAddress& address)
{
    m_ownAddresses.insert(address.GetLocal().Get());
    m_ownAddresses.insert(address.GetBroadcast().Get());
}

void
EcmpRouting::PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit) const
{
    NS_LOG_FUNCTION(this << stream);
    std::ostream& os = *stream->GetStream();
    os << "EcmpRouting node " << m_ipv4->GetObject<Node>()->GetId() << "\n";
    for (const auto& [dest, hops] : m_routes)
    {
        os << Ipv4Address(dest) << ":";
        for (const auto& hop : hops)
        {
            os << " if" << hop.interface << " via " << hop.gateway;
        }
        os << "\n";
    }
}

} // namespace ns3
