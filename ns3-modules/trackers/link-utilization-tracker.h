// Bytes put on the wire per link direction, per time interval, per IP ToS
// (traffic class) and per application (recognised by TCP/UDP port). Hooked
// to PointToPointNetDevice's PhyTxBegin, so it counts what the link carries.
#ifndef DDNN_LINK_UTILIZATION_TRACKER_H
#define DDNN_LINK_UTILIZATION_TRACKER_H

#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/packet.h"

#include <deque>
#include <map>
#include <string>
#include <unordered_map>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Counts the bytes each link direction carries per interval, by traffic kind.
 */
class LinkUtilizationTracker : public Object
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    LinkUtilizationTracker();

    /// \brief Packets whose source or destination port is in [lo, hi] belong to
    /// application `app` (first match wins; unmatched traffic is app 0).
    void AddApplicationPorts(uint16_t lo, uint16_t hi, uint32_t app);
    /// \brief Count the transmissions of `device` (link `link`, from -> to).
    void Track(Ptr<NetDevice> device, uint32_t link, uint32_t fromNode, uint32_t toNode);

    /// \brief link,from_node,to_node,interval,tos,app,bytes (interval = index of
    /// the Interval-long bin; rows only for bins with traffic)
    std::string ToCsv() const;

  protected:
    void DoDispose() override;

  private:
    struct Direction
    {
        LinkUtilizationTracker* tracker;
        uint32_t link;
        uint32_t fromNode;
        uint32_t toNode;
        std::map<uint64_t, uint64_t> bytes; //!< key: interval << 40 | tos << 32 | app
    };
    struct PortRange
    {
        uint16_t lo;
        uint16_t hi;
        uint32_t app;
    };

    static void OnTransmit(Direction* direction, Ptr<const Packet> packet);
    uint32_t Classify(uint16_t srcPort, uint16_t dstPort) const;

    Time m_interval;
    std::vector<PortRange> m_ports;
    std::deque<Direction> m_directions;
};

} // namespace ns3

#endif
