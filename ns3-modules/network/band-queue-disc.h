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
// K). Or RED-like (MarkMax > 0), as DCQCN deployments configure switches:
// an arrival finding an average queue q (MarkWeight: the EWMA weight of
// each arrival's sample, 1 = the instantaneous queue) is marked with
// probability 0 below MarkMin, rising linearly to MarkProbability at
// MarkMax, and 1 above MarkMax.
//
// PFC (Lossless, with a PfcPort on the egress's device): a lossless band
// has no limit of its own at a switch; the port the packet came in by
// (its PfcIngressTag) admits it (its XOFF threshold and headroom) and is
// credited when it leaves, and a band paused by the downstream port's pause
// frames hands out nothing (the root serves the other bands) until resumed.
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
#include "ns3/random-variable-stream.h"

namespace ns3
{

class PfcPort;

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
    /// \brief Mark reason: RED-like marking (MarkMin, MarkMax) chose the packet.
    static constexpr const char* PROFILE_MARK = "Marked by the RED-like profile";
    /// \brief Drop reason: a lossless band's packet found its ingress port's headroom full.
    static constexpr const char* HEADROOM_DROP = "PFC headroom exceeded";

    /// \brief Be band `band` of an egress whose device has PFC port `port`
    /// (PfcPort::Install); a Lossless band is then accounted at ingress.
    void SetPfc(Ptr<PfcPort> port, uint32_t band);
    /// \return whether the band is lossless (attribute Lossless)
    bool IsLossless() const;
    /// \brief Pause (true) or resume (false) the band: paused, it hands out nothing.
    void SetPaused(bool paused);
    /// \return whether the band is paused
    bool IsPaused() const;

    /// \return The most packets the band held, counted as each one was queued.
    uint32_t GetMaxBacklog() const;
    /// \return The sum, over the packets queued, of the packets each found queued.
    uint64_t GetArrivalBacklogSum() const;
    /// \return How long the band has held a packet so far (its busy periods
    /// summed, the one under way up to now): the time a packet of its waited,
    /// less what its own packets took to send, is the time another band was
    /// served while it waited (the queue tracker's starved_s).
    Time GetBackloggedTime() const;

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> DoDequeue() override;
    Ptr<const QueueDiscItem> DoPeek() override;
    bool CheckConfig() override;
    void InitializeParams() override;
    void DoDispose() override;
    void SetEctOnData(Ptr<QueueDiscItem> item) const;
    /// \brief RED-like marking of an arrival (MarkMax > 0).
    void MarkByProfile(Ptr<QueueDiscItem> item);
    /// \brief The ingress port that admitted `item` (its tag), or null.
    Ptr<PfcPort> IngressOf(Ptr<const QueueDiscItem> item) const;

    Ptr<SharedBuffer> m_buffer; //!< the pool this band shares, or null (private buffer)
    double m_alpha;             //!< dynamic-threshold factor of this band
    uint32_t m_threshold;       //!< ECN K, packets; 0 = no marking
    bool m_setEct;              //!< make TCP data ECN-capable (a host's egress)
    bool m_ectAcks;             //!< and pure ACKs too (with m_setEct)
    QueueSize m_markMin;        //!< RED-like profile: no marking below
    QueueSize m_markMax;        //!< RED-like profile: MarkProbability at, all above; 0 = none
    double m_markProbability;   //!< RED-like profile: Pmax
    double m_markWeight;        //!< RED-like profile: EWMA weight of each sample
    int64_t m_markStream;       //!< RED-like profile: its random stream (-1: automatic)
    double m_markAverage{0};    //!< RED-like profile: the averaged queue, in MarkMax's unit
    Ptr<UniformRandomVariable> m_markRng; //!< made only with a profile
    bool m_lossless;            //!< PFC: the band never drops at a switch
    Ptr<PfcPort> m_pfc;         //!< the egress device's PFC port, or null
    uint32_t m_band{0};         //!< this band's index at its egress
    bool m_paused{false};       //!< paused by a pause frame
    // Kept here rather than by the queue tracker's trace sinks: the band is
    // in cache as it queues a packet, four sink calls per packet and hop are
    // not (+8 % events per CPU-second at 512 hosts, docs/performance/scaling.md).
    uint32_t m_maxBacklog{0};   //!< most packets held, after an arrival
    uint64_t m_backlogSum{0};   //!< sum over arrivals of the packets they found
    Time m_backlogged;          //!< busy periods summed, before the one under way
    Time m_backlogSince;        //!< start of the busy period under way (if holding a packet)
};

} // namespace ns3

#endif
