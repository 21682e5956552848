// random (TicTac's baseline): the PS sends each worker the parameters of an
// iteration in a random order, drawn per iteration and per worker (each
// sender its own stream), pipelined like tictac's. It stands for
// TensorFlow's default, in which the parameter transfers of an iteration
// start in an arbitrary order that differs between workers and iterations
// (Hashemi et al., MLSys'19). (Pushes are fifo.)
#ifndef DDNN_RANDOM_ORDER_SCHEDULER_H
#define DDNN_RANDOM_ORDER_SCHEDULER_H

#include "tictac-scheduler.h"

#include "ns3/random-variable-stream.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief random: a random order per iteration and worker (TicTac's baseline).
 */
class RandomOrderScheduler : public TicTacScheduler
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    RandomOrderScheduler();

  protected:
    std::vector<uint32_t> MakeOrder(uint64_t iteration) override;
    void DoDispose() override;

  private:
    Ptr<UniformRandomVariable> m_random;
};

} // namespace ns3

#endif
