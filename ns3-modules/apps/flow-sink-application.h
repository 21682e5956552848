// Accepts the connections of background flows on one port and counts their
// bytes into the shared FlowLog, which stamps a flow's completion when its
// last byte arrives (FCT = last byte received - start).
#ifndef DDNN_FLOW_SINK_APPLICATION_H
#define DDNN_FLOW_SINK_APPLICATION_H

#include "flow-log.h"

#include "ns3/application.h"
#include "ns3/socket.h"

#include <unordered_map>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Accepts background flows on one port and reports the bytes received to the FlowLog.
 */
class FlowSinkApplication : public Application
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    FlowSinkApplication();

    /// \brief The table this sink reports received bytes to.
    void SetFlowLog(Ptr<FlowLog> log);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;

    void Accepted(Ptr<Socket> socket, const Address& from);
    void Receive(Ptr<Socket> socket);
    void PeerClosed(Ptr<Socket> socket);
    void Failed(Ptr<Socket> socket);

    Ptr<FlowLog> m_log;
    uint16_t m_port;
    int32_t m_ackTos;    //!< ToS of the reverse direction (ACKs); -1: the flow's own
    uint8_t m_listenTos; //!< ToS of the handshake reply (SYN-ACK)
    Ptr<Socket> m_listener;
    std::unordered_map<Socket*, std::pair<Ptr<Socket>, uint64_t>> m_connections;
};

} // namespace ns3

#endif
