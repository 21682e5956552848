#include "ring-allreduce-job.h"

#include "ring-allreduce-worker.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

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
            .SetParent<RingJob>()
            .SetGroupName("Ddnn")
            .AddConstructor<RingAllreduceJob>()
            .AddTraceSource("AllreduceCompleted",
                            "An allreduce finished on every worker: (iteration, buffer, "
                            "start, end).",
                            MakeTraceSourceAccessor(&RingAllreduceJob::m_allreduceTrace),
                            "ns3::RingAllreduceJob::AllreduceCallback");
    return tid;
}

RingAllreduceJob::RingAllreduceJob()
    : m_nAllreduces(0)
{
    NS_LOG_FUNCTION(this);
}

void
RingAllreduceJob::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_workers.clear();
    m_scheduler = nullptr;
    RingJob::DoDispose();
}

// ------------------------------------------------------------------ the plan

void
RingAllreduceJob::CheckDescribable(const char* what) const
{
    NS_LOG_FUNCTION(this << what);
    NS_ABORT_MSG_IF(!m_workers.empty(),
                    "RingAllreduceJob::" << what
                                         << ": the job has workers; describe it before");
}

void
RingAllreduceJob::SetBuffers(const std::vector<uint32_t>& first,
                             const std::vector<uint32_t>& last,
                             const std::vector<uint64_t>& bytes)
{
    NS_LOG_FUNCTION(this << first << last << bytes);
    CheckDescribable("SetBuffers");
    const uint32_t L = m_bytes.size();
    NS_ABORT_MSG_IF(L == 0, "RingAllreduceJob::SetBuffers: no layers (call SetLayers first)");
    NS_ABORT_MSG_IF(first.size() != last.size() || first.size() != bytes.size() || first.empty(),
                    "RingAllreduceJob::SetBuffers: first, last and bytes must have the same, "
                    "non-zero length");
    m_buffers.clear();
    m_closing.assign(L, {});
    m_layerParts.assign(L, 0);
    std::vector<uint64_t> filled(L, 0); // bytes of each layer in single-layer buffers so far
    for (uint32_t b = 0; b < first.size(); ++b)
    {
        NS_ABORT_MSG_IF(first[b] >= L || last[b] > first[b] || bytes[b] == 0,
                        "RingAllreduceJob::SetBuffers: buffer " << b << " (layers " << first[b]
                                                                << "-" << last[b] << ", "
                                                                << bytes[b] << " B) is not valid");
        Buffer buffer{{}, bytes[b], last[b], 0, std::to_string(first[b])};
        for (int64_t layer = first[b]; layer >= int64_t(last[b]); --layer)
        {
            buffer.layers.push_back(uint32_t(layer));
            m_layerParts[layer]++;
        }
        if (first[b] != last[b])
        {
            buffer.label += "-" + std::to_string(last[b]);
        }
        else
        {
            buffer.offset = filled[last[b]];
            filled[last[b]] += bytes[b];
        }
        m_closing[last[b]].push_back(b);
        m_buffers.push_back(buffer);
    }
    for (uint32_t layer = 0; layer < L; ++layer)
    {
        NS_ABORT_MSG_IF(m_layerParts[layer] == 0,
                        "RingAllreduceJob::SetBuffers: no buffer holds layer " << layer);
    }
}

void
RingAllreduceJob::SetScheduler(const std::string& typeId, const std::vector<std::string>& attributes)
{
    NS_LOG_FUNCTION(this << typeId << attributes);
    CheckDescribable("SetScheduler");
    m_scheduler = SchedulerFactory(typeId, attributes, "RingAllreduceJob::SetScheduler")
                      .Create<CommScheduler>();
    m_scheduler->Attach(this, 0, true);
}

// ------------------------------------------------------------------ buffers

uint32_t
RingAllreduceJob::GetNBuffers() const
{
    NS_LOG_FUNCTION(this);
    return m_buffers.size();
}

const RingAllreduceJob::Buffer&
RingAllreduceJob::GetBuffer(uint32_t buffer) const
{
    NS_LOG_FUNCTION(this << buffer);
    NS_ABORT_MSG_IF(buffer >= m_buffers.size(), "no buffer " << buffer);
    return m_buffers[buffer];
}

uint64_t
RingAllreduceJob::GetBufferBytes(uint32_t buffer) const
{
    NS_LOG_FUNCTION(this << buffer);
    return GetBuffer(buffer).bytes;
}

uint32_t
RingAllreduceJob::GetBufferPriority(uint32_t buffer) const
{
    NS_LOG_FUNCTION(this << buffer);
    return GetBuffer(buffer).priority;
}

