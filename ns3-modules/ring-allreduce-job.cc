#include "ring-allreduce-job.h"

#include "ring-allreduce-worker.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/integer.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RingAllreduceJob");

NS_OBJECT_ENSURE_REGISTERED(RingAllreduceJob);

TypeId
RingAllreduceJob::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RingAllreduceJob")
            .SetParent<Object>()
            .SetGroupName("Ddnn")
            .AddConstructor<RingAllreduceJob>()
            .AddAttribute("JobId",
                          "Job number, the 'job' column of the tables.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RingAllreduceJob::m_jobId),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Port",
                          "TCP port every worker listens on for its left neighbour.",
                          UintegerValue(5000),
                          MakeUintegerAccessor(&RingAllreduceJob::m_port),
                          MakeUintegerChecker<uint16_t>(1))
            .AddAttribute("FusionBufferBytes",
                          "Tensor-fusion buffer size; 0 = largest layer + 1 byte.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RingAllreduceJob::m_fusionBuffer),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("PartitionBytes",
                          "ByteScheduler on a ring: 0 = tensor fusion; > 0 = no fusion, each "
                          "layer's gradients are cut into partitions of this size, each "
                          "allreduced on its own (use with QueuePolicy priority).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RingAllreduceJob::m_partition),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("QueuePolicy",
                          "Order in which ready buffers are allreduced: fifo (oldest closed "
                          "first) or priority (lowest layer first, older iteration on ties).",
                          EnumValue(RingAllreduceJob::FIFO),
                          MakeEnumAccessor<QueuePolicy>(&RingAllreduceJob::m_policy),
                          MakeEnumChecker(RingAllreduceJob::FIFO,
                                          "fifo",
                                          RingAllreduceJob::PRIORITY,
                                          "priority"))
            .AddAttribute("Barrier",
                          "Forward of layer 0 waits until ALL gradients of the previous "
                          "iteration are synchronised.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RingAllreduceJob::m_barrier),
                          MakeBooleanChecker())
            .AddAttribute("DefaultTos",
                          "IP ToS of every layer not given one with SetLayerTos().",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RingAllreduceJob::m_defaultTos),
                          MakeUintegerChecker<uint8_t>())
            .AddAttribute("AckTos",
                          "IP ToS of the receiving side of each ring connection (its ACKs); "
                          "-1 = the class of the buffer being allreduced.",
                          IntegerValue(-1),
                          MakeIntegerAccessor(&RingAllreduceJob::m_ackTos),
                          MakeIntegerChecker<int32_t>(-1, 255))
            .AddTraceSource("IterationCompleted",
                            "A worker completed an iteration: (worker, iteration, duration).",
                            MakeTraceSourceAccessor(&RingAllreduceJob::m_iterationTrace),
                            "ns3::RingAllreduceJob::IterationCallback")
            .AddTraceSource("AllreduceCompleted",
                            "An allreduce finished on every worker: (iteration, buffer, "
                            "start, end).",
                            MakeTraceSourceAccessor(&RingAllreduceJob::m_allreduceTrace),
                            "ns3::RingAllreduceJob::AllreduceCallback");
    return tid;
}

RingAllreduceJob::RingAllreduceJob()
    : m_jobId(0),
      m_port(5000),
      m_fusionBuffer(0),
      m_partition(0),
      m_policy(FIFO),
      m_barrier(false),
      m_defaultTos(0),
      m_ackTos(-1),
      m_frozen(false),
      m_active(false),
      m_current(0, 0),
      m_finishedWorkers(0),
      m_nAllreduces(0)
{
}

void
RingAllreduceJob::DoDispose()
{
    m_tryStartEvent.Cancel();
    m_workers.clear();
    Object::DoDispose();
}

// ------------------------------------------------------------------ description

void
RingAllreduceJob::CheckNotFrozen(const char* what) const
{
    NS_ABORT_MSG_IF(m_frozen,
                    "RingAllreduceJob::" << what
                                         << ": the job is frozen (fused buffers computed or "
                                            "workers started); describe it before");
}

