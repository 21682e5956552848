#include "training-job.h"

#include "transport-socket.h"

#include "ns3/tcp-socket-factory.h"
#include "ns3/type-id.h"

#include "comm-scheduler.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/integer.h"
#include "ns3/log.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TrainingJob");

NS_OBJECT_ENSURE_REGISTERED(TrainingJob);

TypeId
TrainingJob::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::TrainingJob")
            .SetParent<Object>()
            .SetGroupName("Ddnn")
            .AddAttribute("JobId",
                          "Job number, the 'job' column of the tables.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&TrainingJob::m_jobId),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Port",
                          "TCP port of the job: a ring worker listens on it for its left "
                          "neighbour; a shard listens on Port + class index.",
                          UintegerValue(5000),
                          MakeUintegerAccessor(&TrainingJob::m_port),
                          MakeUintegerChecker<uint16_t>(1))
            .AddAttribute("Barrier",
                          "Forward of layer 0 waits until ALL layers of the previous "
                          "iteration are synchronised.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&TrainingJob::m_barrier),
                          MakeBooleanChecker())
            .AddAttribute("DeadlineTos",
                          "Class (IP ToS) a transfer is raised to when its slack (time "
                          "until the forward pass needs it minus its transfer time at "
                          "LinkBps) runs out; -1 = off. A ring raises a fused buffer "
                          "waiting for the ring or being allreduced; a parameter-server "
                          "job a transfer not yet sent.",
                          IntegerValue(-1),
                          MakeIntegerAccessor(&TrainingJob::m_deadlineTos),
                          MakeIntegerChecker<int32_t>(-1, 255))
            .AddAttribute("LinkBps",
                          "Link rate for the deadline-aware class's transfer-time estimates.",
                          UintegerValue(10000000000ULL),
                          MakeUintegerAccessor(&TrainingJob::m_linkBps),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("Transport",
                          "The socket factory the job's gradients travel over: "
                          "ns3::TcpSocketFactory (the harness's TCP) or "
                          "ns3::RdmaSocketFactory (RDMA queue pairs, RoCEv2)",
                          TypeIdValue(TcpSocketFactory::GetTypeId()),
                          MakeTypeIdAccessor(&TrainingJob::m_transport),
                          MakeTypeIdChecker())
            .AddTraceSource("IterationCompleted",
                            "A worker completed an iteration: (worker, iteration, duration).",
                            MakeTraceSourceAccessor(&TrainingJob::m_iterationTrace),
                            "ns3::TrainingJob::IterationCallback");
    return tid;
}

TrainingJob::TrainingJob()
    : m_jobId(0),
      m_port(5000),
      m_barrier(false),
      m_deadlineTos(-1),
      m_linkBps(10000000000ULL)
{
    NS_LOG_FUNCTION(this);
}

Ptr<Socket>
TrainingJob::CreateSocket(Ptr<Node> node) const
{
    return CreateTransportSocket(node, m_transport);
}

TypeId
TrainingJob::GetTransport() const
{
    return m_transport;
}

void
TrainingJob::CheckDescribable(const char*) const
{
    NS_LOG_FUNCTION(this);
}

void
TrainingJob::SetLayers(const std::vector<uint64_t>& bytes,
                       const std::vector<int64_t>& fpNs,
                       const std::vector<int64_t>& bpNs)
{
    NS_LOG_FUNCTION(this << bytes << fpNs << bpNs);
    CheckDescribable("SetLayers");
    NS_ABORT_MSG_IF(bytes.empty(), "TrainingJob::SetLayers: no layers");
    NS_ABORT_MSG_IF(bytes.size() != fpNs.size() || bytes.size() != bpNs.size(),
                    "TrainingJob::SetLayers: bytes, fpNs and bpNs must have the same length (got "
                        << bytes.size() << ", " << fpNs.size() << ", " << bpNs.size() << ")");
    for (size_t i = 0; i < bytes.size(); ++i)
    {
        NS_ABORT_MSG_IF(bytes[i] == 0, "layer " << i << ": bytes must be > 0");
        NS_ABORT_MSG_IF(fpNs[i] < 0 || bpNs[i] < 0,
                        "layer " << i << ": compute times must be >= 0");
    }
    m_bytes = bytes;
    m_fpNs = fpNs;
    m_bpNs = bpNs;
    m_tos.assign(bytes.size(), 0);
}

void
TrainingJob::SetLayerClasses(const std::vector<uint32_t>& tos)
{
    NS_LOG_FUNCTION(this << tos);
    CheckDescribable("SetLayerClasses");
    NS_ABORT_MSG_IF(tos.size() != m_bytes.size(),
                    "TrainingJob::SetLayerClasses: " << tos.size() << " classes for "
                                                     << m_bytes.size()
                                                     << " layers (set the layers first)");
    for (size_t i = 0; i < tos.size(); ++i)
    {
        NS_ABORT_MSG_IF(tos[i] > 255, "layer " << i << ": ToS " << tos[i] << " is not a byte");
    }
    m_tos.assign(tos.begin(), tos.end());
}

uint32_t
TrainingJob::GetNLayers() const
{
    NS_LOG_FUNCTION(this);
    return m_bytes.size();
}

uint64_t
TrainingJob::GetLayerBytes(uint32_t layer) const
{
    NS_LOG_FUNCTION(this << layer);
    return m_bytes.at(layer);
}

Time
TrainingJob::GetForwardTime(uint32_t layer) const
{
    NS_LOG_FUNCTION(this << layer);
    return NanoSeconds(m_fpNs.at(layer));
}

