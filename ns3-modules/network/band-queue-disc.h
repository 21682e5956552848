// One band (child queue disc) of prio, pfifo_fast or weighted DRR: a FIFO
// with three optional behaviours.
//
// Buffer: with a SharedBuffer the band also asks the pool before it queues a
// packet (one limit shared by the port's bands, or dynamic thresholds over a
// port's or a switch's pool) and tells it what leaves; without one, the
// band's own MaxSize is its private buffer (a limit per band).
//
// ECN (MarkThreshold K > 0): a packet that arrives when K or more packets
// are queued is marked CE if its transport is ECN-capable (ECT); a packet
// that is not ECN-capable is queued unmarked. This is the step marking
// DCTCP is designed for (RFC 8257: mark when the instantaneous queue exceeds
// K).
//
// SetEct (a host's egress): TCP segments that carry data are made
// ECN-capable (ECT(0)) on the way in. ns-3.44's TCP, like the sender's
// kernel, negotiates ECN, but never sends ECT from a socket whose IP ToS is
// nonzero (Socket::SetIpTos keeps a stream socket's ECN bits at 0 and
// TcpSocketBase::AddSocketTags then sends the ToS unchanged), and the
// harness gives every traffic class but one a nonzero ToS. Pure ACKs, SYNs
// and FINs without data stay not-ECT (RFC 3168 6.1.4).
#ifndef DDNN_BAND_QUEUE_DISC_H
#define DDNN_BAND_QUEUE_DISC_H

#include "shared-buffer.h"

#include "ns3/queue-disc.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief A FIFO band with its own limit, optionally in a shared buffer pool
 * and optionally marking ECN CE at a fixed queue length K.
 */
class BandQueueDisc : public QueueDisc
{
  public:
    /// \brief Get the type ID. \return the object TypeId
    static TypeId GetTypeId();
    /// \brief A FIFO of MaxSize, no pool, no marking.
    BandQueueDisc();
    ~BandQueueDisc() override;

    /// \brief Drop reason: the band's own limit was reached.
    static constexpr const char* LIMIT_EXCEEDED_DROP = "Queue disc limit exceeded";
    /// \brief Mark reason: the queue was at or above K.
    static constexpr const char* THRESHOLD_MARK = "Queue length at or above the threshold";

    /// \return The most packets the band held, counted as each one was queued.
    uint32_t GetMaxBacklog() const;
    /// \return The sum, over the packets queued, of the packets each found queued.
    uint64_t GetArrivalBacklogSum() const;

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> DoDequeue() override;
    Ptr<const QueueDiscItem> DoPeek() override;
    bool CheckConfig() override;
    void InitializeParams() override;
    void DoDispose() override;
    void SetEctOnData(Ptr<QueueDiscItem> item) const;

    Ptr<SharedBuffer> m_buffer; //!< the pool this band shares, or null (private buffer)
    double m_alpha;             //!< dynamic-threshold factor of this band
    uint32_t m_threshold;       //!< ECN K, packets; 0 = no marking
    bool m_setEct;              //!< make TCP data ECN-capable (a host's egress)
    bool m_ectAcks;             //!< and pure ACKs too (with m_setEct)
    // Kept here rather than by the queue tracker's trace sinks: the band is
    // in cache as it queues a packet, four sink calls per packet and hop are
    // not (+8 % events per CPU-second at 512 hosts, docs/performance/scaling.md).
    uint32_t m_maxBacklog{0};   //!< most packets held, after an arrival
    uint64_t m_backlogSum{0};   //!< sum over arrivals of the packets they found
};

} // namespace ns3

#endif
