#include "flow-sink-application.h"

#include "tcp-app-socket.h"

#include "ns3/inet-socket-address.h"
#include "ns3/integer.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/pointer.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowSinkApplication");

NS_OBJECT_ENSURE_REGISTERED(FlowSinkApplication);

TypeId
FlowSinkApplication::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FlowSinkApplication")
            .SetParent<Application>()
            .SetGroupName("Ddnn")
            .AddConstructor<FlowSinkApplication>()
            .AddAttribute("Port",
                          "TCP port to listen on.",
                          UintegerValue(9000),
                          MakeUintegerAccessor(&FlowSinkApplication::m_port),
                          MakeUintegerChecker<uint16_t>(1))
            .AddAttribute("AckTos",
                          "IP ToS of what the sink sends back (ACKs, FIN); -1 = the ToS "
                          "of the flow being acknowledged.",
                          IntegerValue(-1),
                          MakeIntegerAccessor(&FlowSinkApplication::m_ackTos),
                          MakeIntegerChecker<int32_t>(-1, 255))
            .AddAttribute("ListenTos",
                          "IP ToS of the listening socket (the SYN-ACK, sent before the "
                          "flow is known).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&FlowSinkApplication::m_listenTos),
                          MakeUintegerChecker<uint8_t>())
            .AddAttribute("FlowLog",
                          "The FlowLog shared with the senders.",
                          PointerValue(),
                          MakePointerAccessor(&FlowSinkApplication::m_log),
                          MakePointerChecker<FlowLog>());
    return tid;
}

FlowSinkApplication::FlowSinkApplication()
    : m_port(9000),
      m_ackTos(-1),
      m_listenTos(0)
{
    NS_LOG_FUNCTION(this);
}

void
FlowSinkApplication::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_connections.clear();
    m_listener = nullptr;
    m_log = nullptr;
    Application::DoDispose();
}

void
FlowSinkApplication::SetFlowLog(Ptr<FlowLog> log)
{
    NS_LOG_FUNCTION(this << log);
    m_log = log;
}

void
FlowSinkApplication::StartApplication()
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(!m_log, "FlowSinkApplication needs a FlowLog");
    m_listener = ListenTcp(GetNode(),
                           m_port,
                           m_listenTos,
                           MakeCallback(&FlowSinkApplication::Accepted, this));
}

void
FlowSinkApplication::StopApplication()
{
    NS_LOG_FUNCTION(this);
    if (m_listener)
    {
        m_listener->Close();
    }
}

void
FlowSinkApplication::Accepted(Ptr<Socket> socket, const Address& from)
{
    NS_LOG_FUNCTION(this << socket << from);
    InetSocketAddress peer = InetSocketAddress::ConvertFrom(from);
    uint64_t id;
    if (!m_log->ClaimConnection(peer.GetIpv4(), peer.GetPort(), id))
    {
        NS_FATAL_ERROR("FlowSinkApplication: connection from " << peer.GetIpv4() << ":"
                                                              << peer.GetPort()
                                                              << " matches no started flow");
    }
    socket->SetIpTos(m_ackTos < 0 ? m_log->GetTos(id) : uint8_t(m_ackTos));
    m_connections[PeekPointer(socket)] = {socket, id};
    socket->SetRecvCallback(MakeCallback(&FlowSinkApplication::Receive, this));
    socket->SetCloseCallbacks(MakeCallback(&FlowSinkApplication::PeerClosed, this),
                              MakeCallback(&FlowSinkApplication::Failed, this));
}

void
FlowSinkApplication::Receive(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    auto it = m_connections.find(PeekPointer(socket));
    if (it == m_connections.end())
    {
        return;
    }
    uint64_t id = it->second.second;
    const uint64_t bytes = ReceiveAll(socket);
    if (bytes > 0)
    {
        m_log->NotifyReceived(id, bytes);
    }
}

void
FlowSinkApplication::PeerClosed(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    // The sender closed after its last byte: close our half too, so the
    // connection ends cleanly (ns-3 then frees it).
    socket->ShutdownSend();
    m_connections.erase(PeekPointer(socket));
}

void
FlowSinkApplication::Failed(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    auto it = m_connections.find(PeekPointer(socket));
    if (it != m_connections.end())
    {
        m_log->NotifyError(it->second.second, "sink-socket-error");
        m_connections.erase(it);
    }
}

} // namespace ns3
