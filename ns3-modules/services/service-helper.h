// Installs a run's services on nodes: request/response clients and servers
// (queries, RPCs) sharing one ServiceLog, UDP packet sources (constant-bitrate
// streams, Poisson packets) and long-lived bulk TCP flows.
#ifndef DDNN_SERVICE_HELPER_H
#define DDNN_SERVICE_HELPER_H

#include "request-client-application.h"
#include "request-server-application.h"
#include "service-log.h"
#include "stream-receiver-application.h"
#include "stream-sender-application.h"

#include "ns3/data-rate.h"
#include "ns3/node.h"
#include "ns3/packet-sink.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Installs service clients, servers and streams on nodes, sharing one ServiceLog.
 */
class ServiceHelper
{
  public:
    /// \brief Clients and servers that record into `log`.
    explicit ServiceHelper(Ptr<ServiceLog> log);

    /// \brief A server on `node` listening on `port`, answering in class `tos`.
    Ptr<RequestServerApplication> InstallServer(Ptr<Node> node, uint16_t port, uint8_t tos) const;
    /// \brief A client on `node` for servers on `port` (add its requests with AddRequest);
    /// outstanding 0 = open loop.
    Ptr<RequestClientApplication> InstallClient(Ptr<Node> node,
                                                uint16_t port,
                                                uint8_t tos,
                                                bool persistent,
                                                uint32_t outstanding) const;
    /// \brief A stream's receiver on `node`, listening on `port`.
    Ptr<StreamReceiverApplication> InstallStreamReceiver(Ptr<Node> node, uint16_t port) const;
    /// \brief A stream's sender on `node` to (dst, port), sending from `start` to `stop`;
    /// poissonStream >= 0: Poisson arrivals drawn from that random stream, else constant gaps.
    Ptr<StreamSenderApplication> InstallStreamSender(Ptr<Node> node,
                                                     Ipv4Address dst,
                                                     uint16_t port,
                                                     uint8_t tos,
                                                     DataRate rate,
                                                     uint32_t packetSize,
                                                     Time start,
                                                     Time stop,
                                                     int64_t poissonStream = -1) const;
    /// \brief A long-lived TCP flow from `src` to (`dst`, dstAddress:port) from `start`
    /// on: ns-3's BulkSendApplication (no byte limit, `sendSize` bytes per write) and a
    /// PacketSink; returns the sink (its GetTotalRx counts the flow's bytes).
    Ptr<PacketSink> InstallBulk(Ptr<Node> src,
                                Ptr<Node> dst,
                                Ipv4Address dstAddress,
                                uint16_t port,
                                uint8_t tos,
                                uint32_t sendSize,
                                Time start) const;

  private:
    Ptr<ServiceLog> m_log;
};

} // namespace ns3

#endif
