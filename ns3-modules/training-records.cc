#include "training-records.h"

#include "ns3/simulator.h"

#include <sstream>

namespace ns3
{

void
TrainingRecords::AddWorker(uint32_t worker)
{
    if (m_openStartNs.size() <= worker)
    {
        m_openStartNs.resize(worker + 1, 0);
        m_openIteration.resize(worker + 1, -1);
    }
}

const TrainingRecords::IterationRow*
TrainingRecords::IterationStart(uint32_t worker, uint64_t iteration)
{
    const int64_t now = Simulator::Now().GetNanoSeconds();
    const IterationRow* done = nullptr;
    if (m_openIteration.at(worker) >= 0)
    {
        m_iterations.push_back(
            IterationRow{worker, uint64_t(m_openIteration[worker]), m_openStartNs[worker], now});
        done = &m_iterations.back();
    }
    m_openIteration[worker] = int64_t(iteration);
    m_openStartNs[worker] = now;
    return done;
}

void
TrainingRecords::ComputeDone(uint32_t worker,
                             uint64_t iteration,
                             uint32_t layer,
                             bool backward,
                             Time start)
{
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
    m_nErrors++;
    std::ostringstream os;
    os << Simulator::Now().GetNanoSeconds() << " ns " << who << ": " << what << '\n';
    m_errors += os.str();
}

uint64_t
TrainingRecords::GetNIterations() const
{
    return m_iterations.size();
}

uint64_t
TrainingRecords::GetNErrors() const
{
    return m_nErrors;
}

std::string
TrainingRecords::GetErrors() const
{
    return m_errors;
}

std::string
TrainingRecords::IterationsCsv(uint32_t jobId) const
{
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
