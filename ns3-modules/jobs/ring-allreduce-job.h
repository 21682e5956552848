// One data-parallel training job with ring allreduce. It replays
// what the harness planned (harness/training/ring.py): the fused buffers (or
// partitions), given by SetBuffers(), each in the class of its lowest layer
// (the job's per-layer classes), and the policy
// ordering ready buffers, a CommScheduler (the same classes parameter-server
// senders use). The job-wide syncer starts one allreduce at a time once the
// previous one finished on every worker: the buffer the scheduler picks among
// those ready on every worker. It also keeps the job's tables (partition
// transfers, allreduces; iterations and compute in TrainingJob), read once by
// the harness.
//
// The semantics are those of harness/training/ring.py's no-contention model (its docstring is the
// reference); the workers are RingAllreduceWorker applications.
#ifndef DDNN_RING_ALLREDUCE_JOB_H
#define DDNN_RING_ALLREDUCE_JOB_H

#include "comm-scheduler.h"
#include "ring-job.h"

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ns3
{

class RingAllreduceWorker;

/**
 * \ingroup ddnn
 * \brief A ring-allreduce training job: replays the planned buffers through a CommScheduler.
 */
class RingAllreduceJob : public RingJob
{
  public:
    /// \brief One unit the ring allreduces: a fused gradient buffer (layers
    /// first..last in backward order) or a partition of one layer.
    struct Buffer
    {
        std::vector<uint32_t> layers; //!< backward order (highest layer first)
        uint64_t bytes;    //!< payload bytes
        uint32_t priority; //!< lowest layer index it holds
        uint64_t offset;   //!< first byte within its layer (partitions; 0 when fused)
        std::string label; //!< "49-44" or "7"
    };

    /// \brief Attributes: RingJob's and TrainingJob's; trace AllreduceCompleted.
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    RingAllreduceJob();

    // ---- the plan (before the workers are added)
    /// \brief The buffers in closing order (buffer b closes after backward of its
    /// lowest layer, last[b]): layers first[b] down to last[b], bytes[b]
    /// payload bytes. After SetLayers(). A buffer travels in the class of its
    /// lowest layer, the most urgent it holds (GetLayerTos(last[b])).
    void SetBuffers(const std::vector<uint32_t>& first,
                    const std::vector<uint32_t>& last,
                    const std::vector<uint64_t>& bytes);
    /// \brief The policy ordering buffers ready on every worker: a CommScheduler
    /// TypeId name and its attributes as "Name=Value" strings (default
    /// ns3::FifoScheduler). The ring asks it with nothing in flight.
    void SetScheduler(const std::string& typeId, const std::vector<std::string>& attributes);

    // ---- buffers
    /// \brief Number of buffers.
    uint32_t GetNBuffers() const;
    /// \brief Buffer `buffer` (aborts if there is none).
    const Buffer& GetBuffer(uint32_t buffer) const;
    /// \brief Its payload bytes.
    uint64_t GetBufferBytes(uint32_t buffer) const;
    /// \brief Its lowest layer.
    uint32_t GetBufferPriority(uint32_t buffer) const;
    /// \brief Its IP ToS: that of its lowest layer.
    uint8_t GetBufferTos(uint32_t buffer) const;
    /// \brief Its layers as "49-44" or "7".
    std::string GetBufferLabel(uint32_t buffer) const;
    /// \brief Buffers that close right after backward of `layer` (empty: none; more
    /// than one when the layer is cut into partitions).
    const std::vector<uint32_t>& GetBuffersClosingAfter(uint32_t layer) const;
    /// \brief Number of buffers holding part of `layer` (1 with tensor fusion).
    uint32_t GetNBuffersOfLayer(uint32_t layer) const;
    /// \brief Size of partition `partition` of `buffer` (S//N, the first S%N one byte larger).
    uint64_t GetPartitionBytes(uint32_t buffer, uint32_t partition) const;
    /// \brief buffer,layers,bytes,priority,tos
    std::string BuffersCsv() const;

    // ---- results (read once, at the end of the run)
    /// \brief Allreduces finished on every worker.
    uint64_t GetNAllreduces() const;
    /// \brief Allreduces started (finished ones plus the one in flight, if any).
    uint64_t GetNAllreducesStarted() const;
    /// \brief The worker of rank `rank`.
    Ptr<RingAllreduceWorker> GetWorker(uint32_t rank) const;
    /// \brief job,worker,iteration,buffer,layers,tos,step,partition,bytes,start_ns,end_ns
    /// (one row per partition sent, in the class of its allreduce when it was
    /// handed to the socket; end_ns = -1 if not yet fully received)
    std::string TransfersCsv() const;
    /// \brief job,iteration,buffer,layers,bytes,tos,raised_ns,start_ns,end_ns: one row
    /// per allreduce started (tos: its class, the deadline class once raised;
    /// raised_ns: when, -1 never; end = finished on every worker; -1 if in flight)
    std::string AllreducesCsv() const;

    // ---- used by RingAllreduceHelper and RingAllreduceWorker
    /// \brief Register the worker of rank GetNWorkers(); returns that rank.
    uint32_t AddWorker(Ptr<RingAllreduceWorker> worker);
    /// \brief Worker `rank` closed `buffer` of `iteration` (its gradients are complete).
    void NotifyBufferReady(uint32_t rank, uint64_t iteration, uint32_t buffer);
    /// \brief Worker `rank` received its last partition of the current allreduce.
    void NotifyAllreduceFinished(uint32_t rank);
    /// \brief Check the job can run (buffers set, >= 2 workers, every partition >= 1 byte);
    /// aborts with a message naming the problem otherwise.
    void Validate() const;

    /// \brief Signature of the AllreduceCompleted trace source.
    typedef void (*AllreduceCallback)(uint64_t iteration, uint32_t buffer, Time start, Time end);

  protected:
    void DoDispose() override;
    void CheckDescribable(const char* what) const override;

  private:
    struct AllreduceRow
    {
        uint64_t iteration;
        uint32_t buffer;
        uint8_t tos;      //!< its class (the deadline class once raised)
        int64_t raisedNs; //!< raised to the deadline class at; -1 never
        int64_t startNs;
        int64_t endNs;
    };

    // the arbiter's order (RingJob): the scheduler's, one allreduce at a time
    bool PickCollective(Collective& next) override;
    void StartCollective(const Collective& c) override;
    void DoCollectiveFinished() override;
    /// An allreduce of `bytes` at LinkBps (2(N-1)/N of them leave each worker).
    Time GetAllreduceTime(uint64_t bytes) const;
    /// With a deadline class: raise `unit` now if its slack is gone, else
    /// schedule RaiseNow for when it runs out.
    void WatchDeadline(PsChunk& unit);
    /// The slack of (iteration, buffer) ran out: raise it if it waits or runs.
    void RaiseNow(uint64_t iteration, uint32_t buffer);

    // the plan
    std::vector<Buffer> m_buffers;
    std::vector<std::vector<uint32_t>> m_closing; //!< per layer: buffers closing after it
    std::vector<uint32_t> m_layerParts;           //!< per layer: buffers holding part of it

    // workers and syncer
    std::vector<Ptr<RingAllreduceWorker>> m_workers;
    std::map<Key, uint32_t> m_readyCount; //!< buffers ready on some, not all workers
    Ptr<CommScheduler> m_scheduler;       //!< ready on every worker, not started
    std::set<Key> m_waiting;           //!< ready on every worker, not started
    std::map<Key, int64_t> m_raised;   //!< waiting ones raised to the deadline class, at (ns)

    // results
    std::vector<AllreduceRow> m_allreduces;
    uint64_t m_nAllreduces;

    TracedCallback<uint64_t, uint32_t, Time, Time> m_allreduceTrace;
};

} // namespace ns3

#endif
