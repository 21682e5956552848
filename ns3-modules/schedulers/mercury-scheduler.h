// mercury (Duan et al., INFOCOM'22): ~30 KB chunks, strict
// per-tensor priority (lowest layer first), preemptive between chunks: a
// front layer that becomes ready goes before the rest of a tensor already
// being sent. Mercury schedules in the transport layer; CreditBytes models
// what its transport keeps committed below the priority queue. The PS
// aggregates per chunk (the harness sets that for this policy). Preemptive =
// false is the no-preemption variant: once a tensor's first chunk is sent,
// its remaining chunks go before any other tensor's.
#ifndef DDNN_MERCURY_SCHEDULER_H
#define DDNN_MERCURY_SCHEDULER_H

#include "comm-scheduler.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Mercury: small chunks, strict per-tensor priority, preemptive between chunks.
 */
class MercuryScheduler : public CommScheduler
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    MercuryScheduler();

    /// \brief Abort unless ChunkBytes > 0 and CreditBytes >= ChunkBytes.
    void Validate() const override;

  protected:
    uint64_t GetChunkBytes() const override;
    uint64_t GetCreditBytes() const override;
    Key MakeKey(const PsChunk& chunk, uint64_t seq) const override;
    bool Pick(uint64_t inflight, PsChunk& out) override;

  private:
    uint64_t m_chunk;
    uint64_t m_credit;
    bool m_preemptive;
    bool m_sending;         //!< a tensor is partly sent (no-preemption variant)
    uint64_t m_curIteration;
    uint32_t m_curTensor;
};

} // namespace ns3

#endif
