// Per-band queue statistics of root queue discs: packets and bytes enqueued,
// dequeued and dropped, and the largest backlog seen, for every band of every
// tracked egress. Band queues exist only once a queue disc is initialised
// (at time 0), so the hooks are connected then. ECN marks are counted per
// band too. Every count is read at the end from the band itself (ns-3's
// QueueDisc counters and the BandQueueDisc's backlog), so no sink runs per
// packet; only drops pass through a sink, to fire the Drop trace source,
// which names the band. ToCsv() hands the table to the harness once, at the
// end of the run.
#ifndef DDNN_QUEUE_TRACKER_H
#define DDNN_QUEUE_TRACKER_H

#include "band-queue-disc.h"

#include "ns3/object.h"
#include "ns3/queue-disc.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Counts each queue disc band's enqueues, dequeues, drops and peak backlog.
 */
class QueueTracker : public Object
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();

    /// \brief Track a PrioQueueDisc or WeightedDrrQueueDisc (bands are its
    /// child queue discs).
    void TrackPrio(Ptr<QueueDisc> qdisc, uint32_t link, uint32_t fromNode, uint32_t toNode);

    /// \brief link,from_node,to_node,band,enqueued_packets,enqueued_bytes,
    /// dequeued_packets,dequeued_bytes,dropped_packets,dropped_bytes,max_backlog_packets,
    /// marked_packets (ECN CE marks),mean_backlog_packets (mean queue length an
    /// arriving packet found),buffer_dropped_packets (of the drops, those the
    /// shared buffer refused: pool full or the band at its dynamic threshold),
    /// backlogged_ns (how long the band held a packet: BandQueueDisc's
    /// GetBackloggedTime),headroom_dropped_packets (of the drops, a lossless
    /// band's arrivals its ingress port's PFC headroom could not hold; the
    /// drops neither counts are the band's own limit's)
    std::string ToCsv() const;

    /**
     * \brief Signature of the Drop trace source: a tracked band dropped a packet
     * (one call per packet counted in dropped_packets of ToCsv()).
     * \param link the link's index
     * \param fromNode the node the egress belongs to
     * \param toNode the node at the link's other end
     * \param band the band (child queue disc) that dropped it
     * \param item the dropped packet
     */
    typedef void (*DropCallback)(uint32_t link,
                                 uint32_t fromNode,
                                 uint32_t toNode,
                                 uint32_t band,
                                 Ptr<const QueueDiscItem> item);

  protected:
    void DoDispose() override;

  private:
    struct Band
    {
        QueueTracker* tracker; //!< the owner, whose Drop trace fires
        uint32_t link;
        uint32_t fromNode;
        uint32_t toNode;
        uint32_t band;
        Ptr<BandQueueDisc> queue; //!< the band's queue disc, read at the end
    };

    struct Pending
    {
        Ptr<QueueDisc> qdisc;
        uint32_t link;
        uint32_t fromNode;
        uint32_t toNode;
    };

    void Track(const Pending& pending);
    void ConnectPending();
    void ConnectPrio(Ptr<QueueDisc> qdisc, uint32_t link, uint32_t fromNode, uint32_t toNode);
    Band* AddBand(uint32_t link,
                  uint32_t fromNode,
                  uint32_t toNode,
                  uint32_t band,
                  Ptr<BandQueueDisc> queue);
    void ConnectBand(Band* band);

    static void OnDrop(Band* band, Ptr<const QueueDiscItem> item);

    // deques: the pointers handed to trace sinks stay valid as they grow
    std::deque<Band> m_bands;
    std::vector<Pending> m_pending; //!< queue discs to hook once they are initialised
    /// A band dropped a packet: see DropCallback.
    TracedCallback<uint32_t, uint32_t, uint32_t, uint32_t, Ptr<const QueueDiscItem>> m_dropTrace;
};

} // namespace ns3

#endif
