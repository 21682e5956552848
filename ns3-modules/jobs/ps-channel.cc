#include "ps-channel.h"

#include "ps-job.h"
#include "tcp-socket-ddnn.h"

#include "ns3/abort.h"
#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PsChannel");

NS_OBJECT_ENSURE_REGISTERED(PsChannel);

TypeId
PsChannel::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PsChannel").SetParent<Object>().SetGroupName("Ddnn");
    return tid;
}

PsChannel::PsChannel()
    : m_job(nullptr),
      m_worker(0),
      m_shard(0),
      m_push(true),
      m_local(false),
      m_peer(nullptr),
      m_inflight(0)
{
    NS_LOG_FUNCTION(this);
}

void
PsChannel::Setup(PsJob* job,
                 Ptr<Node> node,
                 uint32_t worker,
                 uint32_t shard,
                 bool push,
                 Ptr<CommScheduler> scheduler)
{
    NS_LOG_FUNCTION(this << job << node << worker << shard << push << scheduler);
    m_job = job;
    m_node = node;
    m_worker = worker;
    m_shard = shard;
    m_push = push;
    m_scheduler = scheduler;
    m_conns.assign(job->GetClasses().size(), Connection());
}

void
PsChannel::SetPeer(PsChannel* peer)
{
    NS_LOG_FUNCTION(this << peer);
    m_peer = peer;
}

void
PsChannel::SetLocal(bool local)
{
    NS_LOG_FUNCTION(this << local);
    m_local = local;
}

void
PsChannel::SetCallbacks(ChunkCallback chunk, ProgressCallback progress, ErrorCallback error)
{
    NS_LOG_FUNCTION(this);
    m_chunkCallback = chunk;
    m_progressCallback = progress;
    m_errorCallback = error;
}

bool
PsChannel::IsLocal() const
{
    NS_LOG_FUNCTION(this);
    return m_local;
}

bool
PsChannel::IsConnected() const
{
    NS_LOG_FUNCTION(this);
    if (m_local)
    {
        return true;
    }
    for (const auto& c : m_conns)
    {
        if (!c.up)
        {
            return false;
        }
    }
    return true;
}

bool
PsChannel::HasConnection(uint32_t cls) const
{
    NS_LOG_FUNCTION(this << cls);
    return cls < m_conns.size() && m_conns[cls].socket;
}

Ptr<CommScheduler>
PsChannel::GetScheduler() const
{
    NS_LOG_FUNCTION(this);
    return m_scheduler;
}

void
PsChannel::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (auto& c : m_conns)
    {
        if (c.socket)
        {
            // detach: the run may end mid-transfer
            c.socket->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
            c.socket->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
            c.socket->SetConnectCallback(MakeNullCallback<void, Ptr<Socket>>(),
                                         MakeNullCallback<void, Ptr<Socket>>());
            c.socket->SetCloseCallbacks(MakeNullCallback<void, Ptr<Socket>>(),
                                        MakeNullCallback<void, Ptr<Socket>>());
        }
    }
    m_pumpEvent.Cancel();
    m_conns.clear();
    m_scheduler = nullptr;
    m_node = nullptr;
    m_peer = nullptr;
    m_job = nullptr;
    m_chunkCallback = MakeNullCallback<void, const PsChunk&>();
    m_progressCallback = MakeNullCallback<void, const PsChunk&, uint64_t, uint64_t>();
    m_errorCallback = MakeNullCallback<void, const std::string&>();
    Object::DoDispose();
}

// ------------------------------------------------------------------ connections

void
PsChannel::Watch(uint32_t cls, Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << cls << socket);
    socket->SetRecvCallback(MakeCallback(&PsChannel::Receive, this, cls));
    socket->SetSendCallback(MakeCallback(&PsChannel::SendReady, this, cls));
    socket->SetCloseCallbacks(MakeCallback(&PsChannel::Closed, this, cls),
                              MakeCallback(&PsChannel::Failed, this, cls));
}

