// Installs EcmpRouting as a node's IPv4 routing protocol (via
// InternetStackHelper::SetRoutingHelper), each node with its own hash salt.
#ifndef DDNN_ECMP_ROUTING_HELPER_H
#define DDNN_ECMP_ROUTING_HELPER_H

#include "ecmp-routing.h"

#include "ns3/ipv4-routing-helper.h"
#include "ns3/node.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Installs EcmpRouting as a node's IPv4 routing protocol, each node with its own salt.
 */
class EcmpRoutingHelper : public Ipv4RoutingHelper
{
  public:
    /// \brief A copy of this helper (Ipv4RoutingHelper).
    EcmpRoutingHelper* Copy() const override;
    /// \brief A new EcmpRouting for `node`, salted by its id.
    Ptr<Ipv4RoutingProtocol> Create(Ptr<Node> node) const override;

    /// \brief The EcmpRouting instance of a node with an installed internet stack.
    static Ptr<EcmpRouting> GetRouting(Ptr<Node> node);
};

} // namespace ns3

#endif