Time
TrainingJob::GetBackwardTime(uint32_t layer) const
{
    NS_LOG_FUNCTION(this << layer);
    return NanoSeconds(m_bpNs.at(layer));
}

uint8_t
TrainingJob::GetLayerTos(uint32_t layer) const
{
    NS_LOG_FUNCTION(this << layer);
    return m_tos.at(layer);
}

uint16_t
TrainingJob::GetPort() const
{
    NS_LOG_FUNCTION(this);
    return m_port;
}

bool
TrainingJob::GetBarrier() const
{
    NS_LOG_FUNCTION(this);
    return m_barrier;
}

int32_t
TrainingJob::GetDeadlineTos() const
{
    NS_LOG_FUNCTION(this);
    return m_deadlineTos;
}

uint64_t
TrainingJob::GetLinkBps() const
{
    NS_LOG_FUNCTION(this);
    return m_linkBps;
}

Time
TrainingJob::GetTimeUntilNeeded(uint32_t layer) const
{
    NS_LOG_FUNCTION(this << layer);
    NS_ABORT_MSG_IF(layer >= GetNLayers(), "TrainingJob: no layer " << layer);
    // after backward of `layer`: backward of layer-1..0, then forward of 0..layer-1
    Time sum(0);
    for (uint32_t i = 0; i < layer; ++i)
    {
        sum += GetForwardTime(i) + GetBackwardTime(i);
    }
    return sum;
}

std::vector<uint32_t>
TrainingJob::GetShardTensors(uint32_t shard) const
{
    NS_LOG_FUNCTION(this << shard);
    std::vector<uint32_t> out(GetNLayers());
    for (uint32_t layer = 0; layer < out.size(); ++layer)
    {
        out[layer] = layer;
    }
    return out;
}

ObjectFactory
TrainingJob::SchedulerFactory(const std::string& typeId,
                              const std::vector<std::string>& attributes,
                              const std::string& who)
{
    NS_LOG_FUNCTION(typeId << attributes << who);
    TypeId tid;
    NS_ABORT_MSG_IF(!TypeId::LookupByNameFailSafe(typeId, &tid) ||
                        !tid.IsChildOf(CommScheduler::GetTypeId()),
                    who << ": " << typeId << " is not a CommScheduler");
    ObjectFactory factory(typeId);
    for (const auto& attribute : attributes)
    {
        const auto eq = attribute.find('=');
        NS_ABORT_MSG_IF(eq == std::string::npos,
                        who << ": attribute '" << attribute << "' is not Name=Value");
        factory.Set(attribute.substr(0, eq), StringValue(attribute.substr(eq + 1)));
    }
    // fail now, not in the middle of the run
    Ptr<CommScheduler> probe = factory.Create<CommScheduler>();
    probe->Validate();
    return factory;
}

// ------------------------------------------------------------------ records

void
TrainingJob::NotifyIterationStart(uint32_t worker, uint64_t iteration)
{
    NS_LOG_FUNCTION(this << worker << iteration);
    NS_ABORT_MSG_IF(worker >= GetNWorkers(), "TrainingJob: no worker " << worker);
    const auto* row = m_records.IterationStart(worker, iteration);
    if (row)
    {
        m_iterationTrace(worker, row->iteration, NanoSeconds(row->endNs - row->startNs));
    }
    DoIterationStart(worker, iteration, row);
}

void
TrainingJob::DoIterationStart(uint32_t, uint64_t, const TrainingRecords::IterationRow*)
{
    NS_LOG_FUNCTION(this);
}

void
TrainingJob::NotifyComputeDone(uint32_t worker,
                               uint64_t iteration,
                               uint32_t layer,
                               bool backward,
                               Time start)
{
    NS_LOG_FUNCTION(this << worker << iteration << layer << backward << start);
    NS_ABORT_MSG_IF(worker >= GetNWorkers(), "TrainingJob: no worker " << worker);
    m_records.ComputeDone(worker, iteration, layer, backward, start);
}

void
TrainingJob::NotifyError(const std::string& who, const std::string& what)
{
    NS_LOG_FUNCTION(this << who << what);
    m_records.Error(who, what);
    NS_LOG_WARN("job " << m_jobId << " " << who << ": " << what);
}

// ------------------------------------------------------------------ results

uint64_t
TrainingJob::GetNIterations() const
{
    NS_LOG_FUNCTION(this);
    return m_records.GetNIterations();
}

void
TrainingJob::SetMeasurementTarget(uint64_t count,
                                  Time since,
                                  Time stopDelay,
                                  Callback<void> reached)
{
    NS_LOG_FUNCTION(this << count << since << stopDelay);
    m_records.SetTarget(count, since, stopDelay, reached);
}

int64_t
TrainingJob::GetTargetReachedNs() const
{
    NS_LOG_FUNCTION(this);
    return m_records.GetTargetReachedNs();
}

bool
TrainingJob::HasStoppedAtTarget() const
{
    NS_LOG_FUNCTION(this);
    return m_records.HasStopped();
}

uint64_t
TrainingJob::GetNErrors() const
{
    NS_LOG_FUNCTION(this);
    return m_records.GetNErrors();
}

std::string
TrainingJob::GetErrors() const
{
    NS_LOG_FUNCTION(this);
    return m_records.GetErrors();
}

std::string
TrainingJob::IterationsCsv() const
{
    NS_LOG_FUNCTION(this);
    return m_records.IterationsCsv(m_jobId);
}

std::string
TrainingJob::ComputeCsv() const
{
    NS_LOG_FUNCTION(this);
    return m_records.ComputeCsv(m_jobId);
}

} // namespace ns3
