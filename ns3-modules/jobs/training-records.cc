#include "training-records.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TrainingRecords");

void
TrainingRecords::AddWorker(uint32_t worker)
{
    NS_LOG_FUNCTION(this << worker);
    if (m_openStartNs.size() <= worker)
    {
        m_openStartNs.resize(worker + 1, 0);
        m_openIteration.resize(worker + 1, -1);
    }
}

const TrainingRecords::IterationRow*
TrainingRecords::IterationStart(uint32_t worker, uint64_t iteration)
{
    NS_LOG_FUNCTION(this << worker << iteration);
    const int64_t now = Simulator::Now().GetNanoSeconds();
    const IterationRow* done = nullptr;
    if (m_openIteration.at(worker) >= 0)
    {
        m_iterations.push_back(
            IterationRow{worker, uint64_t(m_openIteration[worker]), m_openStartNs[worker], now});
        done = &m_iterations.back();
        if (m_targetCount && m_targetReachedNs < 0 && done->startNs >= m_targetSinceNs)
        {
            m_counted.resize(m_openIteration.size(), 0);
            m_counted[worker]++;
            if (*std::min_element(m_counted.begin(), m_counted.end()) >= m_targetCount)
            {
                m_targetReachedNs = now;
                Simulator::Schedule(m_targetStopDelay, &TrainingRecords::StopNow, this);
                if (!m_targetReached.IsNull())
                {
                    m_targetReached();
                }
            }
        }
    }
    m_openIteration[worker] = int64_t(iteration);
    m_openStartNs[worker] = now;
    return done;
}

void
TrainingRecords::SetTarget(uint64_t count, Time since, Time stopDelay, Callback<void> reached)
{
    NS_LOG_FUNCTION(this << count << since << stopDelay);
    m_targetReached = reached;
    m_targetCount = count;
    m_targetSinceNs = since.GetNanoSeconds();
    m_targetStopDelay = stopDelay;
    m_counted.assign(m_openIteration.size(), 0);
    m_targetReachedNs = -1;
}

int64_t
TrainingRecords::GetTargetReachedNs() const
{
    NS_LOG_FUNCTION(this);
    return m_targetReachedNs;
}

bool
TrainingRecords::HasStopped() const
{
    NS_LOG_FUNCTION(this);
    return m_stopped;
}

void
TrainingRecords::StopNow()
{
    NS_LOG_FUNCTION(this);
    m_stopped = true;
    Simulator::Stop();
}

void
TrainingRecords::ComputeDone(uint32_t worker,
                             uint64_t iteration,
                             uint32_t layer,
                             bool backward,
                             Time start)
{
    NS_LOG_FUNCTION(this << worker << iteration << layer << backward << start);
    m_compute.push_back(ComputeRow{worker,
                                   iteration,
                                   layer,
                                   backward,
                                   start.GetNanoSeconds(),
                                   Simulator::Now().GetNanoSeconds()});
}

void
TrainingRecords::Error(const std::string& who, const std::string& what)
{
    NS_LOG_FUNCTION(this << who << what);
    m_nErrors++;
    std::ostringstream os;
    os << Simulator::Now().GetNanoSeconds() << " ns " << who << ": " << what << '\n';
    m_errors += os.str();
}

uint64_t
TrainingRecords::GetNIterations() const
{
    NS_LOG_FUNCTION(this);
    return m_iterations.size();
}

uint64_t
TrainingRecords::GetNErrors() const
{
    NS_LOG_FUNCTION(this);
    return m_nErrors;
}

std::string
TrainingRecords::GetErrors() const
{
    NS_LOG_FUNCTION(this);
    return m_errors;
}

std::string
TrainingRecords::IterationsCsv(uint32_t jobId) const
{
    NS_LOG_FUNCTION(this << jobId);
    std::ostringstream os;
    os << "job,worker,iteration,start_ns,end_ns\n";
    for (const auto& r : m_iterations)
    {
        os << jobId << ',' << r.worker << ',' << r.iteration << ',' << r.startNs << ','
           << r.endNs << '\n';
    }
    return os.str();
}

std::string
TrainingRecords::ComputeCsv(uint32_t jobId) const
{
    NS_LOG_FUNCTION(this << jobId);
    std::ostringstream os;
    os << "job,worker,iteration,layer,phase,start_ns,end_ns\n";
    for (const auto& r : m_compute)
    {
        os << jobId << ',' << r.worker << ',' << r.iteration << ',' << r.layer << ','
           << (r.backward ? "bp" : "fp") << ',' << r.startNs << ',' << r.endNs << '\n';
    }
    return os.str();
}

} // namespace ns3
