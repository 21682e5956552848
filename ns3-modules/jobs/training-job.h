// What every training job has, whatever its architecture: the
// per-layer table (bytes, forward and backward compute, IP ToS of each
// layer's gradients), the job-wide attributes (JobId, Port, Barrier),
// the records every job keeps (iterations, per-layer compute,
// errors) and the stop-at-target of run.min_iterations. RingAllreduceJob and
// PsJob derive from it; the harness plans the job in Python
// (harness/training/) and the C++ job replays that plan.
#ifndef DDNN_TRAINING_JOB_H
#define DDNN_TRAINING_JOB_H

#include "training-records.h"

#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/socket.h"
#include "ns3/object-factory.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Base of every training job: the per-layer table, the job-wide attributes and the records.
 */
class TrainingJob : public Object
{
  public:
    /// \brief Attributes JobId, Port, Barrier; trace IterationCompleted.
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    TrainingJob();

    // ---- the per-layer table (before the job is installed)
    /// \brief Bytes, forward and backward time (ns) of layers 0..L-1; every layer
    /// in class 0 (best effort) until SetLayerClasses.
    void SetLayers(const std::vector<uint64_t>& bytes,
                   const std::vector<int64_t>& fpNs,
                   const std::vector<int64_t>& bpNs);
    /// \brief IP ToS of every layer's gradients, one entry per layer: the job's
    /// only source of classes (a ring's buffers travel in the class of their
    /// lowest layer).
    void SetLayerClasses(const std::vector<uint32_t>& tos);

    /// \brief Number of layers L.
    uint32_t GetNLayers() const;
    /// \brief Gradient (= parameter) bytes of `layer`.
    uint64_t GetLayerBytes(uint32_t layer) const;
    /// \brief Forward compute time of `layer`.
    Time GetForwardTime(uint32_t layer) const;
    /// \brief Backward compute time of `layer`.
    Time GetBackwardTime(uint32_t layer) const;
    /// \brief IP ToS of `layer`'s gradients (SetLayerClasses; 0 unless set).
    uint8_t GetLayerTos(uint32_t layer) const;
    /// \brief The job's TCP port (each architecture says how it uses it).
    uint16_t GetPort() const;
    /// \brief Forward of layer 0 waits until every layer of the previous iteration is synchronised.
    bool GetBarrier() const;
    /// \brief Class a transfer is raised to when its slack runs out; -1: none.
    int32_t GetDeadlineTos() const;
    /// \brief Rate used to estimate transfer times for the deadline-aware class.
    uint64_t GetLinkBps() const;
    /// \brief A socket of the job's transport (attribute Transport: TCP or
    /// an RDMA queue pair) on `node`, for its channels.
    Ptr<Socket> CreateSocket(Ptr<Node> node) const;
    /// \brief The job's transport: the socket factory's TypeId (attribute Transport).
    TypeId GetTransport() const;
    /// \brief From the end of backward of `layer` until forward needs that layer
    /// again, with no waiting: backward of the layers below it, then forward of
    /// them (the deadline-aware class's slack before transfer time).
    Time GetTimeUntilNeeded(uint32_t layer) const;
    /// \brief Number of workers installed.
    virtual uint32_t GetNWorkers() const = 0;
    /// \brief The tensors (layers) that the sender of `shard` carries, ascending:
    /// what a scheduler attached to that shard orders (CommScheduler::Attach).
    /// Every layer, unless the architecture splits them (PsJob's shards).
    virtual std::vector<uint32_t> GetShardTensors(uint32_t shard) const;

    // ---- records (used by the workers)
    /// \brief Worker `worker` starts forward of layer 0 of `iteration` now.
    void NotifyIterationStart(uint32_t worker, uint64_t iteration);
    /// \brief Worker `worker` finished forward (backward = false) or backward of
    /// `layer` in `iteration`; the compute started at `start`.
    void NotifyComputeDone(uint32_t worker, uint64_t iteration, uint32_t layer, bool backward,
                           Time start);
    /// \brief Record an error of `who` ("worker 3", "shard 0 (worker 2)").
    void NotifyError(const std::string& who, const std::string& what);

    // ---- results (read once, at the end of the run)
    /// \brief Complete iterations recorded (over all workers).
    uint64_t GetNIterations() const;
    /// \brief Stop the simulation `stopDelay` after every worker completed `count`
    /// iterations that started at or after `since` (TrainingRecords::SetTarget;
    /// `reached` is called then).
    void SetMeasurementTarget(uint64_t count,
                              Time since,
                              Time stopDelay,
                              Callback<void> reached = {});
    /// \brief When that happened, in ns; -1 while not.
    int64_t GetTargetReachedNs() const;
    /// \brief Whether that stop has run (an event of ours, not of the model).
    bool HasStoppedAtTarget() const;
    /// \brief Socket errors / unexpected closes / protocol violations.
    uint64_t GetNErrors() const;
    /// \brief The errors, one per line: "<time ns> ns <who>: <what>".
    std::string GetErrors() const;
    /// \brief job,worker,iteration,start_ns,end_ns (complete iterations only)
    std::string IterationsCsv() const;
    /// \brief job,worker,iteration,layer,phase,start_ns,end_ns: one row per layer's
    /// forward ("fp") or backward ("bp") compute that finished
    std::string ComputeCsv() const;

    /// \brief Signature of the IterationCompleted trace source.
    typedef void (*IterationCallback)(uint32_t worker, uint64_t iteration, Time duration);

  protected:
    /// Abort naming `what` if the job can no longer be described.
    virtual void CheckDescribable(const char* what) const;
    /// Called by NotifyIterationStart after the records; `completed` is the
    /// iteration it completed (nullptr for the first).
    virtual void DoIterationStart(uint32_t worker,
                                  uint64_t iteration,
                                  const TrainingRecords::IterationRow* completed);
    /// A factory of CommScheduler `typeId` with "Name=Value" `attributes`,
    /// checked now (an object is made and validated), not mid-run.
    static ObjectFactory SchedulerFactory(const std::string& typeId,
                                          const std::vector<std::string>& attributes,
                                          const std::string& who);

    std::vector<uint64_t> m_bytes;
    std::vector<int64_t> m_fpNs;
    std::vector<int64_t> m_bpNs;
    std::vector<uint8_t> m_tos; //!< IP ToS of each layer's gradients
    uint32_t m_jobId;
    uint16_t m_port;
    bool m_barrier;
    int32_t m_deadlineTos; //!< -1: no deadline-aware class
    uint64_t m_linkBps;
    TypeId m_transport; //!< the socket factory of its channels
    TrainingRecords m_records; //!< iterations, compute, errors

  private:
    TracedCallback<uint32_t, uint64_t, Time> m_iterationTrace;
};

} // namespace ns3

#endif
