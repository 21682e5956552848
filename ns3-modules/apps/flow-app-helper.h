// Installs background-flow senders and sinks on nodes, sharing one FlowLog.
#ifndef DDNN_FLOW_APP_HELPER_H
#define DDNN_FLOW_APP_HELPER_H

#include "flow-log.h"
#include "flow-send-application.h"
#include "flow-sink-application.h"

#include "ns3/node.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Installs background-flow senders and sinks on nodes, sharing one FlowLog.
 */
class FlowAppHelper
{
  public:
    /// \brief Senders and sinks that record into `log`; sinks listen on `port`.
    FlowAppHelper(Ptr<FlowLog> log, uint16_t port);

    /// \brief A sink on `node`; ackTos -1 = ACKs in the class of the flow's data.
    Ptr<FlowSinkApplication> InstallSink(Ptr<Node> node, int32_t ackTos, uint8_t listenTos) const;
    /// \brief A sender on `node` (add its flows with AddFlow, in start order).
    Ptr<FlowSendApplication> InstallSender(Ptr<Node> node) const;

  private:
    Ptr<FlowLog> m_log;
    uint16_t m_port;
};

} // namespace ns3

#endif
