// One worker of a ring-allreduce training job: per-layer forward
// and backward compute as scheduled events, one layer at a time; after
// backward of a layer that closes a fused buffer, the job's syncer is told
// the buffer is ready; the syncer starts its allreduce on every worker.
//
// The ring runs over ONE persistent TCP connection to the right neighbour
// (opened at application start) and the one accepted from the left
// neighbour. A buffer is split into N partitions; at step s (of 2(N-1)) this
// worker sends partition (rank - s) mod N, and sends step s+1 only once the
// whole step-s partition from the left has arrived. Bytes are not tagged:
// both ends know the partition sizes in order, so received-byte accounting
// on the stream tells when a partition is complete. The allreduce is
// finished here when the last partition has arrived.
//
// Forward of layer i in iteration k > 0 starts when layer i's gradients of
// iteration k-1 are synchronised here and forward of i-1 is done; with the
// job's Barrier, forward of layer 0 waits for all gradients.
#ifndef DDNN_RING_ALLREDUCE_WORKER_H
#define DDNN_RING_ALLREDUCE_WORKER_H

#include "ring-allreduce-job.h"
#include "training-worker.h"

#include "ns3/ipv4-address.h"
#include "ns3/socket.h"

#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief One worker of a ring-allreduce job: computes and runs the ring's steps with its neighbours.
 */
class RingAllreduceWorker : public TrainingWorker
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    RingAllreduceWorker();

    /// \brief Join `job` as rank `rank`: the left neighbour connects from `left`,
    /// this worker connects to `right` (on the job's port).
    void Setup(Ptr<RingAllreduceJob> job, uint32_t rank, Ipv4Address left, Ipv4Address right);

    /// \brief True while the connection to the right neighbour is established.
    bool IsConnected() const override;
    /// \brief True while the left neighbour's connection is accepted and not failed.
    bool HasLeftConnection() const;
    /// \brief Bytes received from the left neighbour (payload).
    uint64_t GetBytesReceived() const;

    /// \brief Called by the job's syncer: start the allreduce of `buffer` of `iteration`.
    void StartAllreduce(uint64_t iteration, uint32_t buffer);

  protected:
    void DoDispose() override;

  private:
    /// Listen for the left neighbour, connect to the right one.
    void StartCommunication() override;
    /// Tell the job's syncer about the buffers that close after `layer`.
    void GradientsReady(uint64_t iteration, uint32_t layer) override;

    // ring
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
    void ClearCallbacks(Ptr<Socket> socket);

    Ptr<RingAllreduceJob> m_job; //!< the job (TrainingWorker's, typed)
    uint32_t m_n;
    Ipv4Address m_left;
    Ipv4Address m_right;

    std::vector<uint32_t> m_partsSynced; //!< per layer: its buffers allreduced this iteration

    // allreduce state
    bool m_arActive;
    uint64_t m_arIteration;
    uint32_t m_arBuffer;
    uint32_t m_rxStep;      //!< step whose partition is being received
    uint64_t m_rxInStep;    //!< bytes of it received so far
    uint64_t m_rxUnclaimed; //!< received bytes not yet assigned to a partition
    uint64_t m_rxTotal;
    uint64_t m_txBacklog;   //!< bytes of sent partitions not yet in the socket

    // sockets
    Ptr<Socket> m_sendSocket;
    Ptr<Socket> m_listener;
    Ptr<Socket> m_recvSocket;
    bool m_connected; //!< connection to the right neighbour is up
    bool m_leftUp;    //!< connection from the left neighbour is up
    int32_t m_ackTos; //!< from the job: ToS of the receiving socket; -1 = buffer's
};

} // namespace ns3

#endif
