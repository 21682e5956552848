// A FIFO queue disc that marks ECN at a fixed queue length: a packet that
// arrives when `MarkThreshold` or more packets are queued is marked CE if
// its transport is ECN-capable (ECT); a packet that is not ECN-capable is
// queued unmarked. Packets are dropped only when the queue is full
// (`MaxSize`). This is the step marking DCTCP is designed for (RFC 8257:
// mark when the instantaneous queue exceeds K), used as a band (child) of
// prio, pfifo_fast or weighted DRR.
//
// SetEct (a host's egress): TCP segments that carry data are made
// ECN-capable (ECT(0)) on the way in. ns-3.44's TCP, like the sender's
// kernel, negotiates ECN, but never sends ECT from a socket whose IP ToS is
// nonzero (Socket::SetIpTos keeps a stream socket's ECN bits at 0 and
// TcpSocketBase::AddSocketTags then sends the ToS unchanged), and the
// harness gives every traffic class but one a nonzero ToS. Pure ACKs, SYNs
// and FINs without data stay not-ECT (RFC 3168 6.1.4).
#ifndef DDNN_ECN_THRESHOLD_QUEUE_DISC_H
#define DDNN_ECN_THRESHOLD_QUEUE_DISC_H

#include "ns3/queue-disc.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief A FIFO band that marks ECN CE at a fixed queue length K (DCTCP's
 * step marking) and drops only when full.
 */
class EcnThresholdQueueDisc : public QueueDisc
{
  public:
    /// \brief Get the type ID. \return the object TypeId
    static TypeId GetTypeId();
    /// \brief A FIFO of MaxSize packets marking at MarkThreshold.
    EcnThresholdQueueDisc();
    ~EcnThresholdQueueDisc() override;

    /// \brief Drop reason: the queue was full.
    static constexpr const char* LIMIT_EXCEEDED_DROP = "Queue disc limit exceeded";
    /// \brief Mark reason: the queue was at or above K.
    static constexpr const char* THRESHOLD_MARK = "Queue length at or above the threshold";

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> DoDequeue() override;
    Ptr<const QueueDiscItem> DoPeek() override;
    bool CheckConfig() override;
    void InitializeParams() override;
    void SetEctOnData(Ptr<QueueDiscItem> item) const;

    uint32_t m_threshold; //!< K, packets
    bool m_setEct;        //!< make TCP data ECN-capable (a host's egress)
};

} // namespace ns3

#endif
