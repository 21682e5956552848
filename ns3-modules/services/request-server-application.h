// The server side of a request/response service: a query's worker or an RPC
// server. Listens on a TCP port; on every connection it reads the requests
// the client put there, in order (the ServiceLog says which and how many
// bytes each has), and answers each, once its last byte is in, with its
// response's bytes (no service time: the network's share of the latency).
#ifndef DDNN_REQUEST_SERVER_APPLICATION_H
#define DDNN_REQUEST_SERVER_APPLICATION_H

#include "service-log.h"

#include "ns3/application.h"
#include "ns3/ipv4-address.h"
#include "ns3/socket.h"
#include "ns3/traced-callback.h"

#include <unordered_map>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Answers a service's requests on every connection, in order.
 */
class RequestServerApplication : public Application
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    RequestServerApplication();

    /// \brief The table shared with the clients.
    void SetServiceLog(Ptr<ServiceLog> log);

    /**
     * \brief Signature of the RequestReceived trace source.
     * \param id the request's id in the ServiceLog
     */
    typedef void (*RequestReceivedCallback)(uint64_t id);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;

    void Accepted(Ptr<Socket> socket, const Address& from);
    void Receive(Ptr<Socket> socket);
    void SendMore(Ptr<Socket> socket, uint32_t available);
    void PeerClosed(Ptr<Socket> socket);
    void Failed(Ptr<Socket> socket);

    /// One client connection: the request being read and the answers to send.
    struct Connection
    {
        Ptr<Socket> socket;
        Ipv4Address peer;           //!< the client's (address, port): the ServiceLog's key
        uint16_t peerPort = 0;
        bool reading = false;       //!< a request's bytes are coming in
        uint64_t request = 0;       //!< its id
        uint64_t receivedOfRequest = 0;
        uint64_t unsent = 0;        //!< response bytes not yet in the socket
    };

    Ptr<ServiceLog> m_log;
    uint16_t m_port;
    uint8_t m_tos;
    Ptr<Socket> m_listener;
    std::unordered_map<Socket*, Connection> m_connections;
    TracedCallback<uint64_t> m_requestReceivedTrace;
};

} // namespace ns3

#endif
