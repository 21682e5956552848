#include "sharded-job.h"

#include "sharded-worker.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ShardedJob");

NS_OBJECT_ENSURE_REGISTERED(ShardedJob);

TypeId
ShardedJob::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ShardedJob")
            .SetParent<RingJob>()
            .SetGroupName("Ddnn")
            .AddConstructor<ShardedJob>()
            .AddAttribute("PrefetchDepth",
                          "Compute phases a worker's all-gathers may run ahead: the "
                          "all-gather of phase p is issued when phase p - depth is due "
                          "(0 = each group is gathered when its compute is due).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&ShardedJob::m_prefetchDepth),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Reshard",
                          "Parameters are freed after forward and all-gathered again "
                          "before backward (FSDP's reshard_after_forward, ZeRO-3).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&ShardedJob::m_reshard),
                          MakeBooleanChecker())
            .AddTraceSource("CollectiveCompleted",
                            "A collective finished on every worker: (iteration, slot, "
                            "start, end).",
                            MakeTraceSourceAccessor(&ShardedJob::m_collectiveTrace),
                            "ns3::ShardedJob::CollectiveCallback");
    return tid;
}

ShardedJob::ShardedJob()
    : m_prefetchDepth(0),
      m_reshard(true),
      m_nCollectives(0)
{
    NS_LOG_FUNCTION(this);
}

void
ShardedJob::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_workers.clear();
    RingJob::DoDispose();
}

// ------------------------------------------------------------------ the plan

void
ShardedJob::CheckDescribable(const char* what) const
{
    NS_LOG_FUNCTION(this << what);
    NS_ABORT_MSG_IF(!m_workers.empty(),
                    "ShardedJob::" << what << ": the job has workers; describe it before");
}

void
ShardedJob::SetGroups(const std::vector<uint32_t>& first, const std::vector<uint32_t>& last)
{
    NS_LOG_FUNCTION(this << first << last);
    CheckDescribable("SetGroups");
    const uint32_t L = m_bytes.size();
    NS_ABORT_MSG_IF(L == 0, "ShardedJob::SetGroups: no layers (call SetLayers first)");
    NS_ABORT_MSG_IF(first.size() != last.size() || first.empty(),
                    "ShardedJob::SetGroups: first and last must have the same, non-zero length");
    m_groups.clear();
    uint32_t next = 0;
    for (uint32_t g = 0; g < first.size(); ++g)
    {
        NS_ABORT_MSG_IF(first[g] != next || last[g] < first[g] || last[g] >= L,
                        "ShardedJob::SetGroups: group "
                            << g << " (layers " << first[g] << "-" << last[g]
                            << ") is not valid: groups are consecutive layers from 0 to "
                            << L - 1);
        Group group{first[g], last[g], 0, std::to_string(first[g])};
        for (uint32_t layer = first[g]; layer <= last[g]; ++layer)
        {
            group.bytes += m_bytes[layer];
        }
        if (first[g] != last[g])
        {
            group.label += "-" + std::to_string(last[g]);
        }
        m_groups.push_back(group);
        next = last[g] + 1;
    }
    NS_ABORT_MSG_IF(next != L,
                    "ShardedJob::SetGroups: the groups end at layer " << next - 1 << " of "
                                                                      << L - 1);
}

uint32_t
ShardedJob::GetPrefetchDepth() const
{
    NS_LOG_FUNCTION(this);
    return m_prefetchDepth;
}

bool
ShardedJob::GetReshard() const
{
    NS_LOG_FUNCTION(this);
    return m_reshard;
}

// ------------------------------------------------------------------ groups, phases, slots

uint32_t
ShardedJob::GetNGroups() const
{
    NS_LOG_FUNCTION(this);
    return m_groups.size();
}

uint32_t
ShardedJob::GetGroupFirst(uint32_t group) const
{
    NS_LOG_FUNCTION(this << group);
    return m_groups.at(group).first;
}

uint32_t
ShardedJob::GetGroupLast(uint32_t group) const
{
    NS_LOG_FUNCTION(this << group);
    return m_groups.at(group).last;
}

uint64_t
ShardedJob::GetGroupBytes(uint32_t group) const
{
    NS_LOG_FUNCTION(this << group);
    return m_groups.at(group).bytes;
}

uint8_t
ShardedJob::GetGroupTos(uint32_t group) const
{
    NS_LOG_FUNCTION(this << group);
    return GetLayerTos(m_groups.at(group).first);
}