uint8_t
RingAllreduceJob::GetBufferTos(uint32_t buffer) const
{
    NS_LOG_FUNCTION(this << buffer);
    return GetLayerTos(GetBuffer(buffer).priority);
}

std::string
RingAllreduceJob::GetBufferLabel(uint32_t buffer) const
{
    NS_LOG_FUNCTION(this << buffer);
    return GetBuffer(buffer).label;
}

const std::vector<uint32_t>&
RingAllreduceJob::GetBuffersClosingAfter(uint32_t layer) const
{
    NS_LOG_FUNCTION(this << layer);
    return m_closing.at(layer);
}

uint32_t
RingAllreduceJob::GetNBuffersOfLayer(uint32_t layer) const
{
    NS_LOG_FUNCTION(this << layer);
    return m_layerParts.at(layer);
}

uint64_t
RingAllreduceJob::GetPartitionBytes(uint32_t buffer, uint32_t partition) const
{
    NS_LOG_FUNCTION(this << buffer << partition);
    const uint64_t n = m_workers.size();
    NS_ABORT_MSG_IF(n == 0, "GetPartitionBytes: the job has no workers");
    NS_ABORT_MSG_IF(partition >= n, "no partition " << partition);
    const uint64_t s = GetBuffer(buffer).bytes;
    return s / n + (partition < s % n ? 1 : 0);
}

std::string
RingAllreduceJob::BuffersCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "buffer,layers,bytes,priority,tos\n";
    for (uint32_t b = 0; b < GetNBuffers(); ++b)
    {
        const Buffer& buf = m_buffers[b];
        os << b << ',' << buf.label << ',' << buf.bytes << ',' << buf.priority << ','
           << unsigned(GetLayerTos(buf.priority)) << '\n';
    }
    return os.str();
}

// ------------------------------------------------------------------ workers

uint32_t
RingAllreduceJob::AddWorker(Ptr<RingAllreduceWorker> worker)
{
    NS_LOG_FUNCTION(this << worker);
    NS_ABORT_MSG_IF(Simulator::Now() > Time(0) || m_nAllreduces > 0 || IsCollectiveActive(),
                    "RingAllreduceJob: workers must be added before the job runs");
    NS_ABORT_MSG_IF(m_buffers.empty(), "RingAllreduceJob: SetBuffers() before adding workers");
    if (!m_scheduler)
    {
        SetScheduler("ns3::FifoScheduler", {});
    }
    m_workers.push_back(worker);
    return AddRingWorker(worker);
}

void
RingAllreduceJob::Validate() const
{
    NS_LOG_FUNCTION(this);
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
    NS_LOG_FUNCTION(this << rank << iteration << buffer);
    CheckRank(rank);
    Key key(iteration, buffer);
    uint32_t& count = m_readyCount[key];
    if (++count == m_workers.size())
    {
        m_readyCount.erase(key);
        const Buffer& buf = m_buffers.at(buffer);
        // the scheduler orders units by (layer, iteration, offset) or by arrival
        PsChunk unit{iteration, buf.priority, buf.offset, buf.bytes, GetLayerTos(buf.priority), -1, 0};
        unit.unit = buffer;
        WatchDeadline(unit);
        m_waiting.insert(key);
        m_scheduler->Enqueue(unit);
        ScheduleTryStart();
    }
}

Time
RingAllreduceJob::GetAllreduceTime(uint64_t bytes) const
{
    NS_LOG_FUNCTION(this << bytes);
    const double n = double(m_workers.size());
    return Seconds(2.0 * (n - 1) / n * double(bytes) * 8 / double(GetLinkBps()));
}

void
RingAllreduceJob::WatchDeadline(PsChunk& unit)
{
    NS_LOG_FUNCTION(this << unit.iteration << unit.unit);
    const int32_t deadlineTos = GetDeadlineTos();
    if (deadlineTos < 0 || unit.tos == uint8_t(deadlineTos))
    {
        return;
    }
    // Ready on every worker now; the forward pass needs the buffer's lowest
    // layer after the compute below it (if nothing waits). Its slack runs
    // out when what is left is its allreduce at line rate.
    const Time needed = Simulator::Now() + GetTimeUntilNeeded(unit.tensor);
    const Time raiseAt = needed - GetAllreduceTime(unit.bytes);
    unit.deadlineNs = needed.GetNanoSeconds();
    if (raiseAt <= Simulator::Now())
    {
        unit.tos = uint8_t(deadlineTos); // no slack left already
        m_raised[Key(unit.iteration, unit.unit)] = Simulator::Now().GetNanoSeconds();
        return;
    }
    Simulator::Schedule(raiseAt - Simulator::Now(),
                        &RingAllreduceJob::RaiseNow,
                        this,
                        unit.iteration,
                        unit.unit);
}

