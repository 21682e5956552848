// What a worker of a ring job has, whatever its collectives: its
// RingChannel (the persistent TCP connection to its right neighbour, opened
// at start, and the one accepted from its left neighbour) wired to its job
// (RingJob): every partition sent and received, every byte written and every
// error is reported there. RingAllreduceWorker and ShardedWorker derive from
// it; they say how many steps a collective has and in which class it starts,
// what a partition of the collective in flight weighs (PartitionBytes) and
// what happens when it has finished here (CollectiveFinished).
#ifndef DDNN_RING_WORKER_H
#define DDNN_RING_WORKER_H

#include "ring-channel.h"
#include "ring-job.h"
#include "training-worker.h"

#include "ns3/ipv4-address.h"

#include <cstdint>
#include <string>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Base of the workers of ring jobs: a RingChannel reporting to its RingJob.
 */
class RingWorker : public TrainingWorker
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (not yet in a job).
    RingWorker();

    /// \brief True while the connection to the right neighbour is established.
    bool IsConnected() const override;
    /// \brief True while the left neighbour's connection is accepted and not failed.
    bool HasLeftConnection() const;
    /// \brief Bytes received from the left neighbour (payload).
    uint64_t GetBytesReceived() const;

  protected:
    void DoDispose() override;
    /// Be worker `rank` of `job` (the derived Setup keeps its typed pointer
    /// too): the left neighbour connects from `left`, this worker connects to
    /// `right`, on the job's port.
    void SetupRing(Ptr<RingJob> job, uint32_t rank, Ipv4Address left, Ipv4Address right);
    /// Listen and connect (from StartCommunication); until the first
    /// collective the connections carry `firstTos`. `collective` names a
    /// collective in error messages.
    void OpenRing(const std::string& collective, uint8_t firstTos);
    /// Stop the ring with the compute (the connections stay up).
    void StopCommunication() override;
    /// Payload bytes of partition `partition` of the collective in flight.
    virtual uint64_t PartitionBytes(uint32_t partition) const = 0;
    /// The collective in flight has finished here (its last partition arrived).
    virtual void CollectiveFinished() = 0;

    Ptr<RingChannel> m_ring; //!< the two ring connections and the steps over them

  private:
    void PartitionSent(uint32_t step, uint32_t partition, uint64_t bytes);
    void BytesSent(uint64_t bytes);
    void PartitionReceived(uint32_t step);

    Ptr<RingJob> m_ringJob;
    Ipv4Address m_left;
    Ipv4Address m_right;
};

} // namespace ns3

#endif