void
PsChannel::Connect(Ipv4Address server)
{
    NS_LOG_FUNCTION(this << server);
    NS_ABORT_MSG_IF(m_local, "PsChannel: a local channel has no connections");
    const auto& classes = m_job->GetClasses();
    for (uint32_t cls = 0; cls < classes.size(); ++cls)
    {
        Ptr<Socket> socket = m_job->CreateSocket(m_node);
        socket->SetIpTos(classes[cls]); // before Connect(): the SYN travels in this class
        socket->Bind();
        socket->SetConnectCallback(MakeCallback(&PsChannel::Connected, this, cls),
                                   MakeCallback(&PsChannel::ConnectFailed, this, cls));
        m_conns[cls].socket = socket;
        socket->Connect(InetSocketAddress(server, m_job->GetPort() + cls));
    }
}

void
PsChannel::Connected(uint32_t cls, Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << cls << socket);
    m_conns[cls].up = true;
    Watch(cls, socket);
    Flush(cls);
}

void
PsChannel::ConnectFailed(uint32_t cls, Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << cls << socket);
    Error("connection of class " + std::to_string(cls) + " failed (errno " +
          std::to_string(int(socket->GetErrno())) + ")");
}

void
PsChannel::Attach(uint32_t cls, Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << cls << socket);
    NS_ABORT_MSG_IF(cls >= m_conns.size(), "PsChannel: no class " << cls);
    if (m_conns[cls].socket)
    {
        Error("a second connection of class " + std::to_string(cls));
        return;
    }
    m_conns[cls].socket = socket;
    m_conns[cls].up = true;
    socket->SetIpTos(m_job->GetClasses()[cls]);
    Watch(cls, socket);
    Flush(cls);
}

void
PsChannel::Closed(uint32_t cls, Ptr<Socket>)
{
    NS_LOG_FUNCTION(this << cls);
    m_conns[cls].up = false;
    Error("connection of class " + std::to_string(cls) + " closed by the other end");
}

void
PsChannel::Failed(uint32_t cls, Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << cls << socket);
    // (ns-3 leaves errno at 0 when the retransmissions run out)
    m_conns[cls].up = false;
    Error("connection of class " + std::to_string(cls) + " failed (errno " +
          std::to_string(int(socket->GetErrno())) + ")");
}

void
PsChannel::Error(const std::string& what)
{
    NS_LOG_FUNCTION(this << what);
    if (!m_errorCallback.IsNull())
    {
        m_errorCallback(what);
    }
}

// ------------------------------------------------------------------ sending

void
PsChannel::Send(PsChunk item, Time raiseAt)
{
    NS_LOG_FUNCTION(this << raiseAt);
    const int32_t deadlineTos = m_job->GetDeadlineTos();
    if (deadlineTos >= 0 && item.deadlineNs >= 0 && item.tos != uint8_t(deadlineTos))
    {
        if (raiseAt <= Simulator::Now())
        {
            item.tos = uint8_t(deadlineTos); // no slack left already
        }
        else
        {
            Simulator::Schedule(raiseAt - Simulator::Now(),
                                &PsChannel::RaiseNow,
                                this,
                                item.iteration,
                                item.tensor);
        }
    }
    m_scheduler->Enqueue(item);
    Pump();
}

void
PsChannel::RaiseNow(uint64_t iteration, uint32_t tensor)
{
    NS_LOG_FUNCTION(this << iteration << tensor);
    if (m_scheduler)
    {
        m_scheduler->Raise(iteration, tensor, uint8_t(m_job->GetDeadlineTos()));
    }
}

