// The table of one run's service requests (queries' sub-requests and RPCs):
// what each request is (client, server, request and response bytes, planned
// start, query) and what happened to it (sent, received by the server,
// answered). Clients and servers share one ServiceLog; a server learns which
// requests a connection carries, in order, from the client's (address,
// port), so no bytes are tagged on the wire (as FlowLog does for flows).
#ifndef DDNN_SERVICE_LOG_H
#define DDNN_SERVICE_LOG_H

#include "ns3/ipv4-address.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief The table of one run's service requests: what each is and what happened to it.
 */
class ServiceLog : public Object
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();

    /// \brief Add a request; returns its id (0, 1, 2, ... in call order).
    /// `start` negative: sent when the client has room (closed loop).
    uint64_t AddRequest(uint32_t service,
                        int64_t query,
                        uint32_t client,
                        uint32_t server,
                        Ipv4Address serverAddress,
                        uint64_t requestBytes,
                        uint64_t responseBytes,
                        Time start);

    /// \brief Number of requests added.
    uint64_t GetNRequests() const;
    /// \brief Number of requests whose last response byte arrived.
    uint64_t GetNAnswered() const;
    /// \brief Server node of request `id`.
    uint32_t GetServer(uint64_t id) const;
    /// \brief Server address of request `id`.
    Ipv4Address GetServerAddress(uint64_t id) const;
    /// \brief Request bytes of request `id`.
    uint64_t GetRequestBytes(uint64_t id) const;
    /// \brief Response bytes of request `id`.
    uint64_t GetResponseBytes(uint64_t id) const;
    /// \brief Planned start of request `id` (negative: closed loop).
    Time GetPlannedStart(uint64_t id) const;

    /// \brief The client put request `id` on its connection from (src, port):
    /// the server reads it after the requests put there before it.
    void NotifySent(uint64_t id, Ipv4Address src, uint16_t port);
    /// \brief The server's next request on the connection from (src, port);
    /// false if the client put none there.
    bool NextRequest(Ipv4Address src, uint16_t port, uint64_t& id);
    /// \brief The server has every byte of request `id`.
    void NotifyReceived(uint64_t id);
    /// \brief The client has every byte of the response to request `id`.
    void NotifyAnswered(uint64_t id);
    /// \brief Request `id`'s client connection, from its sending to its answer
    /// or failure: retransmission timeouts and the time without progress
    /// before them (TcpSocketDdnn::LossEvents; at most the request's own time).
    void NotifyClientDelays(uint64_t id, uint32_t timeouts, Time wait);
    /// \brief A socket of request `id` failed before it was answered.
    void NotifyError(uint64_t id, const std::string& what);

    /// \brief id,service,query,client,server,request_bytes,response_bytes,
    /// planned_ns,sent_ns,received_ns,answered_ns,error (-1: did not happen;
    /// planned_ns -1: closed loop)
    std::string ToCsv() const;

    /**
     * \brief Signature of the Answered trace source: a request's response arrived.
     * \param id the request's id (its row in ToCsv())
     * \param service the service's index
     * \param sent when the client sent it (sent_ns)
     * \param latency answered_ns - sent_ns
     */
    typedef void (*AnsweredCallback)(uint64_t id, uint32_t service, Time sent, Time latency);

  private:
    struct Request
    {
        uint32_t service;
        int64_t query;
        uint32_t client;
        uint32_t server;
        Ipv4Address serverAddress;
        uint64_t requestBytes;
        uint64_t responseBytes;
        Time planned;
        Time sent = NanoSeconds(-1);
        Time received = NanoSeconds(-1);
        Time answered = NanoSeconds(-1);
        std::string error;
        uint32_t clientTimeouts = 0;   //!< its client connection's, while it waited
        Time clientWait;
    };

    static uint64_t Key(Ipv4Address src, uint16_t port);

    std::vector<Request> m_requests;
    /// (client address, port) -> requests put on that connection, not yet read
    std::unordered_map<uint64_t, std::deque<uint64_t>> m_connections;
    uint64_t m_answered = 0;
    /// A request's response arrived: see AnsweredCallback.
    TracedCallback<uint64_t, uint32_t, Time, Time> m_answeredTrace;
};

} // namespace ns3

#endif
