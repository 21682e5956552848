#include "flow-log.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowLog");

NS_OBJECT_ENSURE_REGISTERED(FlowLog);

TypeId
FlowLog::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FlowLog")
                            .SetParent<Object>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<FlowLog>()
                            .AddTraceSource("Completed",
                                            "A flow's last byte arrived: (flow id, size in bytes, start, "
                                            "FCT); one call per completed row of ToCsv().",
                                            MakeTraceSourceAccessor(&FlowLog::m_completedTrace),
                                            "ns3::FlowLog::CompletedCallback");
    return tid;
}

uint64_t
FlowLog::AddFlow(uint32_t srcNode,
                 uint32_t dstNode,
                 Ipv4Address dst,
                 uint64_t size,
                 uint8_t tos,
                 Time start)
{
    NS_LOG_FUNCTION(this << srcNode << dstNode << dst << size << static_cast<uint32_t>(tos) << start);
    NS_ABORT_MSG_IF(size == 0, "a flow needs at least one byte");
    Flow f;
    f.srcNode = srcNode;
    f.dstNode = dstNode;
    f.dst = dst;
    f.size = size;
    f.tos = tos;
    f.start = start;
    m_flows.push_back(f);
    return m_flows.size() - 1;
}

uint64_t
FlowLog::GetNFlows() const
{
    NS_LOG_FUNCTION(this);
    return m_flows.size();
}

uint64_t
FlowLog::GetNCompleted() const
{
    NS_LOG_FUNCTION(this);
    return m_completed;
}

uint64_t
FlowLog::GetNErrors() const
{
    NS_LOG_FUNCTION(this);
    return m_errors;
}

uint64_t
FlowLog::GetSize(uint64_t id) const
{
    NS_LOG_FUNCTION(this << id);
    return m_flows.at(id).size;
}

uint8_t
FlowLog::GetTos(uint64_t id) const
{
    NS_LOG_FUNCTION(this << id);
    return m_flows.at(id).tos;
}

Ipv4Address
FlowLog::GetDestination(uint64_t id) const
{
    NS_LOG_FUNCTION(this << id);
    return m_flows.at(id).dst;
}

Time
FlowLog::GetPlannedStart(uint64_t id) const
{
    NS_LOG_FUNCTION(this << id);
    return m_flows.at(id).start;
}

uint64_t
FlowLog::Key(Ipv4Address src, uint16_t port)
{
    NS_LOG_FUNCTION(src << port);
    return (uint64_t(src.Get()) << 16) | port;
}

void
FlowLog::NotifyStarted(uint64_t id, Ipv4Address src, uint16_t port)
{
    NS_LOG_FUNCTION(this << id << src << port);
    Flow& f = m_flows.at(id);
    f.started = true;
    f.start = Simulator::Now();
    m_connections[Key(src, port)] = id;
}

bool
FlowLog::ClaimConnection(Ipv4Address src, uint16_t port, uint64_t& id)
{
    NS_LOG_FUNCTION(this << src << port);
    auto it = m_connections.find(Key(src, port));
    if (it == m_connections.end())
    {
        return false;
    }
    id = it->second;
    // Ephemeral ports are reused later on; a claimed key must not linger.
    m_connections.erase(it);
    return true;
}

void
FlowLog::WatchSender(uint64_t id, Ptr<TcpSocketDdnn> socket)
{
    NS_LOG_FUNCTION(this << id << socket);
    if (!socket)
    {
        return;   // another socket type: no events of its own
    }
    socket->SetPeerReceived(MakeCallback(&FlowLog::GetReceived, this), id);
    m_senders[id] = socket;
}

void
FlowLog::SenderEnded(uint64_t id)
{
    NS_LOG_FUNCTION(this << id);
    auto it = m_senders.find(id);
    if (it != m_senders.end())
    {
        m_flows[id].loss = it->second->GetLossEvents();
        m_senders.erase(it);   // the socket is not kept alive past its flow
    }
}

uint64_t
FlowLog::GetReceived(uint64_t id) const
{
    return m_flows[id].received;
}

void
FlowLog::NotifyReceived(uint64_t id, uint64_t bytes)
{
    NS_LOG_FUNCTION(this << id << bytes);
    Flow& f = m_flows[id];
    f.received += bytes;
    if (!f.completed && f.received >= f.size)
    {
        f.completed = true;
        f.end = Simulator::Now();
        m_completed++;
        m_completedTrace(id, f.size, f.start, f.end - f.start);
        if (f.error.empty()) // else it ended at its error
        {
            FlowEnded(f);
        }
    }
}

void
FlowLog::NotifyError(uint64_t id, const std::string& what)
{
    NS_LOG_FUNCTION(this << id << what);
    Flow& f = m_flows.at(id);
    // A reset while closing, after the sink had every byte (e.g. a
    // retransmitted FIN reaching a socket the sink already closed; ns-3 calls
    // the error-close callback, errno 0), ends a complete flow: not an error.
    if (f.completed)
    {
        return;
    }
    if (f.error.empty())
    {
        m_errors++;
        f.error = what;
        FlowEnded(f);
    }
}

void
FlowLog::StopOnceDone(Time from, Time to)
{
    NS_LOG_FUNCTION(this << from << to);
    NS_ABORT_MSG_IF(Simulator::Now() < to, "StopOnceDone before its window's end");
    m_stopArmed = true;
    m_stopFrom = from;
    m_stopTo = to;
    m_stopPending = 0;
    for (const Flow& f : m_flows)
    {
        // a flow's start is its planned start until it starts, then the time it did
        m_stopPending += f.start >= from && f.start <= to && !f.completed && f.error.empty();
    }
    if (m_stopPending == 0)
    {
        m_stoppedOnceDone = true;
        Simulator::Stop();
    }
}

bool
FlowLog::HasStoppedOnceDone() const
{
    NS_LOG_FUNCTION(this);
    return m_stoppedOnceDone;
}

void
FlowLog::FlowEnded(const Flow& f)
{
    NS_LOG_FUNCTION(this);
    if (m_stopArmed && f.start >= m_stopFrom && f.start <= m_stopTo &&
        m_stopPending > 0 && --m_stopPending == 0)
    {
        m_stoppedOnceDone = true;
        Simulator::Stop();
    }
}

std::string
FlowLog::ToCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "id,src_node,dst_node,size,tos,start_ns,end_ns,received_bytes,timeouts,"
          "spurious_timeouts,timeout_wait_ns,fast_retransmits,error\n";
    for (uint64_t i = 0; i < m_flows.size(); ++i)
    {
        const Flow& f = m_flows[i];
        auto open = m_senders.find(i);   // still sending at the end: its events so far
        const TcpSocketDdnn::LossEvents& loss =
            open != m_senders.end() ? open->second->GetLossEvents() : f.loss;
        os << i << ',' << f.srcNode << ',' << f.dstNode << ',' << f.size << ',' << unsigned(f.tos)
           << ',' << f.start.GetNanoSeconds() << ','
           << (f.completed ? f.end.GetNanoSeconds() : int64_t(-1)) << ',' << f.received << ','
           << loss.timeouts << ',' << loss.spuriousTimeouts << ','
           << loss.timeoutWait.GetNanoSeconds() << ',' << loss.fastRetransmits << ','
           << f.error << '\n';
    }
    return os.str();
}

} // namespace ns3
