#include "ecmp-routing-helper.h"

#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("EcmpRoutingHelper");

EcmpRoutingHelper*
EcmpRoutingHelper::Copy() const
{
    NS_LOG_FUNCTION(this);
    return new EcmpRoutingHelper(*this);
}

Ptr<Ipv4RoutingProtocol>
EcmpRoutingHelper::Create(Ptr<Node> node) const
{
    NS_LOG_FUNCTION(this << node);
    return CreateObjectWithAttributes<EcmpRouting>("Salt", UintegerValue(node->GetId()));
}

Ptr<EcmpRouting>
EcmpRoutingHelper::GetRouting(Ptr<Node> node)
{
    NS_LOG_FUNCTION(node);
    Ptr<Ipv4> ipv4 = node->GetObject<Ipv4>();
    NS_ABORT_MSG_IF(!ipv4, "node " << node->GetId() << " has no internet stack");
    Ptr<EcmpRouting> routing = DynamicCast<EcmpRouting>(ipv4->GetRoutingProtocol());
    NS_ABORT_MSG_IF(!routing, "node " << node->GetId() << " does not use EcmpRouting");
    return routing;
}

} // namespace ns3
