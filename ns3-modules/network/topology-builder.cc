#include "topology-builder.h"

#include "ecmp-routing-helper.h"

#include "ns3/abort.h"
#include "ns3/data-rate.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/queue-size.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TopologyBuilder");

NS_OBJECT_ENSURE_REGISTERED(TopologyBuilder);

TypeId
TopologyBuilder::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TopologyBuilder")
                            .SetParent<Object>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<TopologyBuilder>();
    return tid;
}

TopologyBuilder::TopologyBuilder()
    : m_addressed(false)
{
    NS_LOG_FUNCTION(this);
}

void
TopologyBuilder::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_links.clear();
    m_nodes = NodeContainer();
    Object::DoDispose();
}

uint32_t
TopologyBuilder::CreateNodes(uint32_t n)
{
    NS_LOG_FUNCTION(this << n);
    uint32_t first = m_nodes.GetN();
    NodeContainer fresh;
    fresh.Create(n);
    InternetStackHelper stack;
    stack.SetRoutingHelper(EcmpRoutingHelper());
    stack.SetIpv6StackInstall(false);
    stack.Install(fresh);
    m_nodes.Add(fresh);
    return first;
}

uint32_t
TopologyBuilder::AddLink(uint32_t a, uint32_t b, uint64_t rateBps, uint64_t delayNs, uint32_t mtu)
{
    NS_LOG_FUNCTION(this << a << b << rateBps << delayNs << mtu);
    NS_ABORT_MSG_IF(a >= m_nodes.GetN() || b >= m_nodes.GetN() || a == b,
                    "bad link " << a << "-" << b);
    NS_ABORT_MSG_IF(m_addressed, "links must be added before AssignAddresses()");
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(rateBps)));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(delayNs)));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("1p")));
    Link link;
    link.nodes[0] = a;
    link.nodes[1] = b;
    link.devices = p2p.Install(m_nodes.Get(a), m_nodes.Get(b));
    m_links.push_back(link);
    return m_links.size() - 1;
}

void
TopologyBuilder::AssignAddresses()
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(m_addressed, "AssignAddresses() called twice");
    NS_ABORT_MSG_IF(m_links.size() >= (1u << 22), "too many links for 10.0.0.0/8");
    Ipv4AddressHelper addresses;
    for (uint32_t i = 0; i < m_links.size(); ++i)
    {
        // Link i owns 10.0.0.0/8 + 4i, a /30 with hosts .1 and .2.
        addresses.SetBase(Ipv4Address((10u << 24) | (i << 2)), Ipv4Mask("255.255.255.252"));
        Ipv4InterfaceContainer ifaces = addresses.Assign(m_links[i].devices);
        m_links[i].addresses[0] = ifaces.GetAddress(0);
        m_links[i].addresses[1] = ifaces.GetAddress(1);
    }
    m_addressed = true;
}

Ptr<EcmpRouting>
TopologyBuilder::HopOver(uint32_t node, uint32_t link, uint32_t& iface, Ipv4Address& gateway) const
{
    NS_LOG_FUNCTION(this << node << link);
    NS_ABORT_MSG_IF(!m_addressed, "a route before AssignAddresses()");
    const Link& l = m_links.at(link);
    uint32_t side = l.nodes[0] == node ? 0 : 1;
    NS_ABORT_MSG_IF(l.nodes[side] != node, "node " << node << " is not on link " << link);
    Ptr<Node> n = m_nodes.Get(node);
    iface = n->GetObject<Ipv4>()->GetInterfaceForDevice(l.devices.Get(side));
    gateway = l.addresses[1 - side];
    return EcmpRoutingHelper::GetRouting(n);
}

void
TopologyBuilder::AddRoute(uint32_t node, Ipv4Address dest, uint32_t link)
{
    NS_LOG_FUNCTION(this << node << dest << link);
    uint32_t iface;
    Ipv4Address gateway;
    HopOver(node, link, iface, gateway)->AddRoute(dest, iface, gateway);
}

void
TopologyBuilder::AddDefaultRoute(uint32_t node, uint32_t link)
{
    NS_LOG_FUNCTION(this << node << link);
    uint32_t iface;
    Ipv4Address gateway;
    HopOver(node, link, iface, gateway)->SetDefaultRoute(iface, gateway);
}

void
TopologyBuilder::ScheduleLinkRate(uint32_t link, int64_t atNs, uint64_t rateBps)
{
    NS_LOG_FUNCTION(this << link << atNs << rateBps);
    NS_ABORT_MSG_IF(link >= m_links.size(), "TopologyBuilder: no link " << link);
    NS_ABORT_MSG_IF(atNs < 0 || rateBps == 0,
                    "TopologyBuilder::ScheduleLinkRate: needs a time >= 0 and a rate > 0");
    Simulator::Schedule(NanoSeconds(atNs), &TopologyBuilder::SetLinkRate, this, link, rateBps);
}

void
TopologyBuilder::SetLinkRate(uint32_t link, uint64_t rateBps)
{
    NS_LOG_FUNCTION(this << link << rateBps);
    NS_LOG_INFO("link " << link << " now at " << rateBps << " bit/s");
    for (uint32_t side = 0; side < 2; ++side)
    {
        m_links[link].devices.Get(side)->SetAttribute("DataRate",
                                                      DataRateValue(DataRate(rateBps)));
    }
}

Ptr<Node>
TopologyBuilder::GetNode(uint32_t i) const
{
    NS_LOG_FUNCTION(this << i);
    return m_nodes.Get(i);
}

Ptr<EcmpRouting>
TopologyBuilder::GetRouting(uint32_t i) const
{
    NS_LOG_FUNCTION(this << i);
    return DynamicCast<EcmpRouting>(m_nodes.Get(i)->GetObject<Ipv4>()->GetRoutingProtocol());
}

uint32_t
TopologyBuilder::GetNNodes() const
{
    NS_LOG_FUNCTION(this);
    return m_nodes.GetN();
}

uint32_t
TopologyBuilder::GetNLinks() const
{
    NS_LOG_FUNCTION(this);
    return m_links.size();
}

Ptr<NetDevice>
TopologyBuilder::GetLinkDevice(uint32_t link, uint32_t side) const
{
    NS_LOG_FUNCTION(this << link << side);
    return m_links.at(link).devices.Get(side);
}

uint32_t
TopologyBuilder::GetLinkNode(uint32_t link, uint32_t side) const
{
    NS_LOG_FUNCTION(this << link << side);
    return m_links.at(link).nodes[side];
}

Ipv4Address
TopologyBuilder::GetLinkAddress(uint32_t link, uint32_t side) const
{
    NS_LOG_FUNCTION(this << link << side);
    NS_ABORT_MSG_IF(!m_addressed, "GetLinkAddress() before AssignAddresses()");
    return m_links.at(link).addresses[side];
}

} // namespace ns3
