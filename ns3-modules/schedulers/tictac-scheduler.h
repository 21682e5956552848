// tictac (Hashemi et al., MLSys'19): the PS sends parameters in a
// fixed per-iteration order, front layers first. A pull waits for every
// earlier tensor of the order on its shard, even when it is aggregated
// before them: the order is fixed, not greedy. The order is enforced by
// commit order on the connection (TCP delivers in commit order), so the
// transfers are pipelined, not serialised: the paper orders transfers, it
// does not wait for one to arrive before starting the next. OneAtATime =
// true is the serialised variant (the next transfer is committed only once
// the previous one has been received), kept to measure what it costs.
// (Pushes under tictac are fifo: the harness pairs this pull scheduler with
// a FifoScheduler at the workers.) Subclasses change the order (MakeOrder).
#ifndef DDNN_TICTAC_SCHEDULER_H
#define DDNN_TICTAC_SCHEDULER_H

#include "comm-scheduler.h"

#include <map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief TicTac: a fixed order per iteration, front layers first.
 */
class TicTacScheduler : public CommScheduler
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    TicTacScheduler();

    /// \brief Bind to the job and fix this sender's order from its per-layer table.
    void Attach(const TrainingJob* job, uint32_t shard, bool push) override;

  protected:
    uint64_t GetCreditBytes() const override;
    Key MakeKey(const PsChunk& chunk, uint64_t seq) const override;
    void NotifyEnqueued(const PsChunk& item) override;
    bool Pick(uint64_t inflight, PsChunk& out) override;

    /// The order of this shard's tensors (GetTensors()) in `iteration`.
    /// TicTac: front layers first, the same in every iteration.
    virtual std::vector<uint32_t> MakeOrder(uint64_t iteration);
    /// This shard's tensors, ascending.
    const std::vector<uint32_t>& GetTensors() const;

  private:
    std::vector<uint32_t> m_tensors; //!< this shard's tensors, ascending
    bool m_oneAtATime;
    uint64_t m_iteration; //!< iteration of the next transfer in the order
    uint32_t m_position;  //!< its position in that iteration's order
    uint64_t m_committed; //!< bytes of it committed so far
    //!< per iteration not yet fully committed: tensor -> position in its order
    std::map<uint64_t, std::map<uint32_t, uint32_t>> m_positions;
};

} // namespace ns3

#endif
