// A FIFO queue disc that marks ECN at a fixed queue length: a packet that
// arrives when `MarkThreshold` or more packets are queued is marked CE if
// its transport is ECN-capable (ECT); a packet that is not ECN-capable is
// queued unmarked. Packets are dropped only when the queue is full
// (`MaxSize`). This is the step marking DCTCP is designed for (RFC 8257:
// mark when the instantaneous queue exceeds K), used as a band (child) of
// prio, pfifo_fast or weighted DRR.
#ifndef DDNN_ECN_THRESHOLD_QUEUE_DISC_H
#define DDNN_ECN_THRESHOLD_QUEUE_DISC_H

#include "ns3/queue-disc.h"

namespace ns3
{

class EcnThresholdQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId();
    EcnThresholdQueueDisc();
    ~EcnThresholdQueueDisc() override;

    static constexpr const char* LIMIT_EXCEEDED_DROP = "Queue disc limit exceeded";
    static constexpr const char* THRESHOLD_MARK = "Queue length at or above the threshold";

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> DoDequeue() override;
    Ptr<const QueueDiscItem> DoPeek() override;
    bool CheckConfig() override;
    void InitializeParams() override;

    uint32_t m_threshold; //!< K, packets
};

} // namespace ns3

#endif
