// Opens one TCP connection per flow at the flow's start time, writes its
// bytes, and closes. The flows (from a FlowLog) are replayed in start order,
// each start one scheduled event, so a long schedule costs no extra events.
#ifndef DDNN_FLOW_SEND_APPLICATION_H
#define DDNN_FLOW_SEND_APPLICATION_H

#include "flow-log.h"

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/socket.h"

#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Opens one TCP connection per planned background flow, at its planned start, and sends its bytes.
 */
class FlowSendApplication : public Application
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    FlowSendApplication();

    /// \brief The table this sender reads its flows from and reports to.
    void SetFlowLog(Ptr<FlowLog> log);
    /// \brief Send flow `id` of the FlowLog from this node (call in start order).
    void AddFlow(uint64_t id);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;

    void StartNextFlow();
    void ConnectionSucceeded(Ptr<Socket> socket);
    void ConnectionFailed(Ptr<Socket> socket);
    void SendMore(Ptr<Socket> socket, uint32_t available);
    void SocketClosed(Ptr<Socket> socket);
    void SocketFailed(Ptr<Socket> socket);

    struct Active
    {
        Ptr<Socket> socket; //!< kept alive until the connection closes
        uint64_t id;
        uint64_t sent;
    };

    Ptr<FlowLog> m_log;
    uint16_t m_remotePort;
    std::vector<uint64_t> m_flows; //!< flow ids in start order
    size_t m_next;                 //!< next flow to start
    EventId m_nextEvent;
    std::unordered_map<Socket*, Active> m_active;
    TracedCallback<uint64_t> m_flowStartTrace;
};

} // namespace ns3

#endif
