#include "request-client-application.h"

#include "tcp-app-socket.h"
#include "tcp-socket-ddnn.h"

#include "ns3/boolean.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <set>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RequestClientApplication");

NS_OBJECT_ENSURE_REGISTERED(RequestClientApplication);

TypeId
RequestClientApplication::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RequestClientApplication")
            .SetParent<Application>()
            .SetGroupName("Ddnn")
            .AddConstructor<RequestClientApplication>()
            .AddAttribute("RemotePort",
                          "TCP port of the RequestServerApplication on the servers.",
                          UintegerValue(7000),
                          MakeUintegerAccessor(&RequestClientApplication::m_remotePort),
                          MakeUintegerChecker<uint16_t>(1))
            .AddAttribute("Tos",
                          "IP ToS of the requests (the service's traffic class).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RequestClientApplication::m_tos),
                          MakeUintegerChecker<uint8_t>())
            .AddAttribute("Persistent",
                          "One connection per server, opened at the start (true), or one "
                          "per request, opened at its start (false).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&RequestClientApplication::m_persistent),
                          MakeBooleanChecker())
            .AddAttribute("Outstanding",
                          "Closed loop: requests unanswered at once (the next is sent when "
                          "one is answered); 0 = open loop, each at its planned start.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RequestClientApplication::m_outstanding),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("ServiceLog",
                          "The ServiceLog that describes the requests and records them.",
                          PointerValue(),
                          MakePointerAccessor(&RequestClientApplication::m_log),
                          MakePointerChecker<ServiceLog>())
            .AddTraceSource("RequestSent",
                            "A request was put on its connection: (request id).",
                            MakeTraceSourceAccessor(&RequestClientApplication::m_requestSentTrace),
                            "ns3::RequestClientApplication::RequestSentCallback");
    return tid;
}

RequestClientApplication::RequestClientApplication()
    : m_remotePort(7000),
      m_tos(0),
      m_persistent(true),
      m_outstanding(0),
      m_next(0),
      m_answered(0)
{
    NS_LOG_FUNCTION(this);
}

void
RequestClientApplication::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_connections.clear();
    m_byServer.clear();
    m_log = nullptr;
    Application::DoDispose();
}

void
RequestClientApplication::SetServiceLog(Ptr<ServiceLog> log)
{
    NS_LOG_FUNCTION(this << log);
    m_log = log;
}

void
RequestClientApplication::AddRequest(uint64_t id)
{
    NS_LOG_FUNCTION(this << id);
    NS_ABORT_MSG_IF(!m_log, "SetServiceLog() before AddRequest()");
    NS_ABORT_MSG_IF(m_outstanding == 0 && m_log->GetPlannedStart(id).IsStrictlyNegative(),
                    "an open-loop client needs a planned start for every request");
    NS_ABORT_MSG_IF(m_outstanding == 0 && !m_requests.empty() &&
                        m_log->GetPlannedStart(id) < m_log->GetPlannedStart(m_requests.back()),
                    "requests must be added in start order");
    m_requests.push_back(id);
}

uint64_t
RequestClientApplication::GetNAnswered() const
{
    NS_LOG_FUNCTION(this);
    return m_answered;
}

void
RequestClientApplication::StartApplication()
{
    NS_LOG_FUNCTION(this);
    m_next = 0;
    if (m_persistent)
    {
        // the connections real services keep: open before the first request,
        // so that no request waits for a handshake
        std::set<uint32_t> servers;
        for (uint64_t id : m_requests)
        {
            servers.insert(m_log->GetServerAddress(id).Get());
        }
        for (uint32_t server : servers)
        {
            Connection& c = Open(Ipv4Address(server));
            m_byServer[server] = PeekPointer(c.socket);
        }
    }
    if (m_requests.empty())
    {
        return;
    }
    if (m_outstanding > 0)
    {
        for (uint32_t i = 0; i < m_outstanding; ++i)
        {
            SendNextInLine();
        }
        return;
    }
    Time delay = Max(m_log->GetPlannedStart(m_requests[0]) - Simulator::Now(), Time(0));
    m_nextEvent = Simulator::Schedule(delay, &RequestClientApplication::SendNextPlanned, this);
}

void
RequestClientApplication::StopApplication()
{
    NS_LOG_FUNCTION(this);
    m_nextEvent.Cancel();
    // Requests in flight are left alone: the run ends at the stop time and
    // the log reports them unanswered.
}

void
RequestClientApplication::SendNextPlanned()
{
    NS_LOG_FUNCTION(this);
    Send(m_requests[m_next++]);
    if (m_next < m_requests.size())
    {
        Time delay = m_log->GetPlannedStart(m_requests[m_next]) - Simulator::Now();
        m_nextEvent = Simulator::Schedule(Max(delay, Time(0)),
                                          &RequestClientApplication::SendNextPlanned,
                                          this);
    }
}

void
RequestClientApplication::SendNextInLine()
{
    NS_LOG_FUNCTION(this);
    if (m_next < m_requests.size())
    {
        Send(m_requests[m_next++]);
    }
}

