// prophet (Zhang et al., ICPP'21): gradients are grouped into
// blocks; one block is in flight at a time. When the previous block has been
// received, the next one takes the ready gradients, front layers first, up to
// what the measured bandwidth carries before the next gradient is ready by
// the profile (the layer's backward time). Once gradient 0 (the last of the
// backward pass) is ready, everything left goes in one block, and gradient 0
// itself is sent at once, without waiting for the block in flight. The
// bandwidth estimate starts at BandwidthBps and follows each block's
// measured rate (moving average).
#ifndef DDNN_PROPHET_SCHEDULER_H
#define DDNN_PROPHET_SCHEDULER_H

#include "comm-scheduler.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Prophet: blocks sized by profiled gradient ready times and measured bandwidth.
 */
class ProphetScheduler : public CommScheduler
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    ProphetScheduler();

    /// \brief Abort unless BandwidthBps > 0.
    void Validate() const override;
    /// \brief Update the bandwidth estimate from a delivered chunk.
    void NotifyDelivered(const PsChunk& chunk, Time sent) override;
    /// \brief The bandwidth estimate in force.
    std::string GetState() const override;

  protected:
    Key MakeKey(const PsChunk& chunk, uint64_t seq) const override;
    void NotifyEnqueued(const PsChunk& item) override;
    bool Pick(uint64_t inflight, PsChunk& out) override;

  private:
    void FormBlock();

    double m_bandwidthBps;     //!< current estimate
    uint32_t m_lastTensor;     //!< most recent gradient enqueued
    Time m_lastReady;          //!< when it was enqueued
    bool m_any;                //!< something was enqueued
    uint32_t m_blockChunks;    //!< chunks of the current block not yet committed
    uint64_t m_blockBytes;     //!< bytes of the current block
    uint64_t m_blockDelivered; //!< ... received so far
    Time m_blockStart;
};

} // namespace ns3

#endif
