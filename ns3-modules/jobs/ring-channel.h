// One worker's side of a ring: the persistent TCP connection to its right
// neighbour (opened at start) and the one it accepts from its left
// neighbour, and the steps of one ring collective at a time over them.
//
// A collective of `steps` steps over N workers: at step s this worker sends
// partition (rank - s) mod N, and sends step s+1 only once the whole step-s
// partition from the left has arrived. Bytes are not tagged: both ends know
// the partition sizes in order (the owner's PartitionBytes callback), so
// received-byte accounting on the stream tells when a partition is
// complete. The collective is finished here when the last partition has
// arrived. A ring-allreduce (RingAllreduceWorker) is 2(N-1) steps: a
// reduce-scatter then an all-gather; a sharded job's all-gather or
// reduce-scatter (ShardedWorker) is N-1.
//
// The owner (a training worker) says what a partition weighs and hears of
// every partition sent, every byte written, every partition received, the
// end of the collective and errors, through callbacks; it halts the
// channel when its application stops (the connections stay up: a close
// would look like a failure to the peers still running).
#ifndef DDNN_RING_CHANNEL_H
#define DDNN_RING_CHANNEL_H

#include "ns3/callback.h"
#include "ns3/ipv4-address.h"
#include "ns3/node.h"
#include "ns3/object.h"
#include "ns3/socket.h"

#include <cstdint>
#include <string>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief A worker's two ring connections and the steps of one ring collective at a time.
 */
class RingChannel : public Object
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (not set up).
    RingChannel();

    /// \brief Be rank `rank` of `nRanks` on `node`: the left neighbour connects
    /// from `left`, this end connects to `right`, both on `port`. `ackTos`:
    /// the receiving socket's ToS (-1: the collective's). `collective` names
    /// a collective in error messages ("allreduce"). `transport`: the socket
    /// factory of both connections (CreateTransportSocket).
    void Setup(Ptr<Node> node,
               uint32_t rank,
               uint32_t nRanks,
               Ipv4Address left,
               Ipv4Address right,
               uint16_t port,
               int32_t ackTos,
               const std::string& collective,
               TypeId transport);

    /// \brief Payload bytes of partition `partition` of the collective in flight.
    void SetPartitionBytesCallback(Callback<uint64_t, uint32_t> partitionBytes);
    /// \brief Called with (step, partition, bytes) when a partition is handed to the socket.
    void SetPartitionSentCallback(Callback<void, uint32_t, uint32_t, uint64_t> sent);
    /// \brief Called with the payload bytes each time the socket accepts some.
    void SetBytesSentCallback(Callback<void, uint64_t> bytesSent);
    /// \brief Called with the step when the whole partition of that step has arrived from the left.
    void SetPartitionReceivedCallback(Callback<void, uint32_t> received);
    /// \brief Called when the collective's last partition has arrived here.
    void SetFinishedCallback(Callback<void> finished);
    /// \brief Called with a message on a socket error, an unexpected close or
    /// a protocol violation.
    void SetErrorCallback(Callback<void, const std::string&> error);

    /// \brief Listen for the left neighbour and connect to the right one; until
    /// the first collective, both connections' packets carry `firstTos`.
    void Open(uint8_t firstTos);
    /// \brief The owner stopped: send and process nothing more (connections stay).
    void Halt();
    /// \brief Start a collective of `steps` steps whose data travels with ToS `tos`.
    void Start(uint32_t steps, uint8_t tos);
    /// \brief Move the collective in flight (if any) to ToS `tos`: every segment
    /// not yet transmitted, retransmissions included.
    void Raise(uint8_t tos);

    /// \brief True while a collective is in flight here.
    bool IsActive() const;
    /// \brief True while the connection to the right neighbour is established.
    bool IsConnected() const;
    /// \brief True while the left neighbour's connection is accepted and not failed.
    bool HasLeftConnection() const;
    /// \brief Bytes received from the left neighbour (payload).
    uint64_t GetBytesReceived() const;

  protected:
    void DoDispose() override;

  private:
    void SendStep(uint32_t step);
    void Flush(Ptr<Socket> socket, uint32_t available);
    void ProcessReceived();
    uint32_t SendPartition(uint32_t step) const;
    uint32_t ReceivePartition(uint32_t step) const;
    void SetTos(uint8_t tos);

    // sockets
    void ConnectionSucceeded(Ptr<Socket> socket);
    void ConnectionFailed(Ptr<Socket> socket);
    bool AcceptRequest(Ptr<Socket> socket, const Address& from);
    void Accepted(Ptr<Socket> socket, const Address& from);
    void Receive(Ptr<Socket> socket);
    void SendSocketClosed(Ptr<Socket> socket);
    void SendSocketError(Ptr<Socket> socket);
    void RecvSocketClosed(Ptr<Socket> socket);
    void RecvSocketError(Ptr<Socket> socket);
    static void ClearCallbacks(Ptr<Socket> socket);

    Ptr<Node> m_node;
    uint32_t m_rank;
    uint32_t m_n;
    Ipv4Address m_left;
    Ipv4Address m_right;
    uint16_t m_port;
    int32_t m_ackTos; //!< ToS of the receiving socket; -1 = the collective's
    std::string m_collective;
    TypeId m_transport;

    Callback<uint64_t, uint32_t> m_partitionBytes;
    Callback<void, uint32_t, uint32_t, uint64_t> m_partitionSent;
    Callback<void, uint64_t> m_bytesSent;
    Callback<void, uint32_t> m_partitionReceived;
    Callback<void> m_finished;
    Callback<void, const std::string&> m_error;

    bool m_open; //!< between Open() and Halt()

    // the collective in flight
    bool m_active;
    uint32_t m_steps;
    uint8_t m_tos;
    uint32_t m_rxStep;      //!< step whose partition is being received
    uint64_t m_rxInStep;    //!< bytes of it received so far
    uint64_t m_rxUnclaimed; //!< received bytes not yet assigned to a partition
    uint64_t m_rxTotal;
    uint64_t m_txBacklog;   //!< bytes of sent partitions not yet in the socket

    Ptr<Socket> m_sendSocket;
    Ptr<Socket> m_listener;
    Ptr<Socket> m_recvSocket;
    bool m_connected; //!< connection to the right neighbour is up
    bool m_leftUp;    //!< connection from the left neighbour is up
};

} // namespace ns3

#endif