RequestClientApplication::Connection&
RequestClientApplication::Open(Ipv4Address server)
{
    NS_LOG_FUNCTION(this << server);
    Ptr<Socket> socket = CreateTcpSocket(GetNode());
    // ToS before Connect(), so the SYN travels in the service's class too.
    socket->SetIpTos(m_tos);
    socket->Bind();
    Address local;
    socket->GetSockName(local);
    Connection& c = m_connections[PeekPointer(socket)];
    c.socket = socket;
    c.port = InetSocketAddress::ConvertFrom(local).GetPort();
    // Hosts are single-homed: their one address is the connection's source.
    c.self = GetNode()->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal();
    socket->SetConnectCallback(MakeCallback(&RequestClientApplication::ConnectionSucceeded, this),
                               MakeCallback(&RequestClientApplication::ConnectionFailed, this));
    socket->SetCloseCallbacks(MakeCallback(&RequestClientApplication::SocketClosed, this),
                              MakeCallback(&RequestClientApplication::SocketFailed, this));
    socket->SetRecvCallback(MakeCallback(&RequestClientApplication::Receive, this));
    socket->Connect(InetSocketAddress(server, m_remotePort));
    return c;
}

void
RequestClientApplication::Send(uint64_t id)
{
    NS_LOG_FUNCTION(this << id);
    Connection* c;
    if (m_persistent)
    {
        c = &m_connections.at(m_byServer.at(m_log->GetServerAddress(id).Get()));
    }
    else
    {
        c = &Open(m_log->GetServerAddress(id));
    }
    m_log->NotifySent(id, c->self, c->port);
    m_requestSentTrace(id);
    c->waiting.push_back(id);
    Ptr<TcpSocketDdnn> tcp = DynamicCast<TcpSocketDdnn>(c->socket);
    c->atSend.push_back(tcp ? tcp->GetLossEvents() : TcpSocketDdnn::LossEvents{});
    c->unsent += m_log->GetRequestBytes(id);
    if (c->connected)
    {
        SendMore(c->socket, c->socket->GetTxAvailable());
    }
}

void
RequestClientApplication::ConnectionSucceeded(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    auto it = m_connections.find(PeekPointer(socket));
    if (it == m_connections.end())
    {
        return;
    }
    it->second.connected = true;
    socket->SetSendCallback(MakeCallback(&RequestClientApplication::SendMore, this));
    SendMore(socket, socket->GetTxAvailable());
}

void
RequestClientApplication::ConnectionFailed(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    auto it = m_connections.find(PeekPointer(socket));
    if (it != m_connections.end())
    {
        Fail(it->second, "connection-failed");
    }
}

void
RequestClientApplication::SendMore(Ptr<Socket> socket, uint32_t)
{
    NS_LOG_FUNCTION(this << socket);
    auto it = m_connections.find(PeekPointer(socket));
    if (it == m_connections.end())
    {
        return;
    }
    Connection& c = it->second;
    c.unsent -= SendAsMuch(socket, c.unsent); // the send callback runs again for the rest
}

void
RequestClientApplication::Receive(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    auto it = m_connections.find(PeekPointer(socket));
    if (it == m_connections.end())
    {
        return;
    }
    Connection& c = it->second;
    uint64_t bytes = ReceiveAll(socket);
    // responses come back in the order their requests went (one server, FIFO)
    uint32_t answered = 0;
    while (bytes > 0 && !c.waiting.empty())
    {
        const uint64_t id = c.waiting.front();
        const uint64_t take = std::min(bytes, m_log->GetResponseBytes(id) - c.receivedOfFirst);
        c.receivedOfFirst += take;
        bytes -= take;
        if (c.receivedOfFirst == m_log->GetResponseBytes(id))
        {
            m_log->NotifyAnswered(id);
            NoteDelays(c, id, c.atSend.front());
            c.waiting.pop_front();
            c.atSend.pop_front();
            c.receivedOfFirst = 0;
            answered++;
        }
    }
    NS_ABORT_MSG_IF(bytes > 0, "response bytes beyond every request sent");
    m_answered += answered;
    if (!m_persistent && answered > 0 && c.waiting.empty())
    {
        socket->Close(); // one request per connection: done
    }
    for (uint32_t i = 0; m_outstanding > 0 && i < answered; ++i)
    {
        SendNextInLine(); // may open a connection: `c` is not used after this
    }
}

void
RequestClientApplication::Fail(Connection& c, const std::string& what)
{
    NS_LOG_FUNCTION(this << what);
    for (size_t i = 0; i < c.waiting.size(); ++i)
    {
        m_log->NotifyError(c.waiting[i], what);
        NoteDelays(c, c.waiting[i], c.atSend[i]);
    }
    c.waiting.clear();
    c.atSend.clear();
}

void
RequestClientApplication::NoteDelays(const Connection& c,
                                     uint64_t id,
                                     const TcpSocketDdnn::LossEvents& atSend)
{
    Ptr<TcpSocketDdnn> tcp = DynamicCast<TcpSocketDdnn>(c.socket);
    if (!tcp)
    {
        return;
    }
    const TcpSocketDdnn::LossEvents& now = tcp->GetLossEvents();
    m_log->NotifyClientDelays(id,
                              now.timeouts - atSend.timeouts,
                              now.timeoutWait - atSend.timeoutWait);
}

void
RequestClientApplication::SocketClosed(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    auto it = m_connections.find(PeekPointer(socket));
    if (it != m_connections.end())
    {
        Fail(it->second, "closed-by-server");
        if (!m_persistent)
        {
            m_connections.erase(it);
        }
    }
}

void
RequestClientApplication::SocketFailed(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    auto it = m_connections.find(PeekPointer(socket));
    if (it != m_connections.end())
    {
        Fail(it->second, "socket-error-" + std::to_string(socket->GetErrno()));
        if (!m_persistent)
        {
            m_connections.erase(it);
        }
    }
}

} // namespace ns3
