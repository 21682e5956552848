#include "autobyte-scheduler.h"

#include "ns3/abort.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <cmath>
#include <numeric>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("AutoByteScheduler");

NS_OBJECT_ENSURE_REGISTERED(AutoByteScheduler);

TypeId
AutoByteScheduler::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::AutoByteScheduler")
            .SetParent<ByteScheduler>()
            .SetGroupName("Ddnn")
            .AddConstructor<AutoByteScheduler>()
            .AddAttribute("Candidates",
                          "Grid of partition:credit byte pairs, comma separated; the first is "
                          "used first.",
                          StringValue("160000:160000,1000000:1000000,"
                                      "160000:640000,4000000:8000000"),
                          MakeStringAccessor(&AutoByteScheduler::SetCandidates,
                                             &AutoByteScheduler::GetCandidatesText),
                          MakeStringChecker())
            .AddAttribute("Interval",
                          "Iterations between two decisions.",
                          UintegerValue(10),
                          MakeUintegerAccessor(&AutoByteScheduler::m_interval),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("MinGain",
                          "Relative iteration-time gain a switch must promise.",
                          DoubleValue(0.05),
                          MakeDoubleAccessor(&AutoByteScheduler::m_minGain),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("Retune",
                          "Relative change of the current candidate's interval mean that "
                          "starts the search again (conditions changed); 0 = never.",
                          DoubleValue(0.2),
                          MakeDoubleAccessor(&AutoByteScheduler::m_retune),
                          MakeDoubleChecker<double>(0))
            .AddTraceSource("ConfigChanged",
                            "A new (partition, credit) is used from `iteration` on.",
                            MakeTraceSourceAccessor(&AutoByteScheduler::m_configTrace),
                            "ns3::AutoByteScheduler::ConfigCallback");
    return tid;
}

AutoByteScheduler::AutoByteScheduler()
    : m_current(0),
      m_interval(10),
      m_minGain(0.05),
      m_retune(0.2)
{
    NS_LOG_FUNCTION(this);
    SetCandidates("160000:160000");
}

void
AutoByteScheduler::SetCandidates(std::string text)
{
    NS_LOG_FUNCTION(this << text);
    m_candidates.clear();
    std::istringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
    {
        const auto colon = item.find(':');
        NS_ABORT_MSG_IF(colon == std::string::npos,
                        "AutoByteScheduler: Candidates entry '" << item
                                                                << "' is not partition:credit");
        m_candidates.emplace_back(std::stoull(item.substr(0, colon)),
                                  std::stoull(item.substr(colon + 1)));
    }
    NS_ABORT_MSG_IF(m_candidates.empty(), "AutoByteScheduler: no Candidates");
    m_measuredMs.assign(m_candidates.size(), -1);
    m_current = 0;
}

uint64_t
AutoByteScheduler::GetChunkBytes() const
{
    NS_LOG_FUNCTION(this);
    return m_candidates[m_current].first;
}

uint64_t
AutoByteScheduler::GetCreditBytes() const
{
    NS_LOG_FUNCTION(this);
    return m_candidates[m_current].second;
}

std::string
AutoByteScheduler::GetCandidatesText() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    for (size_t i = 0; i < m_candidates.size(); ++i)
    {
        os << (i ? "," : "") << m_candidates[i].first << ':' << m_candidates[i].second;
    }
    return os.str();
}

void
AutoByteScheduler::Validate() const
{
    NS_LOG_FUNCTION(this);
    for (const auto& [partition, credit] : m_candidates)
    {
        NS_ABORT_MSG_IF(partition == 0, "AutoByteScheduler: a candidate partition is 0");
        NS_ABORT_MSG_IF(credit < partition,
                        "AutoByteScheduler: candidate credit " << credit
                                                               << " is smaller than its "
                                                                  "partition "
                                                               << partition);
    }
}

void
AutoByteScheduler::Use(size_t candidate, uint64_t iteration)
{
    NS_LOG_FUNCTION(this << candidate << iteration);
    if (candidate == m_current)
    {
        return;
    }
    m_current = candidate;
    NS_LOG_INFO("from iteration " << iteration << ": partition " << GetChunkBytes() << " credit "
                                  << GetCreditBytes());
    m_configTrace(iteration, GetChunkBytes(), GetCreditBytes());
}

void
AutoByteScheduler::NotifyIterationDone(uint64_t iteration, Time duration)
{
    NS_LOG_FUNCTION(this << iteration << duration);
    m_window.push_back(duration.GetSeconds() * 1e3);
    if (m_window.size() < m_interval)
    {
        return;
    }
    const double mean =
        std::accumulate(m_window.begin(), m_window.end(), 0.0) / double(m_window.size());
    m_window.clear();
    const double previous = m_measuredMs[m_current];
    m_measuredMs[m_current] = mean;
    if (m_retune > 0 && previous > 0 && std::abs(mean / previous - 1) > m_retune)
    {
        NS_LOG_INFO("iteration " << iteration << ": " << previous << " -> " << mean
                                 << " ms, searching again");
        for (size_t i = 0; i < m_candidates.size(); ++i)
        {
            if (i != m_current)
            {
                m_measuredMs[i] = -1; // measured under other conditions
            }
        }
    }
    for (size_t i = 0; i < m_candidates.size(); ++i)
    {
        if (m_measuredMs[i] < 0)
        {
            Use(i, iteration + 1); // exploration: every candidate runs one interval
            return;
        }
    }
    size_t best = m_current;
    for (size_t i = 0; i < m_candidates.size(); ++i)
    {
        if (m_measuredMs[i] < m_measuredMs[best])
        {
            best = i;
        }
    }
    if (m_measuredMs[best] <= m_measuredMs[m_current] * (1 - m_minGain))
    {
        Use(best, iteration + 1);
    }
}

std::string
AutoByteScheduler::GetState() const
{
    NS_LOG_FUNCTION(this);
    return "partition=" + std::to_string(GetChunkBytes()) +
           ";credit=" + std::to_string(GetCreditBytes());
}

} // namespace ns3
