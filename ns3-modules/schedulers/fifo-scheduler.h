// fifo: whole tensors in the order they became ready (wait-free
// backpropagation), all committed at once: the TCP send buffer holds the
// queue, and nothing can overtake what is already in it.
#ifndef DDNN_FIFO_SCHEDULER_H
#define DDNN_FIFO_SCHEDULER_H

#include "comm-scheduler.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief fifo: whole items in arrival order, one at a time.
 */
class FifoScheduler : public CommScheduler
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
};

} // namespace ns3

#endif
