#include "queue-sampler.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("QueueSampler");

NS_OBJECT_ENSURE_REGISTERED(QueueSampler);

TypeId
QueueSampler::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::QueueSampler")
            .SetParent<Object>()
            .SetGroupName("Ddnn")
            .AddConstructor<QueueSampler>()
            .AddAttribute("Interval",
                          "Time between two samples.",
                          TimeValue(MicroSeconds(10)),
                          MakeTimeAccessor(&QueueSampler::m_interval),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("Start",
                          "When the first sample is taken.",
                          TimeValue(Seconds(0)),
                          MakeTimeAccessor(&QueueSampler::m_start),
                          MakeTimeChecker(Seconds(0)))
            .AddAttribute("Stop",
                          "No sample is taken after this time.",
                          TimeValue(Time::Max()),
                          MakeTimeAccessor(&QueueSampler::m_stop),
                          MakeTimeChecker(Seconds(0)))
            .AddTraceSource("Sample",
                            "A tracked band's backlog was read: (link, from node, to node, "
                            "band, packets).",
                            MakeTraceSourceAccessor(&QueueSampler::m_sampleTrace),
                            "ns3::QueueSampler::SampleCallback");
    return tid;
}

QueueSampler::QueueSampler()
    : m_interval(MicroSeconds(10)),
      m_start(Seconds(0)),
      m_stop(Time::Max())
{
    NS_LOG_FUNCTION(this);
}

void
QueueSampler::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_next.Cancel();
    m_tracked.clear();
    Object::DoDispose();
}

void
QueueSampler::Track(Ptr<QueueDisc> qdisc,
                    uint32_t link,
                    uint32_t fromNode,
                    uint32_t toNode,
                    const std::vector<uint32_t>& bands)
{
    NS_LOG_FUNCTION(this << qdisc << link << fromNode << toNode);
    NS_ABORT_MSG_IF(m_times.size(), "QueueSampler: Track after the first sample");
    NS_ABORT_MSG_IF(m_start > m_stop,
                    "QueueSampler: Start " << m_start.As(Time::US) << " after Stop "
                                           << m_stop.As(Time::US));
    if (m_tracked.empty())
    {
        // scheduled after the nodes' own initialisation at time 0: the
        // root's bands exist by the first sample
        Time at = std::max(m_start, Simulator::Now());
        m_next = Simulator::Schedule(at - Simulator::Now(), &QueueSampler::Sample, this);
    }
    m_tracked.push_back(Tracked{qdisc, link, fromNode, toNode, bands, bands.empty()});
}

void
QueueSampler::ResolveBands(Tracked& t) const
{
    NS_LOG_FUNCTION(this);
    const uint32_t n = t.qdisc->GetNQueueDiscClasses();
    NS_ABORT_MSG_IF(n == 0,
                    "QueueSampler: the queue disc of link " << t.link << " (" << t.fromNode
                                                            << " -> " << t.toNode
                                                            << ") has no bands");
    if (t.everyBand)
    {
        for (uint32_t b = 0; b < n; ++b)
        {
            t.bands.push_back(b);
        }
    }
    for (uint32_t b : t.bands)
    {
        NS_ABORT_MSG_IF(b >= n,
                        "QueueSampler: link " << t.link << " (" << t.fromNode << " -> "
                                              << t.toNode << ") has bands 0-" << n - 1
                                              << ", not " << b);
    }
}

void
QueueSampler::Sample()
{
    NS_LOG_FUNCTION(this);
    if (m_times.empty())
    {
        m_width = 0;
        for (Tracked& t : m_tracked)
        {
            ResolveBands(t);
            m_width += t.bands.size();
        }
    }
    m_times.push_back(Simulator::Now().GetNanoSeconds());
    for (const Tracked& t : m_tracked)
    {
        for (uint32_t b : t.bands)
        {
            Ptr<QueueDisc> band = t.qdisc->GetQueueDiscClass(b)->GetQueueDisc();
            const uint32_t packets = band->GetNPackets();
            m_packets.push_back(packets);
            m_bytes.push_back(band->GetNBytes());
            m_sampleTrace(t.link, t.fromNode, t.toNode, b, packets);
        }
    }
    Time next = Simulator::Now() + m_interval;
    if (next <= m_stop)
    {
        m_next = Simulator::Schedule(m_interval, &QueueSampler::Sample, this);
    }
}

uint32_t
QueueSampler::GetNSamples() const
{
    return m_times.size();
}

std::string
QueueSampler::ToCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "link,from_node,to_node,band,time_s,backlog_packets,backlog_bytes\n";
    os.precision(12);
    uint32_t column = 0;
    for (const Tracked& t : m_tracked)
    {
        for (uint32_t b : t.bands)
        {
            for (size_t i = 0; i < m_times.size(); ++i)
            {
                os << t.link << ',' << t.fromNode << ',' << t.toNode << ',' << b << ','
                   << double(m_times[i]) * 1e-9 << ',' << m_packets[i * m_width + column] << ','
                   << m_bytes[i * m_width + column] << '\n';
            }
            ++column;
        }
    }
    return os.str();
}

} // namespace ns3
