#include "service-log.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ServiceLog");

NS_OBJECT_ENSURE_REGISTERED(ServiceLog);

TypeId
ServiceLog::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ServiceLog")
            .SetParent<Object>()
            .SetGroupName("Ddnn")
            .AddConstructor<ServiceLog>()
            .AddTraceSource("Answered",
                            "A request's last response byte arrived: (request id, service, "
                            "sent, latency); one call per answered row of ToCsv().",
                            MakeTraceSourceAccessor(&ServiceLog::m_answeredTrace),
                            "ns3::ServiceLog::AnsweredCallback");
    return tid;
}

uint64_t
ServiceLog::AddRequest(uint32_t service,
                       int64_t query,
                       uint32_t client,
                       uint32_t server,
                       Ipv4Address serverAddress,
                       uint64_t requestBytes,
                       uint64_t responseBytes,
                       Time start)
{
    NS_LOG_FUNCTION(this << service << query << client << server << requestBytes
                         << responseBytes << start);
    NS_ABORT_MSG_IF(requestBytes == 0 || responseBytes == 0,
                    "a request and its response need at least one byte each");
    Request r;
    r.service = service;
    r.query = query;
    r.client = client;
    r.server = server;
    r.serverAddress = serverAddress;
    r.requestBytes = requestBytes;
    r.responseBytes = responseBytes;
    r.planned = start;
    m_requests.push_back(r);
    return m_requests.size() - 1;
}

uint64_t
ServiceLog::GetNRequests() const
{
    NS_LOG_FUNCTION(this);
    return m_requests.size();
}

uint64_t
ServiceLog::GetNAnswered() const
{
    NS_LOG_FUNCTION(this);
    return m_answered;
}

uint32_t
ServiceLog::GetServer(uint64_t id) const
{
    NS_LOG_FUNCTION(this << id);
    return m_requests.at(id).server;
}

Ipv4Address
ServiceLog::GetServerAddress(uint64_t id) const
{
    NS_LOG_FUNCTION(this << id);
    return m_requests.at(id).serverAddress;
}

uint64_t
ServiceLog::GetRequestBytes(uint64_t id) const
{
    NS_LOG_FUNCTION(this << id);
    return m_requests.at(id).requestBytes;
}

uint64_t
ServiceLog::GetResponseBytes(uint64_t id) const
{
    NS_LOG_FUNCTION(this << id);
    return m_requests.at(id).responseBytes;
}

Time
ServiceLog::GetPlannedStart(uint64_t id) const
{
    NS_LOG_FUNCTION(this << id);
    return m_requests.at(id).planned;
}

uint64_t
ServiceLog::Key(Ipv4Address src, uint16_t port)
{
    NS_LOG_FUNCTION(src << port);
    return (static_cast<uint64_t>(src.Get()) << 16) | port;
}

void
ServiceLog::NotifySent(uint64_t id, Ipv4Address src, uint16_t port)
{
    NS_LOG_FUNCTION(this << id << src << port);
    m_requests.at(id).sent = Simulator::Now();
    m_connections[Key(src, port)].push_back(id);
}

bool
ServiceLog::NextRequest(Ipv4Address src, uint16_t port, uint64_t& id)
{
    NS_LOG_FUNCTION(this << src << port);
    auto it = m_connections.find(Key(src, port));
    if (it == m_connections.end() || it->second.empty())
    {
        return false;
    }
    id = it->second.front();
    it->second.pop_front();
    return true;
}

void
ServiceLog::NotifyReceived(uint64_t id)
{
    NS_LOG_FUNCTION(this << id);
    m_requests.at(id).received = Simulator::Now();
}

void
ServiceLog::NotifyAnswered(uint64_t id)
{
    NS_LOG_FUNCTION(this << id);
    Request& r = m_requests.at(id);
    r.answered = Simulator::Now();
    m_answered++;
    m_answeredTrace(id, r.service, r.sent, r.answered - r.sent);
}

void
ServiceLog::NotifyClientDelays(uint64_t id, uint32_t timeouts, Time wait)
{
    NS_LOG_FUNCTION(this << id << timeouts << wait);
    Request& r = m_requests.at(id);
    r.clientTimeouts = timeouts;
    // a connection that carries several requests may have stalled since
    // before this one was sent: its share is at most its own time
    r.clientWait = r.sent.IsStrictlyNegative() ? wait : Min(wait, Simulator::Now() - r.sent);
}

void
ServiceLog::NotifyError(uint64_t id, const std::string& what)
{
    NS_LOG_FUNCTION(this << id << what);
    Request& r = m_requests.at(id);
    if (r.answered.IsStrictlyNegative() && r.error.empty())
    {
        r.error = what;
    }
}

std::string
ServiceLog::ToCsv() const
{
    NS_LOG_FUNCTION(this);
    std::ostringstream out;
    out << "id,service,query,client,server,request_bytes,response_bytes,planned_ns,sent_ns,"
           "received_ns,answered_ns,client_timeouts,client_timeout_wait_ns,error\n";
    for (size_t i = 0; i < m_requests.size(); ++i)
    {
        const Request& r = m_requests[i];
        out << i << ',' << r.service << ',' << r.query << ',' << r.client << ',' << r.server
            << ',' << r.requestBytes << ',' << r.responseBytes << ','
            << (r.planned.IsStrictlyNegative() ? -1 : r.planned.GetNanoSeconds()) << ','
            << r.sent.GetNanoSeconds() << ',' << r.received.GetNanoSeconds() << ','
            << r.answered.GetNanoSeconds() << ',' << r.clientTimeouts << ','
            << r.clientWait.GetNanoSeconds() << ',' << r.error << '\n';
    }
    return out.str();
}

} // namespace ns3
