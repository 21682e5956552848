// One worker of a sharded data-parallel job (ShardedJob): its compute, in
// phases of layer groups, each phase waiting for its group's all-gather, and
// its side of the ring collectives.
//
// Compute: iteration k is forward of groups 0..G-1, then backward G-1..0
// (layer by layer within a group: forward first..last, backward last..first),
// one layer at a time. A phase may start once the phase before it is done
// and, if it gathers (ShardedJob::PhaseGathers), its all-gather has finished
// here. When phase q is due (the phase before it finished; phase 0: the
// iteration started) the all-gathers of phases up to q + PrefetchDepth are
// issued to the job's syncer; when backward of group g is done its
// reduce-scatter is issued. The iteration ends, and the next one starts,
// when every reduce-scatter of it has finished here. Slowdowns and
// per-iteration compute factors stretch a layer's compute as for every
// training worker (TrainingWorker's LayerCompute does the arithmetic; its
// data-parallel timeline, whose backward never waits, is not run here).
//
// Ring: ONE persistent TCP connection to the right neighbour (opened at
// start) and the one accepted from the left neighbour, as a ring-allreduce
// worker's. A collective of a group of S bytes runs N-1 steps; at step s this
// worker sends partition (rank - s) mod N (S//N bytes, the first S%N one byte
// larger), and step s+1 only once the whole step-s partition from the left
// has arrived. Bytes are not tagged: both ends know the partition sizes in
// order. The collective is finished here when the last partition arrived.
#ifndef DDNN_SHARDED_WORKER_H
#define DDNN_SHARDED_WORKER_H

#include "sharded-job.h"
#include "training-worker.h"

#include "ns3/event-id.h"
#include "ns3/ipv4-address.h"
#include "ns3/socket.h"

#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief One worker of a sharded data-parallel job: phase-by-phase compute
 * gated by all-gathers, and the ring steps of the job's collectives.
 */
class ShardedWorker : public TrainingWorker
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    ShardedWorker();

    /// \brief Join `job` as rank `rank`: the left neighbour connects from `left`,
    /// this worker connects to `right` (on the job's port).
    void Setup(Ptr<ShardedJob> job, uint32_t rank, Ipv4Address left, Ipv4Address right);

    /// \brief True while the connection to the right neighbour is established.
    bool IsConnected() const override;
    /// \brief True while the left neighbour's connection is accepted and not failed.
    bool HasLeftConnection() const;
    /// \brief Bytes received from the left neighbour (payload).
    uint64_t GetBytesReceived() const;
    /// \brief Iteration being computed (0-based). (TrainingWorker::GetIteration
    /// reads the LayerCompute timeline, which this worker does not run.)
    uint64_t GetCurrentIteration() const;
    /// \brief Compute phase being computed or waited for (0..2G-1).
    uint32_t GetPhase() const;

    /// \brief Called by the job's syncer: start collective `slot` of `iteration`.
    void StartCollective(uint64_t iteration, uint32_t slot);

  protected:
    void DoDispose() override;

  private:
    // the application: its own compute timeline instead of LayerCompute's
    void StartApplication() override;
    void StopApplication() override;
    /// Listen for the left neighbour, connect to the right one.
    void StartCommunication() override;
    /// Not called: this worker runs its own timeline (LayerCompute's callback).
    void GradientsReady(uint64_t iteration, uint32_t layer) override;

    // compute
    void BeginIteration();
    void PhaseDue();
    void TryStartPhase();
    void ComputeLayer();
    void LayerDone();
    void PhaseDone();
    void CollectiveDone(uint32_t slot);
    void CheckIterationEnd();
    uint32_t CurrentLayer() const;
    Time Duration(Time work) const;

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

    Ptr<ShardedJob> m_job; //!< the job (TrainingWorker's, typed)
    uint32_t m_n;
    Ipv4Address m_left;
    Ipv4Address m_right;

    // compute state
    uint64_t m_iteration;
    uint32_t m_phase;          //!< phase computing or due
    uint32_t m_layerInPhase;   //!< layers of the phase done
    bool m_busy;               //!< a layer's compute event is pending
    bool m_phasesDone;         //!< every phase of m_iteration is computed
    uint32_t m_nextIssue;      //!< next phase whose all-gather is not issued yet
    uint32_t m_reduceScattered; //!< reduce-scatters of m_iteration finished here
    std::vector<bool> m_gathered; //!< per phase: its all-gather finished here
    EventId m_event;
    Time m_computeStart;

    // collective state
    bool m_collActive;
    uint64_t m_collIteration;
    uint32_t m_collSlot;
    uint32_t m_collGroup;
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
    int32_t m_ackTos; //!< from the job: ToS of the receiving socket; -1 = collective's
};

} // namespace ns3

#endif
