// One worker of a sharded data-parallel job (ShardedJob): its compute, in
// phases of layer groups, each phase waiting for its group's all-gather, and
// its side of the ring collectives.
//
// Compute: iteration k is forward of groups 0..G-1, then backward G-1..0
// (layer by layer within a group: forward first..last, backward last..first),
// one layer at a time. A phase may start once the phase before it is done
// and, if it gathers (ShardedJob::PhaseGathers), its all-gather has finished
// here. When phase q is due (the phase before it finished; phase 0: the
// iteration started) the all-gathers of phases up to q + PrefetchDepth are
// issued to the job's syncer; when backward of group g is done its
// reduce-scatter is issued. The iteration ends, and the next one starts,
// when every reduce-scatter of it has finished here. Slowdowns and
// per-iteration compute factors stretch a layer's compute as for every
// training worker (TrainingWorker's LayerCompute does the arithmetic; its
// data-parallel timeline, whose backward never waits, is not run here).
//
// Ring: a RingChannel, as a ring-allreduce worker's (ONE persistent TCP
// connection to the right neighbour, opened at start, and the one accepted
// from the left neighbour). A collective of a group of S bytes runs N-1
// steps over it, in partitions of S//N bytes (the first S%N one byte
// larger); it is finished here when the last partition arrived.
#ifndef DDNN_SHARDED_WORKER_H
#define DDNN_SHARDED_WORKER_H

#include "ring-worker.h"
#include "sharded-job.h"

#include "ns3/event-id.h"
#include "ns3/ipv4-address.h"

#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief One worker of a sharded data-parallel job: phase-by-phase compute
 * gated by all-gathers, and the ring steps of the job's collectives.
 */
class ShardedWorker : public RingWorker
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    ShardedWorker();

    /// \brief Join `job` as rank `rank`: the left neighbour connects from `left`,
    /// this worker connects to `right` (on the job's port).
    void Setup(Ptr<ShardedJob> job, uint32_t rank, Ipv4Address left, Ipv4Address right);

    /// \brief Iteration being computed (0-based). (TrainingWorker::GetIteration
    /// reads the LayerCompute timeline, which this worker does not run.)
    uint64_t GetCurrentIteration() const;
    /// \brief Compute phase being computed or waited for (0..2G-1).
    uint32_t GetPhase() const;

    /// \brief Called by the job's syncer: start collective `slot` of `iteration`.
    void StartCollective(uint64_t iteration, uint32_t slot);

  protected:
    void DoDispose() override;

  private:
    // the application: its own compute timeline instead of LayerCompute's
    void StartApplication() override;
    void StopApplication() override;
    /// Listen for the left neighbour, connect to the right one.
    void StartCommunication() override;
    /// Not called: this worker runs its own timeline (LayerCompute's callback).
    void GradientsReady(uint64_t iteration, uint32_t layer) override;

    // compute
    void BeginIteration();
    void PhaseDue();
    void TryStartPhase();
    void ComputeLayer();
    void LayerDone();
    void PhaseDone();
    void CollectiveDone(uint32_t slot);
    void CheckIterationEnd();
    uint32_t CurrentLayer() const;
    Time Duration(Time work) const;

    // the ring (RingWorker)
    uint64_t PartitionBytes(uint32_t partition) const override;
    /// Last partition in: the group is gathered (or its gradient shard reduced) here.
    void CollectiveFinished() override;

    Ptr<ShardedJob> m_job; //!< the job (TrainingWorker's, typed)

    // compute state
    uint64_t m_iteration;
    uint32_t m_phase;          //!< phase computing or due
    uint32_t m_layerInPhase;   //!< layers of the phase done
    bool m_busy;               //!< a layer's compute event is pending
    bool m_phasesDone;         //!< every phase of m_iteration is computed
    uint32_t m_nextIssue;      //!< next phase whose all-gather is not issued yet
    uint32_t m_reduceScattered; //!< reduce-scatters of m_iteration finished here
    std::vector<bool> m_gathered; //!< per phase: its all-gather finished here
    EventId m_event;
    Time m_computeStart;

    // the collective in flight
    uint32_t m_collSlot;
    uint32_t m_collGroup;
};

} // namespace ns3

#endif
