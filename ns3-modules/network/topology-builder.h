// Builds the wired network the harness describes: nodes with an internet
// stack routed by EcmpRouting, point-to-point links whose NetDevice TX queue
// holds one packet (so the queue disc does all the queueing), addresses (a
// /30 per link) and routes. Queue discs are installed by QueueDiscInstaller
// between AddLink() and AssignAddresses(); measurement lives elsewhere.
#ifndef DDNN_TOPOLOGY_BUILDER_H
#define DDNN_TOPOLOGY_BUILDER_H

#include "ecmp-routing.h"

#include "ns3/ipv4-address.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/object.h"

#include <vector>

namespace ns3
{

class EcmpRouting;

/**
 * \ingroup ddnn
 * \brief Builds the wired network: nodes, point-to-point links, addresses and routes.
 */
class TopologyBuilder : public Object
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    TopologyBuilder();

    /// \brief Create `n` nodes with an internet stack; returns the first new index.
    uint32_t CreateNodes(uint32_t n);
    /// \brief Connect nodes a and b; returns the link index. Side 0 is a, side 1 is b.
    uint32_t AddLink(uint32_t a, uint32_t b, uint64_t rateBps, uint64_t delayNs, uint32_t mtu);
    /// \brief Give every link a /30 and bring the interfaces up. Call after the
    /// queue discs are installed: otherwise ns-3 installs its default one.
    void AssignAddresses();
    /// \brief Route packets for `dest` at `node` over `link` (one ECMP member).
    void AddRoute(uint32_t node, Ipv4Address dest, uint32_t link);
    /// \brief Route every destination without a route of its own at `node` over `link`.
    void AddDefaultRoute(uint32_t node, uint32_t link);
    /// \brief At `atNs`, both directions of `link` change to `rateBps` (a packet
    /// being sent then finishes at the old rate; the delay is unchanged).
    void ScheduleLinkRate(uint32_t link, int64_t atNs, uint64_t rateBps);

    /// \brief Node of index `i`.
    Ptr<Node> GetNode(uint32_t i) const;
    /// \brief Node `i`'s routing protocol (every node's is an EcmpRouting).
    Ptr<EcmpRouting> GetRouting(uint32_t i) const;
    /// \brief Number of nodes.
    uint32_t GetNNodes() const;
    /// \brief Number of links.
    uint32_t GetNLinks() const;
    /// \brief Device of `link` on `side` (0: a, 1: b).
    Ptr<NetDevice> GetLinkDevice(uint32_t link, uint32_t side) const;
    /// \brief Node of `link` on `side` (0: a, 1: b).
    uint32_t GetLinkNode(uint32_t link, uint32_t side) const;
    /// \brief Address of `link` on `side` (after AssignAddresses).
    Ipv4Address GetLinkAddress(uint32_t link, uint32_t side) const;

  protected:
    void DoDispose() override;

  private:
    void SetLinkRate(uint32_t link, uint64_t rateBps);
    /// `node`'s routing, interface on `link` and the next hop's address over it.
    Ptr<EcmpRouting> HopOver(uint32_t node,
                             uint32_t link,
                             uint32_t& iface,
                             Ipv4Address& gateway) const;

    struct Link
    {
        uint32_t nodes[2];
        NetDeviceContainer devices;
        Ipv4Address addresses[2];
    };

    NodeContainer m_nodes;
    std::vector<Link> m_links;
    bool m_addressed;
};

} // namespace ns3

#endif
