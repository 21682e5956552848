// One sharded data-parallel training job (FSDP / ZeRO-3 style): every
// worker holds 1/N of the parameters. The layers are cut into groups of
// consecutive layers (SetGroups, planned by harness/training/sharded.py).
// An iteration is 2G compute phases: forward of groups 0..G-1, then backward
// of groups G-1..0. Before a phase its group's parameters are all-gathered
// (a ring all-gather: N-1 steps, each worker sending 1/N of the group's
// bytes per step); with Reshard (the default) the backward phases gather
// again, without it only the forward ones do. The all-gather of phase p is
// issued when phase max(p - PrefetchDepth, 0) is due to start (the phase
// before it finished; phase 0: the iteration started), so PrefetchDepth
// phases may gather ahead. After the backward of group g its gradients are
// reduce-scattered (a ring reduce-scatter: N-1 steps of 1/N of the bytes).
// An iteration ends when its last reduce-scatter has completed here (the
// optimizer step on the shard is local and takes no time); the next one
// starts then.
//
// The collectives of the job run one at a time over each worker's one ring
// connection (NCCL's single stream), in the order they became ready on
// every worker, an all-gather before a reduce-scatter ready at the same
// instant (it blocks compute), then by iteration and issue order. A
// collective travels in the class of its group's lowest layer (the job's
// per-layer classes). The semantics are those of harness/training/sharded.py
// (`simulate_sharded`, its docstring is the reference); the workers are
// ShardedWorker applications. The job keeps the tables (partition
// transfers, collectives; iterations and compute in TrainingJob), read once
// by the harness.
#ifndef DDNN_SHARDED_JOB_H
#define DDNN_SHARDED_JOB_H

