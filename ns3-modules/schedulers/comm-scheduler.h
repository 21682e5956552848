// Sender side of a communication-scheduling policy, the one
// mechanism of every architecture. One instance per sending end of a
// parameter-server channel (a worker pushing gradients to one shard, or a
// shard pulling parameters to one worker), and one per ring-allreduce job
// (its queue of fused buffers ready on every worker). The sender hands it
// whole tensors (push), aggregated parts of one (pull) or ready buffers (ring)
// with Enqueue(), and asks Next() which chunk to commit to the network now,
// given the bytes it committed that the other end has not received yet.
//
// The base class is the mechanism every policy shares: items are cut into
// GetChunkBytes() chunks (0: whole), kept ordered by MakeKey() (smallest
// first), and a chunk is admitted when nothing is in flight or it fits in
// GetCreditBytes(). A policy is a subclass overriding those three (and, for
// stateful ones, Pick() and the Notify* hooks); it is chosen by TypeId name
// (ns3::FifoScheduler, ...), so adding one touches its own file pair and the
// harness's policy table (harness/traffic/schedulers.py), whichever architecture uses it.
#ifndef DDNN_COMM_SCHEDULER_H
#define DDNN_COMM_SCHEDULER_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>

namespace ns3
{

class TrainingJob;

/// \brief A piece of one tensor's gradients (push) or parameters (pull).
struct PsChunk
{
    uint64_t iteration; //!< iteration the chunk belongs to
    uint32_t tensor;    //!< = layer index
    uint64_t offset;    //!< first byte within the tensor
    uint64_t bytes;     //!< size of the chunk
    uint8_t tos;        //!< class it travels in (may be raised while unsent)
    int64_t deadlineNs; //!< when the worker's forward needs the tensor; -1: none
    uint64_t row;       //!< the job's transfer row, once committed
    uint32_t unit = 0;  //!< ring: the buffer it stands for (the job's own numbering)
};

/**
 * \ingroup ddnn
 * \brief Sender side of a communication-scheduling policy: the one mechanism of every architecture.
 */
class CommScheduler : public Object
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    CommScheduler();

    /// \brief A credit with no limit.
    static constexpr uint64_t UNLIMITED = std::numeric_limits<uint64_t>::max();

    /// \brief Bind to `job`; this sender pushes to / pulls from shard `shard`
    /// (a ring job: shard 0, push).
    virtual void Attach(const TrainingJob* job, uint32_t shard, bool push);
    /// \brief Abort with a message naming the attribute if the parameters are unusable.
    virtual void Validate() const;

    /// \brief A tensor (push) or an aggregated part of one (pull) is ready to send.
    void Enqueue(const PsChunk& item);
    /// \brief The next chunk to commit now, or false. `inflight`: bytes committed
    /// by this sender and not yet received by the other end.
    bool Next(uint64_t inflight, PsChunk& out);
    /// \brief Move the unsent chunks of (iteration, tensor) to class `tos`.
    void Raise(uint64_t iteration, uint32_t tensor, uint8_t tos);
    /// \brief Whether chunks wait to be committed.
    bool HasPending() const;

    /// \brief A chunk committed at `sent` has been received by the other end.
    virtual void NotifyDelivered(const PsChunk& chunk, Time sent);
    /// \brief The job completed an iteration (worker 0's) that took `duration`.
    virtual void NotifyIterationDone(uint64_t iteration, Time duration);
    /// \brief The policy's adaptive state for the job's tables ("" if it has none),
    /// e.g. "partition=160000;credit=320000".
    virtual std::string GetState() const;

  protected:
    using Key = std::array<uint64_t, 4>; //!< lexicographic; unique per chunk
    using Pending = std::map<Key, PsChunk>;

    /// Chunk size items are cut into; 0 = whole items.
    virtual uint64_t GetChunkBytes() const;
    /// Bytes that may be in flight (a chunk is always admitted when none are).
    virtual uint64_t GetCreditBytes() const;
    /// Order of pending chunks, smallest first. Default: FIFO (enqueue order).
    virtual Key MakeKey(const PsChunk& chunk, uint64_t seq) const;
    /// Called by Enqueue() with the whole item, before it is cut.
    virtual void NotifyEnqueued(const PsChunk& item);
    /// Choose and remove the chunk to commit. Default: the smallest key if
    /// the credit admits it.
    virtual bool Pick(uint64_t inflight, PsChunk& out);

    /// Credit rule: nothing in flight, or the chunk fits in the credit.
    bool Admits(uint64_t inflight, uint64_t bytes) const;
    /// Key by priority: lowest layer first, then older iteration, then offset.
    static Key PriorityKey(const PsChunk& chunk, uint64_t seq);

    Pending m_pending;
    const TrainingJob* m_job;
    uint32_t m_shard;
    bool m_push;

  private:
    uint64_t m_seq;
};

} // namespace ns3

#endif
