#include "dcqcn.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("Dcqcn");

NS_OBJECT_ENSURE_REGISTERED(Dcqcn);

TypeId
Dcqcn::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::Dcqcn")
            .SetParent<RdmaRateControl>()
            .SetGroupName("Ddnn")
            .AddConstructor<Dcqcn>()
            .AddAttribute("G",
                          "g: the weight of a CNP in alpha (paper: 1/256)",
                          DoubleValue(1.0 / 256),
                          MakeDoubleAccessor(&Dcqcn::m_g),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("InitialAlpha",
                          "alpha before the first CNP (paper: 1)",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&Dcqcn::m_initialAlpha),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("AlphaPeriod",
                          "alpha decays by (1 - g) each period without a CNP (paper: 55 us)",
                          TimeValue(MicroSeconds(55)),
                          MakeTimeAccessor(&Dcqcn::m_alphaPeriod),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("RateIncreasePeriod",
                          "T: the increase timer's period (paper: 55 us)",
                          TimeValue(MicroSeconds(55)),
                          MakeTimeAccessor(&Dcqcn::m_increasePeriod),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("ByteCounter",
                          "B: an increase event every this many bytes sent (paper: 10 MB)",
                          UintegerValue(10000000),
                          MakeUintegerAccessor(&Dcqcn::m_byteCounter),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("F",
                          "F: increase events of fast recovery before additive increase "
                          "(paper: 5)",
                          UintegerValue(5),
                          MakeUintegerAccessor(&Dcqcn::m_f),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("AdditiveIncrease",
                          "R_AI: the target's step in additive increase (paper: 40 Mb/s)",
                          DataRateValue(DataRate("40Mbps")),
                          MakeDataRateAccessor(&Dcqcn::m_additive),
                          MakeDataRateChecker())
            .AddAttribute("HyperIncrease",
                          "R_HAI: the target's step in hyper increase, times the events "
                          "past F",
                          DataRateValue(DataRate("200Mbps")),
                          MakeDataRateAccessor(&Dcqcn::m_hyper),
                          MakeDataRateChecker())
            .AddAttribute("MinRate",
                          "The rate is never cut below this",
                          DataRateValue(DataRate("1Mbps")),
                          MakeDataRateAccessor(&Dcqcn::m_minRate),
                          MakeDataRateChecker())
            .AddTraceSource("Rate",
                            "The current rate RC, bit/s",
                            MakeTraceSourceAccessor(&Dcqcn::m_rc),
                            "ns3::TracedValueCallback::Double");
    return tid;
}

Dcqcn::Dcqcn()
    : m_g(1.0 / 256),
      m_alphaPeriod(MicroSeconds(55)),
      m_increasePeriod(MicroSeconds(55)),
      m_byteCounter(10000000),
      m_f(5),
      m_additive("40Mbps"),
      m_hyper("200Mbps"),
      m_minRate("1Mbps"),
      m_initialAlpha(1.0)
{
    NS_LOG_FUNCTION(this);
}

Dcqcn::~Dcqcn() = default;

void
Dcqcn::Start(DataRate lineRate)
{
    NS_LOG_FUNCTION(this << lineRate);
    m_line = lineRate;
    m_rc = lineRate.GetBitRate();
    m_rt = m_rc.Get();
    m_alpha = m_initialAlpha;
    m_alphaSince = Simulator::Now();
    m_timerSince = Simulator::Now();
}

double
Dcqcn::GetAlpha()
{
    uint64_t periods = (Simulator::Now() - m_alphaSince).GetTimeStep() /
                       m_alphaPeriod.GetTimeStep();
    return m_alpha * std::pow(1.0 - m_g, double(periods));
}

void
Dcqcn::OnCongestionNotification()
{
    NS_LOG_FUNCTION(this);
    Advance();
    // the alpha timer restarts at each CNP: apply its expiries since the last one
    m_alpha = (1.0 - m_g) * GetAlpha() + m_g;
    m_alphaSince = Simulator::Now();
    m_rt = m_rc.Get();
    m_rc = std::max<double>(m_rc.Get() * (1.0 - m_alpha / 2.0), m_minRate.GetBitRate());
    m_timerSince = Simulator::Now();
    m_timerEvents = 0;
    m_byteEvents = 0;
    m_bytes = 0;
    m_cut = true;
    ++m_cuts;
}

void
Dcqcn::OnSent(uint32_t bytes)
{
    Advance();
    if (!m_cut || m_rc.Get() >= m_line.GetBitRate())
    {
        return;
    }
    m_bytes += bytes;
    while (m_bytes >= m_byteCounter)
    {
        m_bytes -= m_byteCounter;
        ++m_byteEvents;
        Increase();
    }
}

DataRate
Dcqcn::GetRate()
{
    Advance();
    return DataRate(static_cast<uint64_t>(m_rc.Get()));
}

uint64_t
Dcqcn::GetRateCuts() const
{
    return m_cuts;
}

void
Dcqcn::Advance()
{
    Time now = Simulator::Now();
    if (!m_cut || m_rc.Get() >= m_line.GetBitRate())
    {
        m_timerSince = now; // no increase pending: the timer idles
        return;
    }
    while (m_timerSince + m_increasePeriod <= now && m_rc.Get() < m_line.GetBitRate())
    {
        m_timerSince += m_increasePeriod;
        ++m_timerEvents;
        Increase();
    }
}

void
Dcqcn::Increase()
{
    uint32_t most = std::max(m_timerEvents, m_byteEvents);
    uint32_t least = std::min(m_timerEvents, m_byteEvents);
    if (most < m_f)
    {
        // fast recovery: toward the rate before the cut
    }
    else if (least > m_f)
    {
        m_rt += double(least - m_f) * m_hyper.GetBitRate();
    }
    else
    {
        m_rt += m_additive.GetBitRate();
    }
    double line = m_line.GetBitRate();
    m_rt = std::min(m_rt, line);
    m_rc = std::min((m_rt + m_rc.Get()) / 2.0, line);
    if (m_rt >= line && m_rc.Get() > line * (1.0 - 1e-3))
    {
        m_rc = line; // recovered: (RT + RC) / 2 would only approach it
    }
}

} // namespace ns3
