// One end of the link between a PS worker and one shard: one persistent TCP
// connection per traffic class of the job (the worker end connects to port
// Port + class index; the shard end attaches what its listeners accept), or
// no connection at all when worker and shard share a host (chunks are then
// delivered at once, as a local copy).
//
// Sending: items go to the end's CommScheduler; Pump() commits what the
// policy admits into the connection of the chunk's class. Receiving: bytes
// are not tagged on the wire; the sending end appends each committed chunk's
// descriptor to this end's queue for that connection, and TCP's in-order
// delivery tells where one chunk ends and the next begins (received-byte
// accounting, as in the ring). When a chunk is complete the sending end's
// in-flight bytes drop (the credit of bytescheduler and friends). With the
// job's ChunkOverhead, commits of this end are at least that far apart.
#ifndef DDNN_PS_CHANNEL_H
#define DDNN_PS_CHANNEL_H

#include "comm-scheduler.h"

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/ipv4-address.h"
#include "ns3/node.h"
#include "ns3/object.h"
#include "ns3/socket.h"

#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

class PsJob;

/**
 * \ingroup ddnn
 * \brief One end of the link between a PS worker and one shard: a TCP connection per class, or a local copy.
 */
class PsChannel : public Object
{
  public:
    /// \brief A whole chunk arrived.
    typedef Callback<void, const PsChunk&> ChunkCallback;
    /// \brief Bytes [from, to) of a chunk (offsets within the chunk) arrived.
    typedef Callback<void, const PsChunk&, uint64_t, uint64_t> ProgressCallback;
    /// \brief A socket error or unexpected close of this end.
    typedef Callback<void, const std::string&> ErrorCallback;

    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    PsChannel();

    /// \brief This end, on `node`, of the link between `worker` and `shard`; it
    /// sends pushes (the worker's end) or pulls (the shard's end).
    void Setup(PsJob* job, Ptr<Node> node, uint32_t worker, uint32_t shard, bool push,
               Ptr<CommScheduler> scheduler);
    /// \brief The other end (the two ends are wired by PsJob::Wire()).
    void SetPeer(PsChannel* peer);
    /// \brief Worker and shard share a host: chunks are delivered at once, no connection.
    void SetLocal(bool local);
    /// \brief What to call when a chunk or part of one arrives, and on errors.
    void SetCallbacks(ChunkCallback chunk, ProgressCallback progress, ErrorCallback error);

    /// \brief Worker end: open one connection per class to the shard at `server`.
    void Connect(Ipv4Address server);
    /// \brief Shard end: the accepted connection of class `cls`.
    void Attach(uint32_t cls, Ptr<Socket> socket);
    /// \brief Send `item`; at `raiseAt` (if the job has a deadline class and the
    /// item is not yet sent) its class is raised to that class.
    void Send(PsChunk item, Time raiseAt);

    /// \brief Whether this end delivers locally (no connection).
    bool IsLocal() const;
    /// \brief Every connection of this end is up (true for a local channel).
    bool IsConnected() const;
    /// \brief Whether this end has a connection of class index `cls`.
    bool HasConnection(uint32_t cls) const;
    /// \brief The policy ordering this end's sends.
    Ptr<CommScheduler> GetScheduler() const;

  protected:
    void DoDispose() override;

  private:
    struct Connection
    {
        Ptr<Socket> socket;
        bool up = false;
        uint64_t backlog = 0;                        //!< committed, not yet in the socket
        std::deque<std::pair<PsChunk, Time>> incoming; //!< the peer's commits, stream order
        uint64_t rxInChunk = 0;                      //!< bytes of incoming.front() received
    };

    void Pump();
    void Flush(uint32_t cls);
    void SendReady(uint32_t cls, Ptr<Socket> socket, uint32_t available);
    void Receive(uint32_t cls, Ptr<Socket> socket);
    void Consume(uint32_t cls, uint64_t bytes);
    void Arrived(const PsChunk& chunk, Time sent, uint64_t from, uint64_t to, bool complete);
    void LocalArrive(PsChunk chunk, Time sent);
    void Delivered(const PsChunk& chunk, Time sent);
    void RaiseNow(uint64_t iteration, uint32_t tensor);
    void Connected(uint32_t cls, Ptr<Socket> socket);
    void ConnectFailed(uint32_t cls, Ptr<Socket> socket);
    void Closed(uint32_t cls, Ptr<Socket> socket);
    void Failed(uint32_t cls, Ptr<Socket> socket);
    void Error(const std::string& what);
    void Watch(uint32_t cls, Ptr<Socket> socket);

    PsJob* m_job;
    Ptr<Node> m_node;
    uint32_t m_worker;
    uint32_t m_shard;
    bool m_push;
    bool m_local;
    Ptr<CommScheduler> m_scheduler;
    PsChannel* m_peer;
    std::vector<Connection> m_conns;
    uint64_t m_inflight;
    Time m_engineFree;  //!< ChunkOverhead: the next commit may happen from then on
    EventId m_pumpEvent; //!< a Pump() waiting for m_engineFree
    ChunkCallback m_chunkCallback;
    ProgressCallback m_progressCallback;
    ErrorCallback m_errorCallback;
};

} // namespace ns3

#endif
