// What a job whose workers run ring collectives has, whatever the
// collectives: RingAllreduceJob (allreduces of fused buffers) and ShardedJob
// (all-gathers and reduce-scatters of layer groups) derive from it. It holds
// the workers' rings (RingWorker), the class of what a ring carries back
// (AckTos), the transfers table (RingTransfers) with its trace source, and
// the arbiter: the ring runs one collective at a time (its workers' one pair
// of connections), the next chosen after every other event of the instant
// it frees. The derived job supplies the order (PickCollective) and what
// starting and finishing one records (StartCollective, DoCollectiveFinished).
#ifndef DDNN_RING_JOB_H
#define DDNN_RING_JOB_H

#include "ring-transfers.h"
#include "training-job.h"

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <string>
#include <utility>
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
    /// (iteration, unit): a collective (RingAllreduceJob's buffer, ShardedJob's slot).
    using Key = std::pair<uint64_t, uint32_t>;

    /// A collective the architecture's order picks to run next.
    struct Collective
    {
        uint64_t iteration;
        uint32_t unit;      //!< the buffer or slot
        uint8_t tos;        //!< the class it starts in
        int64_t readyNs;    //!< when it was ready on every worker (-1: not kept)
    };

    void DoDispose() override;
    /// Register the worker of rank GetNWorkers() (its records and transfer
    /// rows); returns that rank. The derived AddWorker keeps its typed pointer.
    uint32_t AddRingWorker(Ptr<RingWorker> worker);
    /// The collective now in flight, which partition rows belong to; called
    /// when it starts (by the arbiter), and again when its class changes.
    void SetCollective(uint64_t iteration, uint32_t unit, uint8_t tos);
    /// Abort unless `rank` is a worker of the job.
    void CheckRank(uint32_t rank) const;

    // ---- the arbiter: one collective at a time
    /// Ask the order for the next collective after every other event of this
    /// instant: one that becomes ready at the very instant the ring frees is
    /// already among the candidates (as in the analytic model).
    void ScheduleTryStart();
    /// Worker `rank` finished the collective in flight; once every worker
    /// has, the derived job records it (DoCollectiveFinished) and the next
    /// may start. `what` names the collective in the error of a worker that
    /// finishes twice or with none in flight.
    void NotifyWorkerFinished(uint32_t rank, const char* what);
    /// Whether a collective is in flight.
    bool IsCollectiveActive() const;
    /// The collective in flight (or the last one).
    Key GetCurrentCollective() const;
    /// The architecture's order: the collective to start now, if one is
    /// ready (asked only with none in flight; a picked one is started).
    virtual bool PickCollective(Collective& next) = 0;
    /// `c` has started (in flight, its class set): record it and start it on
    /// every worker.
    virtual void StartCollective(const Collective& c) = 0;
    /// The collective in flight finished on every worker: record it.
    virtual void DoCollectiveFinished() = 0;

    RingTransfers m_transfers; //!< partitions sent and received, bytes written

  private:
    /// Start the collective the order picks, unless one is in flight.
    void TryStart();

    int32_t m_ackTos;
    std::vector<Ptr<RingWorker>> m_ringWorkers;
    uint64_t m_collIteration; //!< the collective in flight
    uint32_t m_collUnit;
    uint8_t m_collTos;
    bool m_active;                      //!< a collective is in flight
    Key m_current;                      //!< the collective in flight (or the last)
    uint32_t m_finishedWorkers;         //!< workers done with the collective in flight
    std::vector<bool> m_workerFinished; //!< per worker: done with it
    EventId m_tryStartEvent;

    /// A partition was received: see TransferCallback.
    TracedCallback<uint32_t, uint64_t, uint32_t, uint32_t, uint32_t, uint64_t, Time, Time>
        m_transferTrace;
};

} // namespace ns3

#endif
