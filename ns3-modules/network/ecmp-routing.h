// Per-flow ECMP routing: a static table of next-hop sets per destination
// host, with the next hop chosen by a hash of the 5-tuple. A flow therefore
// keeps one path (no TCP reordering) while different flows spread over all
// equal-cost paths. The table is computed outside (Python, from the topology
// graph) and pushed in with AddRoute().
#ifndef DDNN_ECMP_ROUTING_H
#define DDNN_ECMP_ROUTING_H

#include "ns3/ipv4-routing-protocol.h"
#include "ns3/ipv4.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Static IPv4 routing with equal-cost multipath: a flow hash picks one member per flow.
 */
class EcmpRouting : public Ipv4RoutingProtocol
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    EcmpRouting();

    /// \brief Add one next hop for host address `dest`; several calls for the same
    /// destination form its equal-cost set (kept in call order).
    void AddRoute(Ipv4Address dest, uint32_t interface, Ipv4Address gateway);
    /// \brief The next hop for every destination without a route of its own: a
    /// single-homed host's one link, instead of one route per other host (a
    /// table of hosts x hosts entries over the fabric).
    void SetDefaultRoute(uint32_t interface, Ipv4Address gateway);
    /// \brief Number of equal-cost next hops towards `dest` (0 if unknown; the
    /// default route counts for every destination without its own).
    uint32_t GetNRoutes(Ipv4Address dest) const;
    /**
     * \brief The interface a forwarded packet of this 5-tuple leaves by: the
     * flow hash's choice among the equal-cost next hops (as RouteInput makes it).
     * \param src source address
     * \param dst destination address
     * \param protocol IP protocol (6 TCP, 17 UDP)
     * \param srcPort source port
     * \param dstPort destination port
     * \return the interface index, or -1 without a route
     */
    int32_t GetOutputInterface(Ipv4Address src,
                               Ipv4Address dst,
                               uint8_t protocol,
                               uint16_t srcPort,
                               uint16_t dstPort) const;

    /// \brief Route a locally sent packet (Ipv4RoutingProtocol).
    Ptr<Ipv4Route> RouteOutput(Ptr<Packet> p,
                               const Ipv4Header& header,
                               Ptr<NetDevice> oif,
                               Socket::SocketErrno& sockerr) override;
    /// \brief Deliver or forward a received packet (Ipv4RoutingProtocol).
    bool RouteInput(Ptr<const Packet> p,
                    const Ipv4Header& header,
                    Ptr<const NetDevice> idev,
                    const UnicastForwardCallback& ucb,
                    const MulticastForwardCallback& mcb,
                    const LocalDeliverCallback& lcb,
                    const ErrorCallback& ecb) override;
    /// \brief Ipv4RoutingProtocol hook (routes are static: nothing to do).
    void NotifyInterfaceUp(uint32_t interface) override;
    /// \brief Ipv4RoutingProtocol hook (routes are static: nothing to do).
    void NotifyInterfaceDown(uint32_t interface) override;
    /// \brief Ipv4RoutingProtocol hook (routes are static: nothing to do).
    void NotifyAddAddress(uint32_t interface, Ipv4InterfaceAddress address) override;
    /// \brief Ipv4RoutingProtocol hook (routes are static: nothing to do).
    void NotifyRemoveAddress(uint32_t interface, Ipv4InterfaceAddress address) override;
    /// \brief The node's IPv4 stack (Ipv4RoutingProtocol).
    void SetIpv4(Ptr<Ipv4> ipv4) override;
    /// \brief Print the routes (Ipv4RoutingProtocol).
    void PrintRoutingTable(Ptr<OutputStreamWrapper> stream,
                           Time::Unit unit = Time::S) const override;

  protected:
    void DoDispose() override;

  private:
    struct NextHop
    {
        uint32_t interface;
        Ipv4Address gateway;
    };

    /// The equal-cost next hops towards `dest`: its own, else the default (or none).
    const std::vector<NextHop>& HopsTo(Ipv4Address dest) const;
    /// Pick the next hop for a flow; nullptr if there is no route.
    Ptr<Ipv4Route> Lookup(const Ipv4Header& header, uint16_t srcPort, uint16_t dstPort) const;
    /// Gather the local and broadcast addresses of every interface of the node.
    void CollectOwnAddresses();
    /// Note one interface address's local and broadcast address as the node's own.
    void AddOwnAddress(const Ipv4InterfaceAddress& address);

    Ptr<Ipv4> m_ipv4;
    uint64_t m_salt; //!< per-node hash salt, so that switches do not all pick alike
    std::unordered_map<uint32_t, std::vector<NextHop>> m_routes;
    std::vector<NextHop> m_default; //!< empty, or the one default next hop
    /// The local and broadcast addresses of all the node's interfaces: what
    /// Ipv4L3Protocol::IsDestinationAddress can answer true for, besides
    /// multicast and limited broadcast.
    std::unordered_set<uint32_t> m_ownAddresses;
};

} // namespace ns3

#endif
