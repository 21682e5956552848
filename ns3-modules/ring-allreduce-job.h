// One data-parallel training job with ring allreduce (SPEC §2a): the
// job-wide description (layers, compute times, tensor fusion, queue policy,
// barrier, per-layer IP ToS, port) and the job-wide syncer that starts one
// allreduce at a time once the previous one finished on every worker and the
// chosen fused buffer is ready on every worker. It also keeps the job's
// tables (iterations, partition transfers) and counters, read once by the
// harness through IterationsCsv() / TransfersCsv().
//
// The semantics are those of harness/analytic.py (its module docstring is the
// reference); the workers are RingAllreduceWorker applications.
#ifndef DDNN_RING_ALLREDUCE_JOB_H
#define DDNN_RING_ALLREDUCE_JOB_H

#include "training-records.h"

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ns3
{

class RingAllreduceWorker;

class RingAllreduceJob : public Object
{
  public:
    /// Transmission-queue policy of ready buffers.
    enum QueuePolicy
    {
        FIFO,     //!< oldest closed buffer first
        PRIORITY, //!< lowest layer index first; ties: older iteration first
    };

    /// One fused gradient buffer (as harness.profiles.fuse).
    struct Buffer
    {
        std::vector<uint32_t> layers; //!< backward order (highest layer first)
        uint64_t bytes;
        uint32_t priority; //!< lowest layer index it holds
        uint8_t tos;       //!< ToS of its lowest layer
        std::string label; //!< "49-44" or "7"
    };

    static TypeId GetTypeId();
    RingAllreduceJob();

    // ---- description (before the simulation starts)
    /// All layers at once: bytes, forward and backward time (ns) per layer 0..L-1.
    void SetLayers(const std::vector<uint64_t>& bytes,
                   const std::vector<int64_t>& fpNs,
                   const std::vector<int64_t>& bpNs);
    /// Append layer L (same meaning as SetLayers, one layer at a time).
    void AddLayer(uint64_t bytes, int64_t fpNs, int64_t bpNs);
    /// IP ToS of one layer's gradients (default: the DefaultTos attribute).
    void SetLayerTos(uint32_t layer, uint8_t tos);

    uint32_t GetNLayers() const;
    uint32_t GetNWorkers() const;
    uint16_t GetPort() const;
    bool GetBarrier() const;
    /// ToS of what a worker sends back on the connection from its left
    /// neighbour (ACKs); -1 = the class of the buffer being allreduced.
    int32_t GetAckTos() const;
    uint64_t GetLayerBytes(uint32_t layer) const;
    Time GetForwardTime(uint32_t layer) const;
    Time GetBackwardTime(uint32_t layer) const;
    uint8_t GetLayerTos(uint32_t layer) const;
    /// Partition size (bytescheduler on a ring); 0 = tensor fusion.
    uint64_t GetPartitionBytes() const;
    /// Fusion buffer size in bytes (attribute, or largest layer + 1 if 0).
    uint64_t GetFusionBufferBytes() const;

    // ---- fused buffers (computed on first use; the layers are frozen then)
    uint32_t GetNBuffers() const;
    const Buffer& GetBuffer(uint32_t buffer) const;
    uint64_t GetBufferBytes(uint32_t buffer) const;
    uint32_t GetBufferPriority(uint32_t buffer) const;
    uint8_t GetBufferTos(uint32_t buffer) const;
    std::string GetBufferLabel(uint32_t buffer) const;
    /// Buffers that close right after backward of `layer` (empty: none; more
    /// than one when the layer is cut into partitions).
    const std::vector<uint32_t>& GetBuffersClosingAfter(uint32_t layer) const;
    /// Number of buffers holding part of `layer` (1 with tensor fusion).
    uint32_t GetNBuffersOfLayer(uint32_t layer) const;
    /// Size of partition `partition` of `buffer` (S//N, the first S%N one byte larger).
    uint64_t GetPartitionBytes(uint32_t buffer, uint32_t partition) const;
    /// buffer,layers,bytes,priority,tos
    std::string BuffersCsv() const;

    // ---- results (read once, at the end of the run)
    /// Payload bytes handed to the socket by worker `worker` (all partitions).
    uint64_t GetBytesSent(uint32_t worker) const;
    /// Allreduces finished on every worker.
    uint64_t GetNAllreduces() const;
    /// Allreduces started (finished ones plus the one in flight, if any).
    uint64_t GetNAllreducesStarted() const;
    /// Workers whose ring connections are both up (to the right neighbour
    /// established, from the left neighbour accepted). Read before Destroy().
    uint32_t GetNConnectedWorkers() const;
    /// The worker of rank `rank`.
    Ptr<RingAllreduceWorker> GetWorker(uint32_t rank) const;
    /// Complete iterations recorded (over all workers).
    uint64_t GetNIterations() const;
    /// Stop the simulation `stopDelay` after every worker completed `count`
    /// iterations that started at or after `since` (TrainingRecords::SetTarget).
    void SetMeasurementTarget(uint64_t count, Time since, Time stopDelay);
    /// When that happened, in ns; -1 while not.
    int64_t GetTargetReachedNs() const;
    /// Whether that stop has run (an event of ours, not of the model).
    bool HasStoppedAtTarget() const;
    /// Socket errors / unexpected closes / protocol violations.
    uint64_t GetNErrors() const;
    /// The errors, one per line: "<time ns> worker <r>: <what>".
    std::string GetErrors() const;
    /// job,worker,iteration,start_ns,end_ns (complete iterations only)
    std::string IterationsCsv() const;
    /// job,worker,iteration,buffer,layers,step,partition,bytes,start_ns,end_ns
    /// (one row per partition sent; end_ns = -1 if not yet fully received)
    std::string TransfersCsv() const;
    /// job,iteration,buffer,layers,bytes,start_ns,end_ns: one row per allreduce
    /// started (end = finished on every worker; -1 if in flight)
    std::string AllreducesCsv() const;
    /// job,worker,iteration,layer,phase,start_ns,end_ns: one row per layer's
    /// forward ("fp") or backward ("bp") compute that finished
    std::string ComputeCsv() const;

    // ---- used by RingAllreduceHelper and RingAllreduceWorker
    /// Register the worker of rank GetNWorkers(); returns that rank.
    uint32_t AddWorker(Ptr<RingAllreduceWorker> worker);
    /// Worker `rank` closed `buffer` of `iteration` (its gradients are complete).
    void NotifyBufferReady(uint32_t rank, uint64_t iteration, uint32_t buffer);
    /// Worker `rank` received its last partition of the current allreduce.
    void NotifyAllreduceFinished(uint32_t rank);
    /// Worker `rank` handed partition `partition` (step `step`) of the current
    /// allreduce to its socket: open a transfer row.
    void NotifyPartitionSent(uint32_t rank, uint32_t step, uint32_t partition, uint64_t bytes);
    /// Worker `rank` has received, from its left neighbour, the whole
    /// partition of step `step`: close the left neighbour's oldest open row.
    void NotifyPartitionReceived(uint32_t rank, uint32_t step);
    /// Worker `rank` wrote `bytes` payload bytes into its socket.
    void NotifyBytesSent(uint32_t rank, uint64_t bytes);
    /// Worker `rank` started forward of layer 0 of `iteration` at `start`.
    void NotifyIterationStart(uint32_t rank, uint64_t iteration);
    /// Worker `rank` finished forward (backward = false) or backward compute of
    /// `layer` in `iteration`, which started at `start`.
    void NotifyComputeDone(uint32_t rank, uint64_t iteration, uint32_t layer, bool backward,
                           Time start);
    /// Record an error (socket error, unexpected close, protocol violation).
    void NotifyError(uint32_t rank, const std::string& what);
    /// Compute the fused buffers and freeze the description (idempotent).
    void Freeze();
    /// Check the job can run (>= 2 workers, every partition >= 1 byte);
    /// aborts with a message naming the problem otherwise.
    void Validate() const;

    /// Signature of the IterationCompleted trace source.
    typedef void (*IterationCallback)(uint32_t worker, uint64_t iteration, Time duration);
    /// Signature of the AllreduceCompleted trace source.
    typedef void (*AllreduceCallback)(uint64_t iteration, uint32_t buffer, Time start, Time end);

  protected:
    void DoDispose() override;

  private:
    struct TransferRow
    {
        uint32_t worker;
        uint64_t iteration;
        uint32_t buffer;
        uint32_t step;
        uint32_t partition;
        uint64_t bytes;
        int64_t startNs;
        int64_t endNs;
    };


    struct AllreduceRow
    {
        uint64_t iteration;
        uint32_t buffer;
        int64_t startNs;
        int64_t endNs;
    };

    using Key = std::pair<uint64_t, uint32_t>; //!< (iteration, buffer)

    void ScheduleTryStart();
    void TryStart();
    void CheckNotFrozen(const char* what) const;
    void CheckRank(uint32_t rank) const;

    // description
    std::vector<uint64_t> m_bytes;
    std::vector<int64_t> m_fpNs;
    std::vector<int64_t> m_bpNs;
    std::vector<int32_t> m_tos; //!< per layer; -1 = DefaultTos
    uint32_t m_jobId;
    uint16_t m_port;
    uint64_t m_fusionBuffer; //!< attribute; 0 = largest layer + 1
    uint64_t m_partition;    //!< attribute; > 0: layers cut into partitions, no fusion
    QueuePolicy m_policy;
    bool m_barrier;
    uint8_t m_defaultTos;
    int32_t m_ackTos;

    // fused buffers
    bool m_frozen;
    std::vector<Buffer> m_buffers;
    std::vector<std::vector<uint32_t>> m_closing; //!< per layer: buffers closing after it
    std::vector<uint32_t> m_layerParts;           //!< per layer: buffers holding part of it

    // workers and syncer
    std::vector<Ptr<RingAllreduceWorker>> m_workers;
    std::map<Key, uint32_t> m_readyCount; //!< buffers ready on some, not all workers
    std::set<Key> m_queue;                //!< ready on every worker, not started
    bool m_active;                        //!< an allreduce is in flight
    Key m_current;
    uint32_t m_finishedWorkers;
    std::vector<bool> m_workerFinished;
    EventId m_tryStartEvent;

    // results
    std::vector<uint64_t> m_bytesSent;
    std::vector<TransferRow> m_transfers;
    std::vector<std::deque<size_t>> m_openTransfers; //!< per sender, rows in send order
    std::vector<AllreduceRow> m_allreduces;
    uint64_t m_nAllreduces;
    TrainingRecords m_records; //!< iterations, compute, errors

    TracedCallback<uint32_t, uint64_t, Time> m_iterationTrace;
    TracedCallback<uint64_t, uint32_t, Time, Time> m_allreduceTrace;
};

} // namespace ns3

#endif