void
RingAllreduceJob::SetLayers(const std::vector<uint64_t>& bytes,
                            const std::vector<int64_t>& fpNs,
                            const std::vector<int64_t>& bpNs)
{
    CheckNotFrozen("SetLayers");
    NS_ABORT_MSG_IF(bytes.size() != fpNs.size() || bytes.size() != bpNs.size(),
                    "SetLayers: bytes, fpNs and bpNs must have the same length (got "
                        << bytes.size() << ", " << fpNs.size() << ", " << bpNs.size() << ")");
    m_bytes.clear();
    m_fpNs.clear();
    m_bpNs.clear();
    m_tos.clear();
    for (size_t i = 0; i < bytes.size(); ++i)
    {
        AddLayer(bytes[i], fpNs[i], bpNs[i]);
    }
}

void
RingAllreduceJob::AddLayer(uint64_t bytes, int64_t fpNs, int64_t bpNs)
{
    CheckNotFrozen("AddLayer");
    NS_ABORT_MSG_IF(bytes == 0, "layer " << m_bytes.size() << ": bytes must be > 0");
    NS_ABORT_MSG_IF(fpNs < 0 || bpNs < 0,
                    "layer " << m_bytes.size() << ": compute times must be >= 0");
    m_bytes.push_back(bytes);
    m_fpNs.push_back(fpNs);
    m_bpNs.push_back(bpNs);
    m_tos.push_back(-1);
}

void
RingAllreduceJob::SetLayerTos(uint32_t layer, uint8_t tos)
{
    CheckNotFrozen("SetLayerTos");
    NS_ABORT_MSG_IF(layer >= m_bytes.size(),
                    "SetLayerTos: no layer " << layer << " (the job has " << m_bytes.size()
                                             << "; set the layers first)");
    m_tos[layer] = tos;
}

uint32_t
RingAllreduceJob::GetNLayers() const
{
    return m_bytes.size();
}

uint32_t
RingAllreduceJob::GetNWorkers() const
{
    return m_workers.size();
}

uint16_t
RingAllreduceJob::GetPort() const
{
    return m_port;
}

bool
RingAllreduceJob::GetBarrier() const
{
    return m_barrier;
}

int32_t
RingAllreduceJob::GetAckTos() const
{
    return m_ackTos;
}

uint64_t
RingAllreduceJob::GetLayerBytes(uint32_t layer) const
{
    return m_bytes.at(layer);
}

Time
RingAllreduceJob::GetForwardTime(uint32_t layer) const
{
    return NanoSeconds(m_fpNs.at(layer));
}

Time
RingAllreduceJob::GetBackwardTime(uint32_t layer) const
{
    return NanoSeconds(m_bpNs.at(layer));
}

uint8_t
RingAllreduceJob::GetLayerTos(uint32_t layer) const
{
    int32_t tos = m_tos.at(layer);
    return tos < 0 ? m_defaultTos : uint8_t(tos);
}

uint64_t
RingAllreduceJob::GetPartitionBytes() const
{
    return m_partition;
}

uint64_t
RingAllreduceJob::GetFusionBufferBytes() const
{
    if (m_fusionBuffer > 0)
    {
        return m_fusionBuffer;
    }
    return m_bytes.empty() ? 0 : *std::max_element(m_bytes.begin(), m_bytes.end()) + 1;
}

// ------------------------------------------------------------------ fusion

void
RingAllreduceJob::Freeze()
{
    if (m_frozen)
    {
        return;
    }
    NS_ABORT_MSG_IF(m_bytes.empty(), "RingAllreduceJob: no layers (call SetLayers)");
    const uint32_t L = m_bytes.size();
    m_buffers.clear();
    m_closing.assign(L, {});
    m_layerParts.assign(L, 1);
    if (m_partition > 0)
    {
        // ByteScheduler: no fusion; layer i (backward order) is cut into
        // partitions in offset order, all ready after backward of i
        for (int64_t i = L - 1; i >= 0; --i)
        {
            m_layerParts[i] = (m_bytes[i] + m_partition - 1) / m_partition;
            for (uint64_t offset = 0; offset < m_bytes[i]; offset += m_partition)
            {
                m_closing[i].push_back(m_buffers.size());
                m_buffers.push_back(Buffer{{uint32_t(i)},
                                           std::min(m_partition, m_bytes[i] - offset),
                                           uint32_t(i),
                                           GetLayerTos(i),
                                           std::to_string(i)});
            }
        }
        m_frozen = true;
        return;
    }
    const uint64_t fb = GetFusionBufferBytes();
    for (uint32_t i = 0; i < L; ++i)
    {
        NS_ABORT_MSG_IF(m_bytes[i] > fb,
                        "RingAllreduceJob: layer " << i << " (" << m_bytes[i]
                                                   << " B) exceeds the fusion buffer (" << fb
                                                   << " B); a layer is never split");
    }
    // As harness.profiles.fuse: backward order; close after layer i when
    // i == 0 or when the next layer (i-1) would overflow the open buffer.
    Buffer open{{}, 0, 0, 0, ""};
    for (int64_t i = L - 1; i >= 0; --i)
    {
        open.layers.push_back(i);
        open.bytes += m_bytes[i];
        if (i == 0 || open.bytes + m_bytes[i - 1] > fb)
        {
            open.priority = open.layers.back();
            open.tos = GetLayerTos(open.priority);
            std::ostringstream label;
            label << open.layers.front();
            if (open.layers.size() > 1)
            {
                label << '-' << open.layers.back();
            }
            open.label = label.str();
            m_closing[i].push_back(m_buffers.size());
            m_buffers.push_back(open);
            open = Buffer{{}, 0, 0, 0, ""};
        }
    }
    m_frozen = true;
}

