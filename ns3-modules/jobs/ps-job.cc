#include "ps-job.h"

#include "ps-channel.h"
#include "ps-server.h"
#include "ps-worker.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/integer.h"
#include "ns3/log.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PsJob");

NS_OBJECT_ENSURE_REGISTERED(PsJob);

TypeId
PsJob::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PsJob")
            .SetParent<TrainingJob>()
            .SetGroupName("Ddnn")
            .AddConstructor<PsJob>()
            .AddAttribute("PullBarrier",
                          "The shards pull an iteration's parameters only once every tensor of "
                          "that iteration is aggregated on every shard (TensorFlow's "
                          "synchronous parameter servers: pulls do not overlap pushes).",
                          BooleanValue(false),
                          MakeBooleanAccessor(&PsJob::m_pullBarrier),
                          MakeBooleanChecker())
            .AddAttribute("ChunkOverhead",
                          "Each sender (a worker towards one shard, a shard towards one "
                          "worker) commits chunks at least this far apart: the framework's "
                          "cost per operation, which makes small partitions expensive on "
                          "fast links.",
                          TimeValue(Seconds(0)),
                          MakeTimeAccessor(&PsJob::m_chunkOverhead),
                          MakeTimeChecker(Seconds(0)))
            .AddAttribute("AggregationBytes",
                          "Unit the shards aggregate and pull in: 0 = whole tensors (pull "
                          "after the whole push), else chunks of this size (pull overlaps "
                          "push).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&PsJob::m_aggregationBytes),
                          MakeUintegerChecker<uint64_t>())
            .AddTraceSource("TransferCompleted",
                            "A chunk committed to a channel was received by the other end: "
                            "(worker, shard, push, chunk, local, start, end); one call per "
                            "row of TransfersCsv() with an end.",
                            MakeTraceSourceAccessor(&PsJob::m_transferTrace),
                            "ns3::PsJob::TransferCallback");
    return tid;
}

PsJob::PsJob()
    : m_nShards(0),
      m_pullBarrier(false),
      m_chunkOverhead(Seconds(0)),
      m_aggregationBytes(0),
      m_wired(false)
{
    NS_LOG_FUNCTION(this);
    m_pushFactory.SetTypeId("ns3::FifoScheduler");
    m_pullFactory.SetTypeId("ns3::FifoScheduler");
}

void
PsJob::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_workers.clear();
    m_servers.clear();
    m_schedulers.clear();
    TrainingJob::DoDispose();
}

// ------------------------------------------------------------------ description

void
PsJob::CheckDescribable(const char* what) const
{
    NS_LOG_FUNCTION(this << what);
    NS_ABORT_MSG_IF(m_wired, "PsJob::" << what << ": the job is wired; describe it before");
}

void
PsJob::SetTensorShards(const std::vector<uint32_t>& shards)
{
    NS_LOG_FUNCTION(this << shards);
    CheckDescribable("SetTensorShards");
    NS_ABORT_MSG_IF(shards.size() != m_bytes.size(),
                    "PsJob::SetTensorShards: " << shards.size() << " shards for "
                                               << m_bytes.size() << " tensors");
    m_shard = shards;
    m_nShards = *std::max_element(shards.begin(), shards.end()) + 1;
}

void
PsJob::SetScheduler(bool push, const std::string& typeId, const std::vector<std::string>& attributes)
{
    NS_LOG_FUNCTION(this << push << typeId << attributes);
    CheckDescribable("SetScheduler");
    (push ? m_pushFactory : m_pullFactory) =
        SchedulerFactory(typeId, attributes, "PsJob::SetScheduler");
}

uint32_t
PsJob::GetShard(uint32_t tensor) const
{
    NS_LOG_FUNCTION(this << tensor);
    return m_shard.at(tensor);
}

uint32_t
PsJob::GetNShards() const
{
    NS_LOG_FUNCTION(this);
    return m_nShards;
}

std::vector<uint32_t>
PsJob::GetShardTensors(uint32_t shard) const
{
    NS_LOG_FUNCTION(this << shard);
    std::vector<uint32_t> out;
    for (uint32_t t = 0; t < m_shard.size(); ++t)
    {
        if (m_shard[t] == shard)
        {
            out.push_back(t);
        }
    }
    return out;
}

bool
PsJob::GetPullBarrier() const
{
    NS_LOG_FUNCTION(this);
    return m_pullBarrier;
}

