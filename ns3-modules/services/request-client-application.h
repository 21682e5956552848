// The client side of a request/response service: a query's aggregator (one
// request to each worker per query) or an RPC client. Sends each request of
// the ServiceLog it was given, at its planned start (open loop) or as soon
// as fewer than Outstanding are unanswered (closed loop), and records when
// each response's last byte arrives. Connections are persistent (one per
// server, opened at the start, as real services keep them) or one per
// request (opened at the request's start, so its handshake is in its latency).
#ifndef DDNN_REQUEST_CLIENT_APPLICATION_H
#define DDNN_REQUEST_CLIENT_APPLICATION_H

#include "service-log.h"

#include "tcp-socket-ddnn.h"

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/socket.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <map>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Sends a service's requests (open or closed loop) and records their responses.
 */
class RequestClientApplication : public Application
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    RequestClientApplication();

    /// \brief The table this client reads its requests from and reports to.
    void SetServiceLog(Ptr<ServiceLog> log);
    /// \brief Send request `id` of the ServiceLog from this node (call in start order).
    void AddRequest(uint64_t id);
    /// \brief Requests answered so far.
    uint64_t GetNAnswered() const;

    /**
     * \brief Signature of the RequestSent trace source.
     * \param id the request's id in the ServiceLog
     */
    typedef void (*RequestSentCallback)(uint64_t id);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;

    /// One TCP connection to a server and the requests it carries.
    struct Connection
    {
        Ptr<Socket> socket;            //!< kept alive until it closes
        Ipv4Address self;              //!< this end: the ServiceLog's key
        uint16_t port = 0;
        bool connected = false;
        uint64_t unsent = 0;           //!< request bytes not yet in the socket
        std::deque<uint64_t> waiting;  //!< requests sent, not yet answered, in order
        /// the socket's LossEvents when each waiting request was sent: a
        /// request's own are what they grew by until it was answered or failed
        std::deque<TcpSocketDdnn::LossEvents> atSend;
        uint64_t receivedOfFirst = 0;  //!< response bytes of waiting.front() so far
    };

    /// Open loop: the request due now, and the next one's event.
    void SendNextPlanned();
    /// Closed loop: send the next request of the list, if any.
    void SendNextInLine();
    /// Put request `id` on its connection.
    void Send(uint64_t id);
    /// A new connection to `server` (its address).
    Connection& Open(Ipv4Address server);
    void ConnectionSucceeded(Ptr<Socket> socket);
    void ConnectionFailed(Ptr<Socket> socket);
    void SendMore(Ptr<Socket> socket, uint32_t available);
    void Receive(Ptr<Socket> socket);
    void SocketClosed(Ptr<Socket> socket);
    void SocketFailed(Ptr<Socket> socket);
    /// Request `id`'s client-side TCP delays: the connection's LossEvents now
    /// less `atSend`, into the ServiceLog.
    void NoteDelays(const Connection& c, uint64_t id, const TcpSocketDdnn::LossEvents& atSend);
    /// Every request still waiting on the connection failed with `what`.
    void Fail(Connection& c, const std::string& what);

    Ptr<ServiceLog> m_log;
    uint16_t m_remotePort;
    uint8_t m_tos;
    bool m_persistent;
    uint32_t m_outstanding; //!< 0: open loop
    std::vector<uint64_t> m_requests; //!< ids in start order
    size_t m_next;                    //!< next request to send
    uint64_t m_answered;
    EventId m_nextEvent;
    std::unordered_map<Socket*, Connection> m_connections;
    std::map<uint32_t, Socket*> m_byServer; //!< persistent: server address -> its connection
    TracedCallback<uint64_t> m_requestSentTrace;
};

} // namespace ns3

#endif
