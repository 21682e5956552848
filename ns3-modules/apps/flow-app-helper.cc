#include "flow-app-helper.h"

#include "ns3/integer.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowAppHelper");

FlowAppHelper::FlowAppHelper(Ptr<FlowLog> log, uint16_t port)
    : m_log(log),
      m_port(port)
{
    NS_LOG_FUNCTION(this << log << port);
}

Ptr<FlowSinkApplication>
FlowAppHelper::InstallSink(Ptr<Node> node, int32_t ackTos, uint8_t listenTos) const
{
    NS_LOG_FUNCTION(this << node << ackTos << static_cast<uint32_t>(listenTos));
    auto sink = CreateObject<FlowSinkApplication>();
    sink->SetFlowLog(m_log);
    sink->SetAttribute("Port", UintegerValue(m_port));
    sink->SetAttribute("AckTos", IntegerValue(ackTos));
    sink->SetAttribute("ListenTos", UintegerValue(listenTos));
    node->AddApplication(sink);
    return sink;
}

Ptr<FlowSendApplication>
FlowAppHelper::InstallSender(Ptr<Node> node) const
{
    NS_LOG_FUNCTION(this << node);
    auto sender = CreateObject<FlowSendApplication>();
    sender->SetFlowLog(m_log);
    sender->SetAttribute("RemotePort", UintegerValue(m_port));
    node->AddApplication(sender);
    return sender;
}

} // namespace ns3