uint32_t
RingAllreduceJob::GetNBuffers() const
{
    const_cast<RingAllreduceJob*>(this)->Freeze();
    return m_buffers.size();
}

const RingAllreduceJob::Buffer&
RingAllreduceJob::GetBuffer(uint32_t buffer) const
{
    const_cast<RingAllreduceJob*>(this)->Freeze();
    NS_ABORT_MSG_IF(buffer >= m_buffers.size(), "no buffer " << buffer);
    return m_buffers[buffer];
}

uint64_t
RingAllreduceJob::GetBufferBytes(uint32_t buffer) const
{
    return GetBuffer(buffer).bytes;
}

uint32_t
RingAllreduceJob::GetBufferPriority(uint32_t buffer) const
{
    return GetBuffer(buffer).priority;
}

uint8_t
RingAllreduceJob::GetBufferTos(uint32_t buffer) const
{
    return GetBuffer(buffer).tos;
}

std::string
RingAllreduceJob::GetBufferLabel(uint32_t buffer) const
{
    return GetBuffer(buffer).label;
}

const std::vector<uint32_t>&
RingAllreduceJob::GetBuffersClosingAfter(uint32_t layer) const
{
    const_cast<RingAllreduceJob*>(this)->Freeze();
    return m_closing.at(layer);
}

uint32_t
RingAllreduceJob::GetNBuffersOfLayer(uint32_t layer) const
{
    const_cast<RingAllreduceJob*>(this)->Freeze();
    return m_layerParts.at(layer);
}

uint64_t
RingAllreduceJob::GetPartitionBytes(uint32_t buffer, uint32_t partition) const
{
    const uint64_t n = m_workers.size();
    NS_ABORT_MSG_IF(n == 0, "GetPartitionBytes: the job has no workers");
    NS_ABORT_MSG_IF(partition >= n, "no partition " << partition);
    const uint64_t s = GetBuffer(buffer).bytes;
    return s / n + (partition < s % n ? 1 : 0);
}

std::string
RingAllreduceJob::BuffersCsv() const
{
    std::ostringstream os;
    os << "buffer,layers,bytes,priority,tos\n";
    for (uint32_t b = 0; b < GetNBuffers(); ++b)
    {
        const Buffer& buf = m_buffers[b];
        os << b << ',' << buf.label << ',' << buf.bytes << ',' << buf.priority << ','
           << unsigned(buf.tos) << '\n';
    }
    return os.str();
}

// ------------------------------------------------------------------ workers

void
RingAllreduceJob::CheckRank(uint32_t rank) const
{
    NS_ABORT_MSG_IF(rank >= m_workers.size(), "RingAllreduceJob: no worker " << rank);
}

uint32_t
RingAllreduceJob::AddWorker(Ptr<RingAllreduceWorker> worker)
{
    NS_ABORT_MSG_IF(Simulator::Now() > Time(0) || m_nAllreduces > 0 || m_active,
                    "RingAllreduceJob: workers must be added before the job runs");
    Freeze();
    m_workers.push_back(worker);
    m_bytesSent.push_back(0);
    m_records.AddWorker(m_workers.size() - 1);
    m_openTransfers.emplace_back();
    m_workerFinished.push_back(false);
    return m_workers.size() - 1;
}

