// One worker of a ring-allreduce training job: per-layer forward
// and backward compute as scheduled events, one layer at a time; after
// backward of a layer that closes a fused buffer, the job's syncer is told
// the buffer is ready; the syncer starts its allreduce on every worker.
//
// The ring (RingChannel) runs over ONE persistent TCP connection to the
// right neighbour (opened at application start) and the one accepted from
// the left neighbour. A buffer is split into N partitions and allreduced in
// 2(N-1) steps (a reduce-scatter, then an all-gather); the allreduce is
// finished here when the last partition has arrived.
//
// Forward of layer i in iteration k > 0 starts when layer i's gradients of
// iteration k-1 are synchronised here and forward of i-1 is done; with the
// job's Barrier, forward of layer 0 waits for all gradients.
#ifndef DDNN_RING_ALLREDUCE_WORKER_H
#define DDNN_RING_ALLREDUCE_WORKER_H

#include "ring-allreduce-job.h"
#include "ring-worker.h"

#include "ns3/ipv4-address.h"

#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief One worker of a ring-allreduce job: computes and runs the ring's steps with its neighbours.
 */
class RingAllreduceWorker : public RingWorker
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    RingAllreduceWorker();

    /// \brief Join `job` as rank `rank`: the left neighbour connects from `left`,
    /// this worker connects to `right` (on the job's port).
    void Setup(Ptr<RingAllreduceJob> job, uint32_t rank, Ipv4Address left, Ipv4Address right);

    /// \brief Called by the job's syncer: start the allreduce of `buffer` of
    /// `iteration`, its data in class `tos`.
    void StartAllreduce(uint64_t iteration, uint32_t buffer, uint8_t tos);
    /// \brief Called by the job: the allreduce in flight moves to class `tos`
    /// (its slack ran out) for all this worker has not transmitted yet.
    void RaiseAllreduce(uint8_t tos);

  protected:
    void DoDispose() override;

  private:
    /// Listen for the left neighbour, connect to the right one.
    void StartCommunication() override;
    /// Tell the job's syncer about the buffers that close after `layer`.
    void GradientsReady(uint64_t iteration, uint32_t layer) override;

    uint64_t PartitionBytes(uint32_t partition) const override;
    /// Last partition in: this worker holds the whole reduced buffer.
    void CollectiveFinished() override;

    Ptr<RingAllreduceJob> m_job; //!< the job (TrainingWorker's, typed)

    std::vector<uint32_t> m_partsSynced; //!< per layer: its buffers allreduced this iteration

    // the allreduce in flight
    uint64_t m_arIteration;
    uint32_t m_arBuffer;
};

} // namespace ns3

#endif