Time
PsJob::GetChunkOverhead() const
{
    NS_LOG_FUNCTION(this);
    return m_chunkOverhead;
}

uint64_t
PsJob::GetAggregationBytes() const
{
    NS_LOG_FUNCTION(this);
    return m_aggregationBytes;
}

const std::vector<uint8_t>&
PsJob::GetClasses() const
{
    NS_LOG_FUNCTION(this);
    return m_classes;
}

uint32_t
PsJob::GetClassIndex(uint8_t tos) const
{
    NS_LOG_FUNCTION(this << static_cast<uint32_t>(tos));
    auto it = std::find(m_classes.begin(), m_classes.end(), tos);
    NS_ABORT_MSG_IF(it == m_classes.end(), "PsJob: ToS " << unsigned(tos) << " is not a class of the job");
    return it - m_classes.begin();
}

// ------------------------------------------------------------------ wiring

uint32_t
PsJob::AddWorker(Ptr<PsWorker> worker, Ipv4Address address)
{
    NS_LOG_FUNCTION(this << worker << address);
    CheckDescribable("AddWorker");
    m_workers.push_back(worker);
    m_workerAddresses.push_back(address);
    m_records.AddWorker(m_workers.size() - 1);
    return m_workers.size() - 1;
}

uint32_t
PsJob::AddServer(Ptr<PsServer> server, Ipv4Address address)
{
    NS_LOG_FUNCTION(this << server << address);
    CheckDescribable("AddServer");
    m_servers.push_back(server);
    m_serverAddresses.push_back(address);
    return m_servers.size() - 1;
}

Ptr<CommScheduler>
PsJob::CreateScheduler(bool push, uint32_t shard)
{
    NS_LOG_FUNCTION(this << push << shard);
    Ptr<CommScheduler> s = (push ? m_pushFactory : m_pullFactory).Create<CommScheduler>();
    s->Attach(this, shard, push);
    s->Validate();
    m_schedulers.push_back(s);
    return s;
}

void
PsJob::Wire()
{
    NS_LOG_FUNCTION(this);
    CheckDescribable("Wire");
    NS_ABORT_MSG_IF(m_bytes.empty(), "PsJob: no layers (call SetLayers)");
    if (m_shard.size() != m_bytes.size())
    {
        SetTensorShards(std::vector<uint32_t>(m_bytes.size(), 0)); // one shard holds all
    }
    NS_ABORT_MSG_IF(m_workers.size() < 1, "PsJob: no workers");
    NS_ABORT_MSG_IF(m_servers.size() != m_nShards,
                    "PsJob: tensors are assigned to " << m_nShards << " shards but "
                                                      << m_servers.size() << " are installed");
    m_classes.clear();
    for (uint32_t l = 0; l < m_bytes.size(); ++l)
    {
        m_classes.push_back(GetLayerTos(l));
    }
    if (GetDeadlineTos() >= 0)
    {
        m_classes.push_back(uint8_t(GetDeadlineTos()));
    }
    std::sort(m_classes.begin(), m_classes.end());
    m_classes.erase(std::unique(m_classes.begin(), m_classes.end()), m_classes.end());
    m_wired = true;
    for (uint32_t w = 0; w < m_workers.size(); ++w)
    {
        for (uint32_t s = 0; s < m_servers.size(); ++s)
        {
            auto workerEnd = CreateObject<PsChannel>();
            auto serverEnd = CreateObject<PsChannel>();
            workerEnd->Setup(this, m_workers[w]->GetNode(), w, s, true, CreateScheduler(true, s));
            serverEnd->Setup(this, m_servers[s]->GetNode(), w, s, false, CreateScheduler(false, s));
            workerEnd->SetPeer(PeekPointer(serverEnd));
            serverEnd->SetPeer(PeekPointer(workerEnd));
            const bool local = m_workers[w]->GetNode() == m_servers[s]->GetNode();
            workerEnd->SetLocal(local);
            serverEnd->SetLocal(local);
            m_workers[w]->AddChannel(s, workerEnd);
            m_servers[s]->AddChannel(w, serverEnd);
        }
    }
}

uint32_t
PsJob::GetNWorkers() const
{
    NS_LOG_FUNCTION(this);
    return m_workers.size();
}

Ipv4Address
PsJob::GetServerAddress(uint32_t shard) const
{
    NS_LOG_FUNCTION(this << shard);
    return m_serverAddresses.at(shard);
}