void
RingAllreduceJob::Validate() const
{
    const uint64_t n = m_workers.size();
    NS_ABORT_MSG_IF(n < 2, "RingAllreduceJob: a ring needs at least 2 workers (got " << n << ")");
    for (uint32_t b = 0; b < GetNBuffers(); ++b)
    {
        NS_ABORT_MSG_IF(m_buffers[b].bytes < n,
                        "RingAllreduceJob: buffer " << b << " (" << m_buffers[b].bytes
                                                    << " B) is smaller than the number of "
                                                       "workers ("
                                                    << n << "): empty partitions");
    }
}

// ------------------------------------------------------------------ syncer

void
RingAllreduceJob::NotifyBufferReady(uint32_t rank, uint64_t iteration, uint32_t buffer)
{
    CheckRank(rank);
    NS_LOG_FUNCTION(this << rank << iteration << buffer);
    Key key(iteration, buffer);
    uint32_t& count = m_readyCount[key];
    if (++count == m_workers.size())
    {
        m_readyCount.erase(key);
        m_queue.insert(key);
        ScheduleTryStart();
    }
}

void
RingAllreduceJob::NotifyAllreduceFinished(uint32_t rank)
{
    CheckRank(rank);
    if (!m_active || m_workerFinished[rank])
    {
        NotifyError(rank, "allreduce finished twice or while none is in flight");
        return;
    }
    m_workerFinished[rank] = true;
    if (++m_finishedWorkers < m_workers.size())
    {
        return;
    }
    m_active = false;
    m_nAllreduces++;
    AllreduceRow& row = m_allreduces.back();
    row.endNs = Simulator::Now().GetNanoSeconds();
    m_allreduceTrace(row.iteration, row.buffer, NanoSeconds(row.startNs), Simulator::Now());
    ScheduleTryStart();
}

void
RingAllreduceJob::ScheduleTryStart()
{
    // Decide after every other event of this instant: a buffer that becomes
    // ready at the very instant the ring frees is already in the queue
    // (as in the analytic model).
    if (!m_tryStartEvent.IsPending())
    {
        m_tryStartEvent = Simulator::ScheduleNow(&RingAllreduceJob::TryStart, this);
    }
}

void
RingAllreduceJob::TryStart()
{
    if (m_active || m_queue.empty())
    {
        return;
    }
    auto best = m_queue.begin(); // FIFO: lowest (iteration, buffer)
    if (m_policy == PRIORITY)
    {
        for (auto it = m_queue.begin(); it != m_queue.end(); ++it)
        {
            // (priority, iteration): ties on a layer go to the older iteration
            auto key = [this](const Key& k) {
                return std::make_pair(m_buffers[k.second].priority, k.first);
            };
            if (key(*it) < key(*best))
            {
                best = it;
            }
        }
    }
    m_current = *best;
    m_queue.erase(best);
    m_active = true;
    m_finishedWorkers = 0;
    std::fill(m_workerFinished.begin(), m_workerFinished.end(), false);
    m_allreduces.push_back(
        AllreduceRow{m_current.first, m_current.second, Simulator::Now().GetNanoSeconds(), -1});
    NS_LOG_INFO("job " << m_jobId << " starts allreduce of iteration " << m_current.first
                       << " buffer " << m_current.second);
    for (auto& worker : m_workers)
    {
        worker->StartAllreduce(m_current.first, m_current.second);
    }
}

// ------------------------------------------------------------------ records

void
RingAllreduceJob::NotifyPartitionSent(uint32_t rank,
                                      uint32_t step,
                                      uint32_t partition,
                                      uint64_t bytes)
{
    CheckRank(rank);
    m_openTransfers[rank].push_back(m_transfers.size());
    m_transfers.push_back(TransferRow{rank,
                                      m_current.first,
                                      m_current.second,
                                      step,
                                      partition,
                                      bytes,
                                      Simulator::Now().GetNanoSeconds(),
                                      -1});
}