void
PsChannel::Pump()
{
    NS_LOG_FUNCTION(this);
    PsChunk chunk;
    const Time overhead = m_job ? m_job->GetChunkOverhead() : Time(0);
    while (m_scheduler)
    {
        if (overhead.IsStrictlyPositive() && Simulator::Now() < m_engineFree)
        {
            if (!m_pumpEvent.IsPending())
            {
                m_pumpEvent =
                    Simulator::Schedule(m_engineFree - Simulator::Now(), &PsChannel::Pump, this);
            }
            return;
        }
        if (!m_scheduler->Next(m_inflight, chunk))
        {
            return;
        }
        m_engineFree = Simulator::Now() + overhead;
        m_inflight += chunk.bytes;
        chunk.row = m_job->NotifyChunkSent(m_worker, m_shard, m_push, chunk, m_local);
        if (m_local)
        {
            Simulator::ScheduleNow(&PsChannel::LocalArrive, m_peer, chunk, Simulator::Now());
            continue;
        }
        const uint32_t cls = m_job->GetClassIndex(chunk.tos);
        m_peer->m_conns[cls].incoming.emplace_back(chunk, Simulator::Now());
        m_conns[cls].backlog += chunk.bytes;
        Flush(cls);
    }
}

void
PsChannel::SendReady(uint32_t cls, Ptr<Socket>, uint32_t)
{
    NS_LOG_FUNCTION(this << cls);
    Flush(cls);
}

void
PsChannel::Flush(uint32_t cls)
{
    NS_LOG_FUNCTION(this << cls);
    Connection& c = m_conns[cls];
    if (!c.up)
    {
        return; // sent once the connection is up
    }
    while (c.backlog > 0)
    {
        const uint32_t room = c.socket->GetTxAvailable();
        if (room == 0)
        {
            return; // the send callback calls again when the buffer drains
        }
        const uint32_t size = uint32_t(std::min<uint64_t>(c.backlog, room));
        const int accepted = c.socket->Send(Create<Packet>(size));
        if (accepted < 0)
        {
            Error("send failed (errno " + std::to_string(int(c.socket->GetErrno())) + ")");
            return;
        }
        if (accepted == 0)
        {
            return;
        }
        c.backlog -= uint64_t(accepted);
    }
}

// ------------------------------------------------------------------ receiving

void
PsChannel::Receive(uint32_t cls, Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << cls << socket);
    while (Ptr<Packet> packet = socket->Recv())
    {
        if (packet->GetSize() == 0)
        {
            break;
        }
        Consume(cls, packet->GetSize());
    }
}

void
PsChannel::Consume(uint32_t cls, uint64_t bytes)
{
    NS_LOG_FUNCTION(this << cls << bytes);
    Connection& c = m_conns[cls];
    while (bytes > 0)
    {
        if (c.incoming.empty())
        {
            Error(std::to_string(bytes) + " bytes received that the other end never sent");
            return;
        }
        const auto [chunk, sent] = c.incoming.front();
        const uint64_t take = std::min(bytes, chunk.bytes - c.rxInChunk);
        const uint64_t from = c.rxInChunk;
        c.rxInChunk += take;
        bytes -= take;
        const bool complete = c.rxInChunk == chunk.bytes;
        if (complete)
        {
            c.incoming.pop_front();
            c.rxInChunk = 0;
        }
        Arrived(chunk, sent, from, from + take, complete);
        if (!m_job)
        {
            return; // disposed by a callback
        }
    }
}

void
PsChannel::LocalArrive(PsChunk chunk, Time sent)
{
    NS_LOG_FUNCTION(this << sent);
    if (m_job)
    {
        Arrived(chunk, sent, 0, chunk.bytes, true);
    }
}

void
PsChannel::Arrived(const PsChunk& chunk, Time sent, uint64_t from, uint64_t to, bool complete)
{
    NS_LOG_FUNCTION(this << sent << from << to << complete);
    if (!m_progressCallback.IsNull())
    {
        m_progressCallback(chunk, from, to);
    }
    if (!complete)
    {
        return;
    }
    m_job->NotifyChunkDelivered(chunk.row);
    if (!m_chunkCallback.IsNull())
    {
        m_chunkCallback(chunk);
    }
    m_peer->Delivered(chunk, sent);
}

void
PsChannel::Delivered(const PsChunk& chunk, Time sent)
{
    NS_LOG_FUNCTION(this << sent);
    m_inflight -= chunk.bytes;
    m_scheduler->NotifyDelivered(chunk, sent);
    Pump();
}

} // namespace ns3