int32_t
PsJob::GetWorkerRank(Ipv4Address address) const
{
    NS_LOG_FUNCTION(this << address);
    auto it = std::find(m_workerAddresses.begin(), m_workerAddresses.end(), address);
    return it == m_workerAddresses.end() ? -1 : int32_t(it - m_workerAddresses.begin());
}

Ptr<PsWorker>
PsJob::GetWorker(uint32_t rank) const
{
    NS_LOG_FUNCTION(this << rank);
    return m_workers.at(rank);
}

Ptr<PsServer>
PsJob::GetServer(uint32_t shard) const
{
    NS_LOG_FUNCTION(this << shard);
    return m_servers.at(shard);
}

// ------------------------------------------------------------------ records

void
PsJob::DoIterationStart(uint32_t worker,
                        uint64_t iteration,
                        const TrainingRecords::IterationRow* row)
{
    NS_LOG_FUNCTION(this << worker << iteration << row);
    if (row)
    {
        const Time duration = NanoSeconds(row->endNs - row->startNs);
        if (worker == 0)
        {
            // adaptive policies (autobyte) decide on the job's iteration times
            for (auto& s : m_schedulers)
            {
                s->NotifyIterationDone(row->iteration, duration);
            }
        }
    }
    if (worker != 0 || m_schedulers.empty())
    {
        return;
    }
    // the state this iteration runs with, when it changed (or is the first)
    const std::string state = m_schedulers[0]->GetState();
    if (!state.empty() && (m_schedulerStates.empty() || m_schedulerStates.back().second != state))
    {
        m_schedulerStates.emplace_back(iteration, state);
    }
}

uint64_t
PsJob::NotifyChunkSent(uint32_t worker, uint32_t shard, bool push, const PsChunk& chunk,
                       bool local)
{
    NS_LOG_FUNCTION(this << worker << shard << push << local);
    m_transfers.push_back(
        {worker, shard, push, local, chunk, Simulator::Now().GetNanoSeconds(), -1});
    return m_transfers.size() - 1;
}

void
PsJob::NotifyChunkDelivered(uint64_t row)
{
    NS_LOG_FUNCTION(this << row);
    TransferRow& r = m_transfers.at(row);
    r.endNs = Simulator::Now().GetNanoSeconds();
    m_transferTrace(r.worker,
                    r.shard,
                    r.push,
                    r.chunk,
                    r.local,
                    NanoSeconds(r.startNs),
                    NanoSeconds(r.endNs));
}

void
PsJob::NotifyTensorAggregated(uint64_t iteration, uint32_t)
{
    NS_LOG_FUNCTION(this << iteration);
    if (!m_pullBarrier || ++m_aggregatedTensors[iteration] < m_bytes.size())
    {
        return;
    }
    m_aggregatedTensors.erase(iteration);
    for (auto& server : m_servers)
    {
        server->ReleasePulls(iteration);
    }
}

// ------------------------------------------------------------------ results

uint32_t
PsJob::GetNConnectedWorkers() const
{
    NS_LOG_FUNCTION(this);
    uint32_t n = 0;
    for (const auto& w : m_workers)
    {
        n += w->IsConnected();
    }
    return n;
}

std::string
PsJob::TransfersCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "job,worker,shard,direction,iteration,buffer,layers,offset,bytes,tos,local,start_ns,"
          "end_ns\n";
    for (const auto& r : m_transfers)
    {
        os << m_jobId << ',' << r.worker << ',' << r.shard << ',' << (r.push ? "push" : "pull")
           << ',' << r.chunk.iteration << ',' << r.chunk.tensor << ',' << r.chunk.tensor << ','
           << r.chunk.offset << ',' << r.chunk.bytes << ',' << unsigned(r.chunk.tos) << ','
           << (r.local ? 1 : 0) << ',' << r.startNs << ',' << r.endNs << '\n';
    }
    return os.str();
}

std::string
PsJob::TensorsCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "tensor,bytes,shard,tos\n";
    for (uint32_t t = 0; t < m_bytes.size(); ++t)
    {
        os << t << ',' << m_bytes[t] << ',' << m_shard[t] << ',' << unsigned(GetLayerTos(t))
           << '\n';
    }
    return os.str();
}

std::string
PsJob::SchedulerCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "iteration,state\n";
    for (const auto& [iteration, state] : m_schedulerStates)
    {
        os << iteration << ',' << state << '\n';
    }
    return os.str();
}

} // namespace ns3
