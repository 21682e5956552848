// priority: whole tensors, lowest layer first (the one the next
// forward pass needs first), older iteration on ties; no preemption inside a
// tensor. Tensors wait in the sender's queue, not in the TCP buffer: the next
// one is chosen when the in-flight bytes drop to CreditBytes (default 0: one
// tensor at a time), so a front layer that becomes ready overtakes the queue.
#ifndef DDNN_PRIORITY_SCHEDULER_H
#define DDNN_PRIORITY_SCHEDULER_H

#include "comm-scheduler.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief priority: whole tensors, lowest layer first.
 */
class PriorityScheduler : public CommScheduler
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    PriorityScheduler();

  protected:
    uint64_t GetCreditBytes() const override;
    Key MakeKey(const PsChunk& chunk, uint64_t seq) const override;

  private:
    uint64_t m_credit;
};

} // namespace ns3

#endif
