#include "request-server-application.h"

#include "tcp-app-socket.h"

#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/pointer.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RequestServerApplication");

NS_OBJECT_ENSURE_REGISTERED(RequestServerApplication);

TypeId
RequestServerApplication::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RequestServerApplication")
            .SetParent<Application>()
            .SetGroupName("Ddnn")
            .AddConstructor<RequestServerApplication>()
            .AddAttribute("Port",
                          "TCP port to listen on.",
                          UintegerValue(7000),
                          MakeUintegerAccessor(&RequestServerApplication::m_port),
                          MakeUintegerChecker<uint16_t>(1))
            .AddAttribute("Tos",
                          "IP ToS of the responses (the service's traffic class).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RequestServerApplication::m_tos),
                          MakeUintegerChecker<uint8_t>())
            .AddAttribute("ServiceLog",
                          "The ServiceLog shared with the clients.",
                          PointerValue(),
                          MakePointerAccessor(&RequestServerApplication::m_log),
                          MakePointerChecker<ServiceLog>())
            .AddTraceSource("RequestReceived",
                            "A request's last byte arrived: (request id).",
                            MakeTraceSourceAccessor(
                                &RequestServerApplication::m_requestReceivedTrace),
                            "ns3::RequestServerApplication::RequestReceivedCallback");
    return tid;
}

RequestServerApplication::RequestServerApplication()
    : m_port(7000),
      m_tos(0)
{
    NS_LOG_FUNCTION(this);
}

void
RequestServerApplication::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_connections.clear();
    m_listener = nullptr;
    m_log = nullptr;
    Application::DoDispose();
}

void
RequestServerApplication::SetServiceLog(Ptr<ServiceLog> log)
{
    NS_LOG_FUNCTION(this << log);
    m_log = log;
}

void
RequestServerApplication::StartApplication()
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(!m_log, "RequestServerApplication needs a ServiceLog");
    m_listener = ListenTcp(GetNode(), // the SYN-ACK in the service's class
                           m_port,
                           m_tos,
                           MakeCallback(&RequestServerApplication::Accepted, this));
}

void
RequestServerApplication::StopApplication()
{
    NS_LOG_FUNCTION(this);
    if (m_listener)
    {
        m_listener->Close();
    }
}

void
RequestServerApplication::Accepted(Ptr<Socket> socket, const Address& from)
{
    NS_LOG_FUNCTION(this << socket << from);
    InetSocketAddress peer = InetSocketAddress::ConvertFrom(from);
    socket->SetIpTos(m_tos);
    Connection& c = m_connections[PeekPointer(socket)];
    c.socket = socket;
    c.peer = peer.GetIpv4();
    c.peerPort = peer.GetPort();
    socket->SetRecvCallback(MakeCallback(&RequestServerApplication::Receive, this));
    socket->SetSendCallback(MakeCallback(&RequestServerApplication::SendMore, this));
    socket->SetCloseCallbacks(MakeCallback(&RequestServerApplication::PeerClosed, this),
                              MakeCallback(&RequestServerApplication::Failed, this));
}

void
RequestServerApplication::Receive(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    auto it = m_connections.find(PeekPointer(socket));
    if (it == m_connections.end())
    {
        return;
    }
    Connection& c = it->second;
    uint64_t bytes = ReceiveAll(socket);
    while (bytes > 0)
    {
        if (!c.reading)
        {
            if (!m_log->NextRequest(c.peer, c.peerPort, c.request))
            {
                NS_FATAL_ERROR("RequestServerApplication: bytes from " << c.peer << ":"
                                                                       << c.peerPort
                                                                       << " of no request");
            }
            c.reading = true;
            c.receivedOfRequest = 0;
        }
        const uint64_t take =
            std::min(bytes, m_log->GetRequestBytes(c.request) - c.receivedOfRequest);
        c.receivedOfRequest += take;
        bytes -= take;
        if (c.receivedOfRequest == m_log->GetRequestBytes(c.request))
        {
            m_log->NotifyReceived(c.request);
            m_requestReceivedTrace(c.request);
            c.unsent += m_log->GetResponseBytes(c.request);
            c.reading = false;
        }
    }
    SendMore(socket, socket->GetTxAvailable());
}

void
RequestServerApplication::SendMore(Ptr<Socket> socket, uint32_t)
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
RequestServerApplication::PeerClosed(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    // The client closed after its last answer: close our half too, so the
    // connection ends cleanly (ns-3 then frees it).
    socket->Close();
    m_connections.erase(PeekPointer(socket));
}

void
RequestServerApplication::Failed(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    m_connections.erase(PeekPointer(socket));
}

} // namespace ns3
