// One data-parallel training job with parameter servers (SPEC §2b): the
// job-wide description (layers, compute times, tensor-to-shard assignment,
// per-layer IP ToS, scheduling policy of pushes and of pulls, aggregation
// granularity, deadline-aware class), the wiring of workers to shards
// (Wire(): one PsChannel pair per worker and shard), and the job's tables
// (iterations, chunk transfers, compute, scheduler state), read once by the
// harness. Workers are PsWorker applications, shards PsServer applications.
#ifndef DDNN_PS_JOB_H
#define DDNN_PS_JOB_H

#include "comm-scheduler.h"
#include "training-records.h"

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

class PsJob : public Object
{
  public:
    static TypeId GetTypeId();
    PsJob();

    // ---- description (before Wire())
    /// Bytes, forward and backward time (ns) of layers 0..L-1; tensor i = layer i.
    void SetLayers(const std::vector<uint64_t>& bytes,
                   const std::vector<int64_t>& fpNs,
                   const std::vector<int64_t>& bpNs);
    /// IP ToS of one layer's pushes and pulls (default: the DefaultTos attribute).
    void SetLayerTos(uint32_t layer, uint8_t tos);
    /// Shard (PS index) of every tensor, one entry per layer.
    void SetTensorShards(const std::vector<uint32_t>& shards);
    /// Scheduling policy of pushes (push = true, at the workers) or pulls (at
    /// the shards): a CommScheduler TypeId name and its attributes as
    /// "Name=Value" strings.
    void SetScheduler(bool push, const std::string& typeId, const std::vector<std::string>& attributes);

    uint32_t GetNLayers() const;
    uint64_t GetLayerBytes(uint32_t layer) const;
    Time GetForwardTime(uint32_t layer) const;
    Time GetBackwardTime(uint32_t layer) const;
    uint8_t GetLayerTos(uint32_t layer) const;
    uint32_t GetShard(uint32_t tensor) const;
    uint32_t GetNShards() const;
    /// The tensors of `shard`, ascending.
    std::vector<uint32_t> GetShardTensors(uint32_t shard) const;
    uint16_t GetPort() const;
    bool GetBarrier() const;
    /// The shards pull an iteration's parameters only once every tensor of
    /// that iteration is aggregated on every shard.
    bool GetPullBarrier() const;
    /// Time between two commits of one sender (the framework's per-chunk cost).
    Time GetChunkOverhead() const;
    /// Aggregation unit at the shards in bytes (0: whole tensors).
    uint64_t GetAggregationBytes() const;
    /// Class a transfer is raised to when its slack runs out; -1: none.
    int32_t GetDeadlineTos() const;
    /// Rate used to estimate transfer times for the deadline-aware class.
    uint64_t GetLinkBps() const;
    /// Every ToS the job sends in (one TCP connection per worker, shard and class).
    const std::vector<uint8_t>& GetClasses() const;
    /// Index of `tos` in GetClasses() (connection i uses port Port + i).
    uint32_t GetClassIndex(uint8_t tos) const;

    // ---- workers, shards and their wiring
    uint32_t AddWorker(Ptr<PsWorker> worker, Ipv4Address address);
    uint32_t AddServer(Ptr<PsServer> server, Ipv4Address address);
    /// Create the channels (after every worker and shard is added to its node).
    void Wire();
    uint32_t GetNWorkers() const;
    Ipv4Address GetServerAddress(uint32_t shard) const;
    /// Rank of the worker at `address`, or -1.
    int32_t GetWorkerRank(Ipv4Address address) const;
    Ptr<PsWorker> GetWorker(uint32_t rank) const;
    Ptr<PsServer> GetServer(uint32_t shard) const;
    /// A new scheduler for a sender of pushes to / pulls from `shard`.
    Ptr<CommScheduler> CreateScheduler(bool push, uint32_t shard);

    // ---- records (used by the applications and channels)
    void NotifyIterationStart(uint32_t worker, uint64_t iteration);
    void NotifyComputeDone(uint32_t worker, uint64_t iteration, uint32_t layer, bool backward,
                           Time start);
    /// A chunk was committed to the channel of (worker, shard); returns its row.
    uint64_t NotifyChunkSent(uint32_t worker, uint32_t shard, bool push, const PsChunk& chunk,
                             bool local);
    /// The chunk of `row` has been received by the other end.
    void NotifyChunkDelivered(uint64_t row);
    void NotifyError(const std::string& who, const std::string& what);
    /// A shard has aggregated the whole of `tensor` in `iteration`; with the
    /// pull barrier, the last tensor of an iteration releases every shard's pulls.
    void NotifyTensorAggregated(uint64_t iteration, uint32_t tensor);

    // ---- results (read once, at the end of the run)
    uint64_t GetNIterations() const;
    /// Stop the simulation `stopDelay` after every worker completed `count`
    /// iterations that started at or after `since` (TrainingRecords::SetTarget).
    void SetMeasurementTarget(uint64_t count, Time since, Time stopDelay);
    /// When that happened, in ns; -1 while not.
    int64_t GetTargetReachedNs() const;
    /// Whether that stop has run (an event of ours, not of the model).
    bool HasStoppedAtTarget() const;
    uint64_t GetNErrors() const;
    /// The errors, one per line: "<time ns> ns <who>: <what>".
    std::string GetErrors() const;
    /// Workers whose connections to every remote shard are up.
    uint32_t GetNConnectedWorkers() const;
    /// job,worker,iteration,start_ns,end_ns (complete iterations only)
    std::string IterationsCsv() const;
    /// job,worker,iteration,layer,phase,start_ns,end_ns
    std::string ComputeCsv() const;
    /// job,worker,shard,direction,iteration,buffer,layers,offset,bytes,tos,local,start_ns,end_ns:
    /// one row per chunk committed (buffer = tensor; end_ns -1 if not yet received)
    std::string TransfersCsv() const;
    /// tensor,bytes,shard,tos
    std::string TensorsCsv() const;
    /// iteration,state: the push scheduler's adaptive state (of worker 0 to
    /// shard 0) whenever it changed, "" rows omitted
    std::string SchedulerCsv() const;

    typedef void (*IterationCallback)(uint32_t worker, uint64_t iteration, Time duration);

  protected:
    void DoDispose() override;

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

    void CheckNotWired(const char* what) const;

    // description
    std::vector<uint64_t> m_bytes;
    std::vector<int64_t> m_fpNs;
    std::vector<int64_t> m_bpNs;
    std::vector<int32_t> m_tos;
    std::vector<uint32_t> m_shard;
    uint32_t m_nShards;
    ObjectFactory m_pushFactory;
    ObjectFactory m_pullFactory;
    uint32_t m_jobId;
    uint16_t m_port;
    bool m_barrier;
    bool m_pullBarrier;
    Time m_chunkOverhead;
    uint8_t m_defaultTos;
    int32_t m_deadlineTos;
    uint64_t m_linkBps;
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
    std::vector<std::pair<uint64_t, std::string>> m_schedulerStates;
    std::map<uint64_t, uint32_t> m_aggregatedTensors; //!< pull barrier: iteration -> tensors done
    TrainingRecords m_records; //!< iterations, compute, errors

    TracedCallback<uint32_t, uint64_t, Time> m_iterationTrace;
};

} // namespace ns3

#endif
