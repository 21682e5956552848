// A host's RDMA (RoCEv2) stack: the factory of its queue pairs
// (RdmaSocket), aggregated to the node as ns-3's socket factories are, and
// the NIC's transmit scheduling between them: a queue pair that finds its
// egress band full waits here and is woken as the band sends a packet.
#ifndef DDNN_RDMA_SOCKET_FACTORY_H
#define DDNN_RDMA_SOCKET_FACTORY_H

#include "ns3/node.h"
#include "ns3/queue-disc.h"
#include "ns3/socket-factory.h"

#include <set>
#include <vector>

namespace ns3
{

class RdmaSocket;

/**
 * \ingroup ddnn
 * \brief Creates a host's RDMA queue pairs and wakes those waiting for the NIC.
 */
class RdmaSocketFactory : public SocketFactory
{
  public:
    /// \brief Get the type ID. \return the object TypeId
    static TypeId GetTypeId();
    RdmaSocketFactory();
    ~RdmaSocketFactory() override;

    /// \brief The node whose stack this is.
    void SetNode(Ptr<Node> node);
    /// \return a new queue pair of this node (the RdmaSocket defaults)
    Ptr<Socket> CreateSocket() override;
    /// \brief `socket` waits for room in egress band `band`: NicReady() when it sends a packet.
    void WaitForNic(Ptr<RdmaSocket> socket, Ptr<QueueDisc> band);
    /// \return every queue pair this stack made, in creation order
    const std::vector<Ptr<RdmaSocket>>& GetSockets() const;

  protected:
    void DoDispose() override;

  private:
    void Dequeued(Ptr<const QueueDiscItem> item);

    Ptr<Node> m_node;
    std::vector<Ptr<RdmaSocket>> m_sockets;
    std::vector<Ptr<RdmaSocket>> m_waiting;
    std::set<Ptr<QueueDisc>> m_watched;
};

} // namespace ns3

#endif