#include "ring-job.h"

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace ns3
{

class ShardedWorker;

/**
 * \ingroup ddnn
 * \brief A sharded data-parallel (FSDP / ZeRO-3) training job: per-group all-gathers and
 * reduce-scatters over a ring, with prefetch.
 */
class ShardedJob : public RingJob
{
  public:
    /// \brief What a collective does.
    enum Kind
    {
        ALL_GATHER = 0,    //!< parameters of a group, before a compute phase
        REDUCE_SCATTER = 1 //!< gradients of a group, after its backward
    };

    /// \brief Attributes PrefetchDepth, Reshard (and RingJob's and TrainingJob's);
    /// trace CollectiveCompleted.
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    ShardedJob();

    // ---- the plan (before the workers are added)
    /// \brief The layer groups, in forward order: group g holds layers
    /// first[g]..last[g]; consecutive, from layer 0 to the last. After SetLayers().
    void SetGroups(const std::vector<uint32_t>& first, const std::vector<uint32_t>& last);

    /// \brief Phases a worker's all-gathers may run ahead of its compute.
    uint32_t GetPrefetchDepth() const;
    /// \brief Whether the backward phases gather the parameters again.
    bool GetReshard() const;

    // ---- groups, phases and collectives of one iteration
    /// \brief Number of groups G.
    uint32_t GetNGroups() const;
    /// \brief First (lowest) layer of group `group`.
    uint32_t GetGroupFirst(uint32_t group) const;
    /// \brief Last (highest) layer of group `group`.
    uint32_t GetGroupLast(uint32_t group) const;
    /// \brief Parameter (= gradient) bytes of group `group`.
    uint64_t GetGroupBytes(uint32_t group) const;
    /// \brief IP ToS of group `group`'s collectives: that of its lowest layer.
    uint8_t GetGroupTos(uint32_t group) const;
    /// \brief Its layers as "0-3" or "7".
    std::string GetGroupLabel(uint32_t group) const;
    /// \brief Compute phases of an iteration: 2G (forward 0..G-1, backward G-1..0).
    uint32_t GetNPhases() const;
    /// \brief The group phase `phase` computes.
    uint32_t GetPhaseGroup(uint32_t phase) const;
    /// \brief Whether phase `phase` is a backward phase.
    bool IsBackwardPhase(uint32_t phase) const;
    /// \brief Whether phase `phase` waits for an all-gather (forward: always;
    /// backward: with Reshard).
    bool PhaseGathers(uint32_t phase) const;
    /// \brief Collective slots of an iteration: 0..2G-1 the all-gather of
    /// phase p (backward ones unused without Reshard), 2G + j the
    /// reduce-scatter of group G-1-j.
    uint32_t GetNSlots() const;
    /// \brief The slot of the reduce-scatter of group `group`.
    uint32_t GetReduceScatterSlot(uint32_t group) const;
    /// \brief What the collective of slot `slot` does.
    Kind GetSlotKind(uint32_t slot) const;
    /// \brief The group of slot `slot`.
    uint32_t GetSlotGroup(uint32_t slot) const;
    /// \brief Size of partition `partition` of group `group` (S//N, the first S%N one byte larger).
    uint64_t GetPartitionBytes(uint32_t group, uint32_t partition) const;
    /// \brief group,layers,bytes,tos
    std::string GroupsCsv() const;

    // ---- results (read once, at the end of the run)
    /// \brief Collectives finished on every worker.
    uint64_t GetNCollectives() const;
    /// \brief Collectives started (finished ones plus the one in flight, if any).
    uint64_t GetNCollectivesStarted() const;
    /// \brief The worker of rank `rank`.
    Ptr<ShardedWorker> GetWorker(uint32_t rank) const;
    /// \brief job,worker,iteration,buffer,kind,group,layers,tos,step,partition,bytes,start_ns,end_ns
    /// (one row per partition sent; `buffer` is the collective's slot;
    /// end_ns = -1 if not yet fully received)
    std::string TransfersCsv() const;
    /// \brief job,iteration,buffer,kind,group,layers,bytes,ready_ns,start_ns,end_ns: one
    /// row per collective started (end = finished on every worker; -1 if in flight)
    std::string CollectivesCsv() const;

    // ---- used by ShardedHelper and ShardedWorker
    /// \brief Register the worker of rank GetNWorkers(); returns that rank.
    uint32_t AddWorker(Ptr<ShardedWorker> worker);
    /// \brief Worker `rank` issued the collective `slot` of `iteration`.
    void NotifyCollectiveReady(uint32_t rank, uint64_t iteration, uint32_t slot);
    /// \brief Worker `rank` received its last partition of the collective in flight.
    void NotifyCollectiveFinished(uint32_t rank);
    /// \brief Check the job can run (groups set, >= 2 workers, every partition
    /// >= 1 byte); aborts with a message naming the problem otherwise.
    void Validate() const;

    /// \brief Signature of the CollectiveCompleted trace source.
    typedef void (*CollectiveCallback)(uint64_t iteration, uint32_t slot, Time start, Time end);

  protected:
    void DoDispose() override;
    void CheckDescribable(const char* what) const override;

  private:
    struct Group
    {
        uint32_t first;
        uint32_t last;
        uint64_t bytes;
        std::string label;
    };

    struct CollectiveRow
    {
        uint64_t iteration;
        uint32_t slot;
        int64_t readyNs;
        int64_t startNs;
        int64_t endNs;
    };

    /// (issued on every worker, ns; kind; iteration; slot): the queue's order
    using QueueEntry = std::tuple<int64_t, uint32_t, uint64_t, uint32_t>;

    // the arbiter's order (RingJob): the queue's, one collective at a time
    bool PickCollective(Collective& next) override;
    void StartCollective(const Collective& c) override;
    void DoCollectiveFinished() override;
    void CheckSlot(uint32_t slot) const;
    std::string KindName(uint32_t slot) const;

    uint32_t m_prefetchDepth;
    bool m_reshard;

    std::vector<Group> m_groups;

    // workers and syncer
    std::vector<Ptr<ShardedWorker>> m_workers;
    std::map<Key, uint32_t> m_readyCount; //!< collectives issued on some, not all workers
    std::set<QueueEntry> m_queue;         //!< issued on every worker, not started

    // results
    std::vector<CollectiveRow> m_collectives;
    uint64_t m_nCollectives;

    TracedCallback<uint64_t, uint32_t, Time, Time> m_collectiveTrace;
};

} // namespace ns3

#endif