void
RingAllreduceJob::NotifyPartitionReceived(uint32_t rank, uint32_t step)
{
    CheckRank(rank);
    const uint32_t sender = (rank + m_workers.size() - 1) % m_workers.size();
    auto& open = m_openTransfers[sender];
    if (open.empty())
    {
        NotifyError(rank, "received a partition its left neighbour never sent");
        return;
    }
    TransferRow& row = m_transfers[open.front()];
    open.pop_front();
    if (row.step != step || row.iteration != m_current.first || row.buffer != m_current.second)
    {
        NotifyError(rank,
                    "partition received out of order (step " + std::to_string(step) +
                        ", expected " + std::to_string(row.step) + ")");
    }
    row.endNs = Simulator::Now().GetNanoSeconds();
}

void
RingAllreduceJob::NotifyBytesSent(uint32_t rank, uint64_t bytes)
{
    CheckRank(rank);
    m_bytesSent[rank] += bytes;
}

void
RingAllreduceJob::NotifyIterationStart(uint32_t rank, uint64_t iteration)
{
    CheckRank(rank);
    if (const auto* row = m_records.IterationStart(rank, iteration))
    {
        m_iterationTrace(rank, row->iteration, NanoSeconds(row->endNs - row->startNs));
    }
}

void
RingAllreduceJob::NotifyComputeDone(uint32_t rank,
                                    uint64_t iteration,
                                    uint32_t layer,
                                    bool backward,
                                    Time start)
{
    CheckRank(rank);
    m_records.ComputeDone(rank, iteration, layer, backward, start);
}

void
RingAllreduceJob::NotifyError(uint32_t rank, const std::string& what)
{
    m_records.Error("worker " + std::to_string(rank), what);
    NS_LOG_WARN("job " << m_jobId << " worker " << rank << ": " << what);
}

// ------------------------------------------------------------------ results

uint64_t
RingAllreduceJob::GetBytesSent(uint32_t worker) const
{
    CheckRank(worker);
    return m_bytesSent[worker];
}

uint64_t
RingAllreduceJob::GetNAllreduces() const
{
    return m_nAllreduces;
}

uint64_t
RingAllreduceJob::GetNAllreducesStarted() const
{
    return m_allreduces.size();
}

uint32_t
RingAllreduceJob::GetNConnectedWorkers() const
{
    uint32_t n = 0;
    for (const auto& worker : m_workers)
    {
        n += worker->IsConnected() && worker->HasLeftConnection();
    }
    return n;
}

Ptr<RingAllreduceWorker>
RingAllreduceJob::GetWorker(uint32_t rank) const
{
    CheckRank(rank);
    return m_workers[rank];
}

uint64_t
RingAllreduceJob::GetNIterations() const
{
    return m_records.GetNIterations();
}

void
RingAllreduceJob::SetMeasurementTarget(uint64_t count, Time since, Time stopDelay)
{
    m_records.SetTarget(count, since, stopDelay);
}

int64_t
RingAllreduceJob::GetTargetReachedNs() const
{
    return m_records.GetTargetReachedNs();
}

bool
RingAllreduceJob::HasStoppedAtTarget() const
{
    return m_records.HasStopped();
}

uint64_t
RingAllreduceJob::GetNErrors() const
{
    return m_records.GetNErrors();
}

std::string
RingAllreduceJob::GetErrors() const
{
    return m_records.GetErrors();
}

std::string
RingAllreduceJob::IterationsCsv() const
{
    return m_records.IterationsCsv(m_jobId);
}

std::string
RingAllreduceJob::ComputeCsv() const
{
    return m_records.ComputeCsv(m_jobId);
}

std::string
RingAllreduceJob::TransfersCsv() const
{
    std::ostringstream os;
    os << "job,worker,iteration,buffer,layers,step,partition,bytes,start_ns,end_ns\n";
    for (const auto& r : m_transfers)
    {
        os << m_jobId << ',' << r.worker << ',' << r.iteration << ',' << r.buffer << ','
           << m_buffers[r.buffer].label << ',' << r.step << ',' << r.partition << ','
           << r.bytes << ',' << r.startNs << ',' << r.endNs << '\n';
    }
    return os.str();
}

std::string
RingAllreduceJob::AllreducesCsv() const
{
    std::ostringstream os;
    os << "job,iteration,buffer,layers,bytes,start_ns,end_ns\n";
    for (const auto& r : m_allreduces)
    {
        os << m_jobId << ',' << r.iteration << ',' << r.buffer << ','
           << m_buffers[r.buffer].label << ',' << m_buffers[r.buffer].bytes << ',' << r.startNs
           << ',' << r.endNs << '\n';
    }
    return os.str();
}

} // namespace ns3