void
RingAllreduceJob::RaiseNow(uint64_t iteration, uint32_t buffer)
{
    NS_LOG_FUNCTION(this << iteration << buffer);
    const Key key(iteration, buffer);
    const uint8_t tos = uint8_t(GetDeadlineTos());
    if (IsCollectiveActive() && GetCurrentCollective() == key)
    {
        // being allreduced: what the workers have not transmitted yet moves up
        AllreduceRow& row = m_allreduces.back();
        if (row.tos != tos)
        {
            row.tos = tos;
            row.raisedNs = Simulator::Now().GetNanoSeconds();
            SetCollective(iteration, buffer, tos);
            for (auto& worker : m_workers)
            {
                worker->RaiseAllreduce(tos);
            }
        }
        return;
    }
    if (m_waiting.count(key) && !m_raised.count(key))
    {
        // waiting for the ring: it starts in the deadline class
        m_scheduler->Raise(iteration, m_buffers.at(buffer).priority, tos);
        m_raised[key] = Simulator::Now().GetNanoSeconds();
    }
    // else: allreduced already, in time
}

void
RingAllreduceJob::NotifyAllreduceFinished(uint32_t rank)
{
    NS_LOG_FUNCTION(this << rank);
    NotifyWorkerFinished(rank, "allreduce");
}

void
RingAllreduceJob::DoCollectiveFinished()
{
    NS_LOG_FUNCTION(this);
    m_nAllreduces++;
    AllreduceRow& row = m_allreduces.back();
    row.endNs = Simulator::Now().GetNanoSeconds();
    m_allreduceTrace(row.iteration, row.buffer, NanoSeconds(row.startNs), Simulator::Now());
}

bool
RingAllreduceJob::PickCollective(Collective& next)
{
    NS_LOG_FUNCTION(this);
    PsChunk chunk;
    // the scheduler is asked with nothing in flight
    if (!m_scheduler->Next(0, chunk))
    {
        return false;
    }
    next = Collective{chunk.iteration, chunk.unit, chunk.tos, -1};
    return true;
}

void
RingAllreduceJob::StartCollective(const Collective& c)
{
    NS_LOG_FUNCTION(this);
    const Key current(c.iteration, c.unit);
    m_waiting.erase(current);
    int64_t raisedNs = -1;
    if (auto it = m_raised.find(current); it != m_raised.end())
    {
        raisedNs = it->second;
        m_raised.erase(it);
    }
    m_allreduces.push_back(AllreduceRow{c.iteration,
                                        c.unit,
                                        c.tos,
                                        raisedNs,
                                        Simulator::Now().GetNanoSeconds(),
                                        -1});
    NS_LOG_INFO("job " << m_jobId << " starts allreduce of iteration " << c.iteration
                       << " buffer " << c.unit);
    for (auto& worker : m_workers)
    {
        worker->StartAllreduce(c.iteration, c.unit, c.tos);
    }
}

// ------------------------------------------------------------------ records

// ------------------------------------------------------------------ results

uint64_t
RingAllreduceJob::GetNAllreduces() const
{
    NS_LOG_FUNCTION(this);
    return m_nAllreduces;
}

uint64_t
RingAllreduceJob::GetNAllreducesStarted() const
{
    NS_LOG_FUNCTION(this);
    return m_allreduces.size();
}

Ptr<RingAllreduceWorker>
RingAllreduceJob::GetWorker(uint32_t rank) const
{
    NS_LOG_FUNCTION(this << rank);
    CheckRank(rank);
    return m_workers[rank];
}









std::string
RingAllreduceJob::TransfersCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "job,worker,iteration,buffer,layers,tos,step,partition,bytes,start_ns,end_ns\n";
    for (const auto& r : m_transfers.GetRows())
    {
        os << m_jobId << ',' << r.worker << ',' << r.iteration << ',' << r.unit << ','
           << m_buffers[r.unit].label << ',' << unsigned(r.tos) << ',' << r.step << ','
           << r.partition << ',' << r.bytes << ',' << r.startNs << ',' << r.endNs << '\n';
    }
    return os.str();
}

std::string
RingAllreduceJob::AllreducesCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "job,iteration,buffer,layers,bytes,tos,raised_ns,start_ns,end_ns\n";
    for (const auto& r : m_allreduces)
    {
        os << m_jobId << ',' << r.iteration << ',' << r.buffer << ','
           << m_buffers[r.buffer].label << ',' << m_buffers[r.buffer].bytes << ','
           << unsigned(r.tos) << ',' << r.raisedNs << ',' << r.startNs << ',' << r.endNs
           << '\n';
    }
    return os.str();
}

} // namespace ns3
