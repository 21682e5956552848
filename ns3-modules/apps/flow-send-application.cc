#include "flow-send-application.h"

#include "tcp-app-socket.h"
#include "tcp-socket-ddnn.h"

#include "ns3/inet-socket-address.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowSendApplication");

NS_OBJECT_ENSURE_REGISTERED(FlowSendApplication);

TypeId
FlowSendApplication::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FlowSendApplication")
            .SetParent<Application>()
            .SetGroupName("Ddnn")
            .AddConstructor<FlowSendApplication>()
            .AddAttribute("RemotePort",
                          "TCP port of the FlowSinkApplication on the destinations.",
                          UintegerValue(9000),
                          MakeUintegerAccessor(&FlowSendApplication::m_remotePort),
                          MakeUintegerChecker<uint16_t>(1))
            .AddAttribute("FlowLog",
                          "The FlowLog that describes the flows and records them.",
                          PointerValue(),
                          MakePointerAccessor(&FlowSendApplication::m_log),
                          MakePointerChecker<FlowLog>())
            .AddTraceSource("FlowStart",
                            "A flow opened its connection: (flow id).",
                            MakeTraceSourceAccessor(&FlowSendApplication::m_flowStartTrace),
                            "ns3::FlowSendApplication::FlowStartCallback");
    return tid;
}

FlowSendApplication::FlowSendApplication()
    : m_remotePort(9000),
      m_next(0)
{
    NS_LOG_FUNCTION(this);
}

void
FlowSendApplication::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_active.clear();
    m_log = nullptr;
    Application::DoDispose();
}

void
FlowSendApplication::SetFlowLog(Ptr<FlowLog> log)
{
    NS_LOG_FUNCTION(this << log);
    m_log = log;
}

void
FlowSendApplication::AddFlow(uint64_t id)
{
    NS_LOG_FUNCTION(this << id);
    NS_ABORT_MSG_IF(!m_log, "SetFlowLog() before AddFlow()");
    NS_ABORT_MSG_IF(!m_flows.empty() &&
                        m_log->GetPlannedStart(id) < m_log->GetPlannedStart(m_flows.back()),
                    "flows must be added in start order");
    m_flows.push_back(id);
}

void
FlowSendApplication::StartApplication()
{
    NS_LOG_FUNCTION(this);
    m_next = 0;
    if (!m_flows.empty())
    {
        Time delay = Max(m_log->GetPlannedStart(m_flows[0]) - Simulator::Now(), Time(0));
        m_nextEvent = Simulator::Schedule(delay, &FlowSendApplication::StartNextFlow, this);
    }
}

void
FlowSendApplication::StopApplication()
{
    NS_LOG_FUNCTION(this);
    m_nextEvent.Cancel();
    // Flows in progress are left alone: the run ends at the stop time and
    // their partial state is what the log reports.
}

void
FlowSendApplication::StartNextFlow()
{
    NS_LOG_FUNCTION(this);
    uint64_t id = m_flows[m_next++];
    Ptr<Socket> socket = CreateTcpSocket(GetNode());
    // ToS before Connect(), so the SYN travels in the flow's class too.
    socket->SetIpTos(m_log->GetTos(id));
    socket->Bind();
    Address local;
    socket->GetSockName(local);
    uint16_t port = InetSocketAddress::ConvertFrom(local).GetPort();
    // Hosts are single-homed: their one address is the flow's source.
    Ipv4Address self = GetNode()->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal();
    m_active[PeekPointer(socket)] = Active{socket, id, 0};
    m_log->NotifyStarted(id, self, port);
    m_log->WatchSender(id, DynamicCast<TcpSocketDdnn>(socket));
    m_flowStartTrace(id);

    socket->SetConnectCallback(MakeCallback(&FlowSendApplication::ConnectionSucceeded, this),
                               MakeCallback(&FlowSendApplication::ConnectionFailed, this));
    socket->SetCloseCallbacks(MakeCallback(&FlowSendApplication::SocketClosed, this),
                              MakeCallback(&FlowSendApplication::SocketFailed, this));
    socket->Connect(InetSocketAddress(m_log->GetDestination(id), m_remotePort));

    if (m_next < m_flows.size())
    {
        Time delay = m_log->GetPlannedStart(m_flows[m_next]) - Simulator::Now();
        m_nextEvent = Simulator::Schedule(Max(delay, Time(0)),
                                          &FlowSendApplication::StartNextFlow,
                                          this);
    }
}

void
FlowSendApplication::ConnectionSucceeded(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    socket->SetSendCallback(MakeCallback(&FlowSendApplication::SendMore, this));
    SendMore(socket, socket->GetTxAvailable());
}

void
FlowSendApplication::ConnectionFailed(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    auto it = m_active.find(PeekPointer(socket));
    if (it != m_active.end())
    {
        m_log->NotifyError(it->second.id, "connection-failed");
        m_log->SenderEnded(it->second.id);
        m_active.erase(it);
    }
}

void
FlowSendApplication::SendMore(Ptr<Socket> socket, uint32_t)
{
    NS_LOG_FUNCTION(this << socket);
    auto it = m_active.find(PeekPointer(socket));
    if (it == m_active.end())
    {
        return;
    }
    Active& flow = it->second;
    uint64_t size = m_log->GetSize(flow.id);
    flow.sent += SendAsMuch(socket, size - flow.sent);
    if (flow.sent < size)
    {
        return; // SendMore runs again when the buffer drains
    }
    // Everything is in the socket: close, TCP sends FIN after the data.
    socket->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
    socket->Close();
}

void
FlowSendApplication::SocketClosed(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    auto it = m_active.find(PeekPointer(socket));
    if (it != m_active.end())
    {
        m_log->SenderEnded(it->second.id);
        m_active.erase(it);
    }
}

void
FlowSendApplication::SocketFailed(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    auto it = m_active.find(PeekPointer(socket));
    if (it != m_active.end())
    {
        m_log->NotifyError(it->second.id, "socket-error-" + std::to_string(socket->GetErrno()));
        m_log->SenderEnded(it->second.id);
        m_active.erase(it);
    }
}

} // namespace ns3