std::string
ShardedJob::GetGroupLabel(uint32_t group) const
{
    NS_LOG_FUNCTION(this << group);
    return m_groups.at(group).label;
}

uint32_t
ShardedJob::GetNPhases() const
{
    NS_LOG_FUNCTION(this);
    return 2 * m_groups.size();
}

uint32_t
ShardedJob::GetPhaseGroup(uint32_t phase) const
{
    NS_LOG_FUNCTION(this << phase);
    const uint32_t G = m_groups.size();
    NS_ABORT_MSG_IF(phase >= 2 * G, "ShardedJob: phase " << phase << " does not exist");
    return phase < G ? phase : 2 * G - 1 - phase;
}

bool
ShardedJob::IsBackwardPhase(uint32_t phase) const
{
    NS_LOG_FUNCTION(this << phase);
    return phase >= m_groups.size();
}

bool
ShardedJob::PhaseGathers(uint32_t phase) const
{
    NS_LOG_FUNCTION(this << phase);
    return !IsBackwardPhase(phase) || m_reshard;
}

uint32_t
ShardedJob::GetNSlots() const
{
    NS_LOG_FUNCTION(this);
    return 3 * m_groups.size();
}

uint32_t
ShardedJob::GetReduceScatterSlot(uint32_t group) const
{
    NS_LOG_FUNCTION(this << group);
    const uint32_t G = m_groups.size();
    NS_ABORT_MSG_IF(group >= G, "ShardedJob: group " << group << " does not exist");
    return 2 * G + (G - 1 - group);
}

ShardedJob::Kind
ShardedJob::GetSlotKind(uint32_t slot) const
{
    NS_LOG_FUNCTION(this << slot);
    CheckSlot(slot);
    return slot < 2 * m_groups.size() ? ALL_GATHER : REDUCE_SCATTER;
}

uint32_t
ShardedJob::GetSlotGroup(uint32_t slot) const
{
    NS_LOG_FUNCTION(this << slot);
    CheckSlot(slot);
    const uint32_t G = m_groups.size();
    return slot < 2 * G ? GetPhaseGroup(slot) : G - 1 - (slot - 2 * G);
}

uint64_t
ShardedJob::GetPartitionBytes(uint32_t group, uint32_t partition) const
{
    NS_LOG_FUNCTION(this << group << partition);
    const uint64_t n = m_workers.size();
    const uint64_t bytes = m_groups.at(group).bytes;
    return bytes / n + (partition < bytes % n ? 1 : 0);
}

void
ShardedJob::CheckSlot(uint32_t slot) const
{
    NS_LOG_FUNCTION(this << slot);
    NS_ABORT_MSG_IF(slot >= GetNSlots(), "ShardedJob: collective slot " << slot
                                                                        << " does not exist");
}

std::string
ShardedJob::KindName(uint32_t slot) const
{
    NS_LOG_FUNCTION(this << slot);
    return GetSlotKind(slot) == ALL_GATHER ? "allgather" : "reducescatter";
}

std::string
ShardedJob::GroupsCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "group,layers,bytes,tos\n";
    for (uint32_t g = 0; g < m_groups.size(); ++g)
    {
        os << g << ',' << m_groups[g].label << ',' << m_groups[g].bytes << ','
           << unsigned(GetGroupTos(g)) << '\n';
    }
    return os.str();
}

// ------------------------------------------------------------------ workers

uint32_t
ShardedJob::AddWorker(Ptr<ShardedWorker> worker)
{
    NS_LOG_FUNCTION(this << worker);
    NS_ABORT_MSG_IF(Simulator::Now() > Time(0) || m_nCollectives > 0 || IsCollectiveActive(),
                    "ShardedJob: workers must be added before the job runs");
    NS_ABORT_MSG_IF(m_groups.empty(), "ShardedJob: SetGroups() before adding workers");
    m_workers.push_back(worker);
    return AddRingWorker(worker);
}

void
ShardedJob::Validate() const
{
    NS_LOG_FUNCTION(this);
    const uint64_t n = m_workers.size();
    NS_ABORT_MSG_IF(n < 2, "ShardedJob: a ring needs at least 2 workers (got " << n << ")");
    for (uint32_t g = 0; g < m_groups.size(); ++g)
    {
        NS_ABORT_MSG_IF(m_groups[g].bytes < n,
                        "ShardedJob: group " << g << " (" << m_groups[g].bytes
                                             << " B) is smaller than the number of workers ("
                                             << n << "): empty shards");
    }
}

