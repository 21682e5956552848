// bytescheduler (Peng et al., SOSP'19): tensors cut into
// PartitionBytes partitions, strict priority (lowest layer first) among
// partitions not yet sent, and at most CreditBytes committed and not yet
// received. P3 (Jayarajan et al., SysML'19) is the preset partition = credit
// = 160 KB (one partition in flight).
#ifndef DDNN_BYTE_SCHEDULER_H
#define DDNN_BYTE_SCHEDULER_H

#include "comm-scheduler.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief bytescheduler: partitions, strict priority, a credit of bytes in flight.
 */
class ByteScheduler : public CommScheduler
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    ByteScheduler();

    /// \brief Abort unless PartitionBytes > 0 and CreditBytes >= PartitionBytes.
    void Validate() const override;
    /// \brief Size tensors are cut into.
    uint64_t GetPartitionBytes() const;
    /// \brief Bytes that may be committed and not yet received.
    uint64_t GetCredit() const;

  protected:
    uint64_t GetChunkBytes() const override;
    uint64_t GetCreditBytes() const override;
    Key MakeKey(const PsChunk& chunk, uint64_t seq) const override;

    uint64_t m_partition;
    uint64_t m_credit;
};

} // namespace ns3

#endif
