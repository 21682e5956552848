// What a job whose workers run ring collectives has, whatever the
// collectives: RingAllreduceJob (allreduces of fused buffers) and ShardedJob
// (all-gathers and reduce-scatters of layer groups) derive from it. It holds
// the workers' rings (RingWorker), the class of what a ring carries back
// (AckTos), the collective in flight that partition rows are attributed to,
// and the transfers table (RingTransfers) with its trace source; the
// derived job decides which collective runs next and what its rows say.
#ifndef DDNN_RING_JOB_H
#define DDNN_RING_JOB_H

#include "ring-transfers.h"
#include "training-job.h"

#include "ns3/nstime.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

class RingWorker;

/**
 * \ingroup ddnn
 * \brief Base of the jobs whose workers run ring collectives: their rings and transfers table.
 */
class RingJob : public TrainingJob
{
  public:
    /// \brief Attribute AckTos (and TrainingJob's); trace TransferCompleted.
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    RingJob();

    /// \brief Number of workers added.
    uint32_t GetNWorkers() const override;
    /// \brief ToS of what a worker sends back on the connection from its left
    /// neighbour (ACKs); -1 = the class of the collective in flight.
    int32_t GetAckTos() const;

    // ---- results (read once, at the end of the run)
    /// \brief Payload bytes handed to the socket by worker `worker`.
    uint64_t GetBytesSent(uint32_t worker) const;
    /// \brief Workers whose ring connections are both up (to the right neighbour
    /// established, from the left neighbour accepted). Read before Destroy().
    uint32_t GetNConnectedWorkers() const;

    // ---- used by the workers (RingWorker)
    /// \brief Worker `rank` handed partition `partition` (step `step`) of the
    /// collective in flight to its socket: open a transfer row.
    void NotifyPartitionSent(uint32_t rank, uint32_t step, uint32_t partition, uint64_t bytes);
    /// \brief Worker `rank` has received, from its left neighbour, the whole
    /// partition of step `step`: close the left neighbour's oldest open row.
    void NotifyPartitionReceived(uint32_t rank, uint32_t step);
    /// \brief Worker `rank` wrote `bytes` payload bytes into its socket.
    void NotifyBytesSent(uint32_t rank, uint64_t bytes);
    /// \brief Record an error of worker `rank` (socket error, unexpected close, protocol violation).
    void NotifyError(uint32_t rank, const std::string& what);
    /// \brief TrainingJob::NotifyError, for errors not of one worker.
    using TrainingJob::NotifyError;

    /**
     * \brief Signature of the TransferCompleted trace source: one partition
     * sent by a worker has been wholly received by its right neighbour (a row
     * of the job's TransfersCsv() gets its end_ns).
     * \param worker the sending worker's rank
     * \param iteration the iteration of the collective
     * \param unit what the collective moves: RingAllreduceJob's buffer,
     *        ShardedJob's slot (the `buffer` column of either table)
     * \param step the ring step of the collective
     * \param partition the partition sent
     * \param bytes its payload bytes
     * \param start when the sender handed it to its socket
     * \param end when the receiver had all of it
     */
    typedef void (*TransferCallback)(uint32_t worker,
                                     uint64_t iteration,
                                     uint32_t unit,
                                     uint32_t step,
                                     uint32_t partition,
                                     uint64_t bytes,
                                     Time start,
                                     Time end);

  protected:
    void DoDispose() override;
    /// Register the worker of rank GetNWorkers() (its records and transfer
    /// rows); returns that rank. The derived AddWorker keeps its typed pointer.
    uint32_t AddRingWorker(Ptr<RingWorker> worker);
    /// The collective now in flight, which partition rows belong to; called
    /// when it starts, and again when its class changes.
    void SetCollective(uint64_t iteration, uint32_t unit, uint8_t tos);
    /// Abort unless `rank` is a worker of the job.
    void CheckRank(uint32_t rank) const;

    RingTransfers m_transfers; //!< partitions sent and received, bytes written

  private:
    int32_t m_ackTos;
    std::vector<Ptr<RingWorker>> m_ringWorkers;
    uint64_t m_collIteration; //!< the collective in flight
    uint32_t m_collUnit;
    uint8_t m_collTos;

    /// A partition was received: see TransferCallback.
    TracedCallback<uint32_t, uint64_t, uint32_t, uint32_t, uint32_t, uint64_t, Time, Time>
        m_transferTrace;
};

} // namespace ns3

#endif