// ------------------------------------------------------------------ syncer

void
ShardedJob::NotifyCollectiveReady(uint32_t rank, uint64_t iteration, uint32_t slot)
{
    NS_LOG_FUNCTION(this << rank << iteration << slot);
    CheckRank(rank);
    CheckSlot(slot);
    NS_LOG_FUNCTION(this << rank << iteration << slot);
    const Key key(iteration, slot);
    uint32_t& count = m_readyCount[key];
    if (++count == m_workers.size())
    {
        m_readyCount.erase(key);
        m_queue.insert(QueueEntry(Simulator::Now().GetNanoSeconds(),
                                  uint32_t(GetSlotKind(slot)),
                                  iteration,
                                  slot));
        ScheduleTryStart();
    }
}

void
ShardedJob::NotifyCollectiveFinished(uint32_t rank)
{
    NS_LOG_FUNCTION(this << rank);
    NotifyWorkerFinished(rank, "collective");
}

void
ShardedJob::DoCollectiveFinished()
{
    NS_LOG_FUNCTION(this);
    m_nCollectives++;
    CollectiveRow& row = m_collectives.back();
    row.endNs = Simulator::Now().GetNanoSeconds();
    m_collectiveTrace(row.iteration, row.slot, NanoSeconds(row.startNs), Simulator::Now());
}

bool
ShardedJob::PickCollective(Collective& next)
{
    NS_LOG_FUNCTION(this);
    if (m_queue.empty())
    {
        return false;
    }
    const QueueEntry entry = *m_queue.begin();
    m_queue.erase(m_queue.begin());
    const uint32_t slot = std::get<3>(entry);
    next = Collective{std::get<2>(entry), slot, GetGroupTos(GetSlotGroup(slot)),
                      std::get<0>(entry)};
    return true;
}

void
ShardedJob::StartCollective(const Collective& c)
{
    NS_LOG_FUNCTION(this);
    m_collectives.push_back(
        CollectiveRow{c.iteration, c.unit, c.readyNs, Simulator::Now().GetNanoSeconds(), -1});
    NS_LOG_INFO("job " << m_jobId << " starts " << KindName(c.unit) << " of group "
                       << GetSlotGroup(c.unit) << " in iteration " << c.iteration);
    for (auto& worker : m_workers)
    {
        worker->StartCollective(c.iteration, c.unit);
    }
}

// ------------------------------------------------------------------ records

// ------------------------------------------------------------------ results

uint64_t
ShardedJob::GetNCollectives() const
{
    NS_LOG_FUNCTION(this);
    return m_nCollectives;
}

uint64_t
ShardedJob::GetNCollectivesStarted() const
{
    NS_LOG_FUNCTION(this);
    return m_collectives.size();
}

Ptr<ShardedWorker>
ShardedJob::GetWorker(uint32_t rank) const
{
    NS_LOG_FUNCTION(this << rank);
    CheckRank(rank);
    return m_workers[rank];
}

std::string
ShardedJob::TransfersCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "job,worker,iteration,buffer,kind,group,layers,tos,step,partition,bytes,start_ns,"
          "end_ns\n";
    for (const auto& r : m_transfers.GetRows())
    {
        const uint32_t g = GetSlotGroup(r.unit);
        os << m_jobId << ',' << r.worker << ',' << r.iteration << ',' << r.unit << ','
           << KindName(r.unit) << ',' << g << ',' << m_groups[g].label << ','
           << unsigned(r.tos) << ',' << r.step << ',' << r.partition << ',' << r.bytes
           << ',' << r.startNs << ',' << r.endNs << '\n';
    }
    return os.str();
}

std::string
ShardedJob::CollectivesCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "job,iteration,buffer,kind,group,layers,bytes,ready_ns,start_ns,end_ns\n";
    for (const auto& r : m_collectives)
    {
        const uint32_t g = GetSlotGroup(r.slot);
        os << m_jobId << ',' << r.iteration << ',' << r.slot << ',' << KindName(r.slot) << ','
           << g << ',' << m_groups[g].label << ',' << m_groups[g].bytes << ',' << r.readyNs
           << ',' << r.startNs << ',' << r.endNs << '\n';
    }
    return os.str();
}

} // namespace ns3
