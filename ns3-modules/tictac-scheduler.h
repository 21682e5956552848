// tictac (SPEC §2c; Hashemi et al., MLSys'19): the PS sends parameters in a
// fixed per-iteration order, front layers first, one transfer at a time per
// worker. A pull waits for every earlier tensor of the order on its shard,
// even when it is aggregated before them: the order is fixed, not greedy.
// (Pushes under tictac are fifo: the harness pairs this pull scheduler with
// a FifoScheduler at the workers.)
#ifndef DDNN_TICTAC_SCHEDULER_H
#define DDNN_TICTAC_SCHEDULER_H

#include "comm-scheduler.h"

#include <vector>

namespace ns3
{

class TicTacScheduler : public CommScheduler
{
  public:
    static TypeId GetTypeId();
    TicTacScheduler();

    void Attach(const PsJob* job, uint32_t shard, bool push) override;

  protected:
    uint64_t GetCreditBytes() const override;
    Key MakeKey(const PsChunk& chunk, uint64_t seq) const override;
    bool Pick(uint64_t inflight, PsChunk& out) override;

  private:
    std::vector<uint32_t> m_order; //!< this shard's tensors, front layers first
    uint64_t m_iteration;          //!< iteration of the next transfer in the order
    size_t m_position;             //!< its index in m_order
    uint64_t m_committed;          //!< bytes of it committed so far
};

} // namespace ns3

#endif
