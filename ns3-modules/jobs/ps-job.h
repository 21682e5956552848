// One data-parallel training job with parameter servers: the
// job-wide description (the per-layer table of TrainingJob, the
// tensor-to-shard assignment, the scheduling policy of pushes and of pulls, aggregation
// granularity, deadline-aware class), the wiring of workers to shards
// (Wire(): one PsChannel pair per worker and shard), and the job's tables
// (iterations, chunk transfers, compute, scheduler state), read once by the
// harness. Workers are PsWorker applications, shards PsServer applications.
#ifndef DDNN_PS_JOB_H
#define DDNN_PS_JOB_H

#include "comm-scheduler.h"
#include "training-job.h"

#include "ns3/ipv4-address.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ns3
{

class PsWorker;
class PsServer;

/**
 * \ingroup ddnn
 * \brief A parameter-server training job: workers push gradients to shards and pull parameters back.
 */
class PsJob : public TrainingJob
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    PsJob();

    // ---- description (before Wire())
    /// \brief Shard (PS index) of every tensor, one entry per layer.
    void SetTensorShards(const std::vector<uint32_t>& shards);
    /// \brief Scheduling policy of pushes (push = true, at the workers) or pulls (at
    /// the shards): a CommScheduler TypeId name and its attributes as
    /// "Name=Value" strings.
    void SetScheduler(bool push, const std::string& typeId, const std::vector<std::string>& attributes);

    /// \brief Shard that holds `tensor`.
    uint32_t GetShard(uint32_t tensor) const;
    /// \brief Number of shards.
    uint32_t GetNShards() const;
    /// \brief The tensors of `shard`, ascending.
    std::vector<uint32_t> GetShardTensors(uint32_t shard) const override;
    /// \brief The shards pull an iteration's parameters only once every tensor of
    /// that iteration is aggregated on every shard.
    bool GetPullBarrier() const;
    /// \brief Time between two commits of one sender (the framework's per-chunk cost).
    Time GetChunkOverhead() const;
    /// \brief Aggregation unit at the shards in bytes (0: whole tensors).
    uint64_t GetAggregationBytes() const;
    /// \brief Every ToS the job sends in (one TCP connection per worker, shard and class).
    const std::vector<uint8_t>& GetClasses() const;
    /// \brief Index of `tos` in GetClasses() (connection i uses port Port + i).
    uint32_t GetClassIndex(uint8_t tos) const;

    // ---- workers, shards and their wiring
    /// \brief Add a worker at `address`; returns its rank.
    uint32_t AddWorker(Ptr<PsWorker> worker, Ipv4Address address);
    /// \brief Add a shard at `address`; returns its index.
    uint32_t AddServer(Ptr<PsServer> server, Ipv4Address address);
    /// \brief Create the channels (after every worker and shard is added to its node).
    void Wire();
    /// \brief Number of workers added.
    uint32_t GetNWorkers() const override;
    /// \brief Address of shard `shard`.
    Ipv4Address GetServerAddress(uint32_t shard) const;
    /// \brief Rank of the worker at `address`, or -1.
    int32_t GetWorkerRank(Ipv4Address address) const;
    /// \brief Worker of rank `rank`.
    Ptr<PsWorker> GetWorker(uint32_t rank) const;
    /// \brief Shard `shard`.
    Ptr<PsServer> GetServer(uint32_t shard) const;
    /// \brief A new scheduler for a sender of pushes to / pulls from `shard`.
    Ptr<CommScheduler> CreateScheduler(bool push, uint32_t shard);

    // ---- records (used by the applications and channels)
    /// \brief A chunk was committed to the channel of (worker, shard); returns its row.
    uint64_t NotifyChunkSent(uint32_t worker, uint32_t shard, bool push, const PsChunk& chunk,
                             bool local);
    /// \brief The chunk of `row` has been received by the other end.
    void NotifyChunkDelivered(uint64_t row);
    /// \brief A shard has aggregated the whole of `tensor` in `iteration`; with the
    /// pull barrier, the last tensor of an iteration releases every shard's pulls.
    void NotifyTensorAggregated(uint64_t iteration, uint32_t tensor);

    // ---- results (read once, at the end of the run)
    /// \brief Workers whose connections to every remote shard are up.
    uint32_t GetNConnectedWorkers() const;
    /// \brief job,worker,shard,direction,iteration,buffer,layers,offset,bytes,tos,local,start_ns,end_ns:
    /// one row per chunk committed (buffer = tensor; end_ns -1 if not yet received)
    std::string TransfersCsv() const;
    /// \brief tensor,bytes,shard,tos
    std::string TensorsCsv() const;
    /// \brief iteration,state: the push scheduler's adaptive state (of worker 0 to
    /// shard 0) whenever it changed, "" rows omitted
    std::string SchedulerCsv() const;

    /**
     * \brief Signature of the TransferCompleted trace source: a chunk committed
     * to a channel has been received by the other end (a row of
     * TransfersCsv() gets its end_ns).
     * \param worker the worker's rank
     * \param shard the shard
     * \param push true: a push (worker to shard), false: a pull (shard to worker)
     * \param chunk the chunk (iteration, tensor, offset, bytes, tos)
     * \param local whether worker and shard share a node (no network transfer)
     * \param start when it was committed
     * \param end when the other end had all of it
     */
    typedef void (*TransferCallback)(uint32_t worker,
                                     uint32_t shard,
                                     bool push,
                                     const PsChunk& chunk,
                                     bool local,
                                     Time start,
                                     Time end);

  protected:
    void DoDispose() override;
    void CheckDescribable(const char* what) const override;
    /// Worker 0's completed iteration goes to the adaptive policies; the
    /// policy's state is recorded when it changed.
    void DoIterationStart(uint32_t worker,
                          uint64_t iteration,
                          const TrainingRecords::IterationRow* completed) override;

  private:
    struct TransferRow
    {
        uint32_t worker;
        uint32_t shard;
        bool push;
        bool local;
        PsChunk chunk;
        int64_t startNs;
        int64_t endNs;
    };

    // description
    std::vector<uint32_t> m_shard;
    uint32_t m_nShards;
    ObjectFactory m_pushFactory;
    ObjectFactory m_pullFactory;
    bool m_pullBarrier;
    Time m_chunkOverhead;
    uint64_t m_aggregationBytes;
    std::vector<uint8_t> m_classes;

    // wiring
    bool m_wired;
    std::vector<Ptr<PsWorker>> m_workers;
    std::vector<Ipv4Address> m_workerAddresses;
    std::vector<Ptr<PsServer>> m_servers;
    std::vector<Ipv4Address> m_serverAddresses;
    std::vector<Ptr<CommScheduler>> m_schedulers;

    // results
    std::vector<TransferRow> m_transfers;
    /// A chunk was delivered: see TransferCallback.
    TracedCallback<uint32_t, uint32_t, bool, const PsChunk&, bool, Time, Time> m_transferTrace;
    std::vector<std::pair<uint64_t, std::string>> m_schedulerStates;
    std::map<uint64_t, uint32_t> m_aggregatedTensors; //!< pull barrier: iteration -> tensors done
};

} // namespace ns3

#endif
