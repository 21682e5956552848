#include "training-worker.h"

#include "ns3/abort.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TrainingWorker");

NS_OBJECT_ENSURE_REGISTERED(TrainingWorker);

TypeId
TrainingWorker::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::TrainingWorker").SetParent<Application>().SetGroupName("Ddnn");
    return tid;
}

TrainingWorker::TrainingWorker()
    : m_rank(0),
      m_running(false)
{
    NS_LOG_FUNCTION(this);
}

void
TrainingWorker::SetupWorker(Ptr<TrainingJob> job, uint32_t rank)
{
    NS_LOG_FUNCTION(this << job << rank);
    m_trainingJob = job;
    m_rank = rank;
}

void
TrainingWorker::SetSlowdowns(const std::vector<LayerCompute::Slowdown>& slowdowns)
{
    NS_LOG_FUNCTION(this);
    m_compute.SetSlowdowns(slowdowns);
}

void
TrainingWorker::SetComputeFactors(const std::vector<double>& factors)
{
    NS_LOG_FUNCTION(this << factors);
    m_compute.SetIterationFactors(factors);
}

uint32_t
TrainingWorker::GetRank() const
{
    NS_LOG_FUNCTION(this);
    return m_rank;
}

uint64_t
TrainingWorker::GetIteration() const
{
    NS_LOG_FUNCTION(this);
    return m_compute.GetIteration();
}

void
TrainingWorker::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_running = false;
    m_compute.Stop();
    m_trainingJob = nullptr;
    Application::DoDispose();
}

void
TrainingWorker::StartApplication()
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(!m_trainingJob,
                    GetInstanceTypeId().GetName() << ": Setup() before the application starts");
    std::vector<Time> forward;
    std::vector<Time> backward;
    for (uint32_t i = 0; i < m_trainingJob->GetNLayers(); ++i)
    {
        forward.push_back(m_trainingJob->GetForwardTime(i));
        backward.push_back(m_trainingJob->GetBackwardTime(i));
    }
    m_compute.Setup(forward,
                    backward,
                    m_trainingJob->GetBarrier(),
                    MakeCallback(&TrainingWorker::IterationStarted, this),
                    MakeCallback(&TrainingWorker::ComputeDone, this),
                    MakeCallback(&TrainingWorker::GradientsReady, this));
    m_running = true;
    StartCommunication();
    m_compute.Start();
}

void
TrainingWorker::StopApplication()
{
    NS_LOG_FUNCTION(this);
    // Compute stops; the connections are left as they are (a close would
    // look like a failure to the peers that are still running).
    m_running = false;
    m_compute.Stop();
    StopCommunication();
}

void
TrainingWorker::StopCommunication()
{
    NS_LOG_FUNCTION(this);
}

void
TrainingWorker::IterationStarted(uint64_t iteration)
{
    NS_LOG_FUNCTION(this << iteration);
    m_trainingJob->NotifyIterationStart(m_rank, iteration);
}

void
TrainingWorker::ComputeDone(uint64_t iteration, uint32_t layer, bool backward, Time start)
{
    NS_LOG_FUNCTION(this << iteration << layer << backward << start);
    m_trainingJob->NotifyComputeDone(m_rank, iteration, layer, backward, start);
}

void
TrainingWorker::Error(const std::string& what)
{
    NS_LOG_FUNCTION(this << what);
    if (m_trainingJob)
    {
        m_trainingJob->NotifyError("worker " + std::to_string(m_rank), what);
    }
}

} // namespace ns3
