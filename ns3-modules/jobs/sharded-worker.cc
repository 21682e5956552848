#include "sharded-worker.h"

#include "ns3/abort.h"
#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-factory.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ShardedWorker");

NS_OBJECT_ENSURE_REGISTERED(ShardedWorker);

TypeId
ShardedWorker::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ShardedWorker")
                            .SetParent<TrainingWorker>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<ShardedWorker>();
    return tid;
}

ShardedWorker::ShardedWorker()
    : m_n(0),
      m_iteration(0),
      m_phase(0),
      m_layerInPhase(0),
      m_busy(false),
      m_phasesDone(false),
      m_nextIssue(0),
      m_reduceScattered(0),
      m_collActive(false),
      m_collIteration(0),
      m_collSlot(0),
      m_collGroup(0),
      m_rxStep(0),
      m_rxInStep(0),
      m_rxUnclaimed(0),
      m_rxTotal(0),
      m_txBacklog(0),
      m_connected(false),
      m_leftUp(false),
      m_ackTos(-1)
{
    NS_LOG_FUNCTION(this);
}

void
ShardedWorker::Setup(Ptr<ShardedJob> job, uint32_t rank, Ipv4Address left, Ipv4Address right)
{
    NS_LOG_FUNCTION(this << job << rank << left << right);
    SetupWorker(job, rank);
    m_job = job;
    m_left = left;
    m_right = right;
}

bool
ShardedWorker::IsConnected() const
{
    NS_LOG_FUNCTION(this);
    return m_connected;
}

bool
ShardedWorker::HasLeftConnection() const
{
    NS_LOG_FUNCTION(this);
    return m_leftUp;
}

uint64_t
ShardedWorker::GetBytesReceived() const
{
    NS_LOG_FUNCTION(this);
    return m_rxTotal;
}

uint64_t
ShardedWorker::GetCurrentIteration() const
{
    NS_LOG_FUNCTION(this);
    return m_iteration;
}

uint32_t
ShardedWorker::GetPhase() const
{
    NS_LOG_FUNCTION(this);
    return m_phase;
}

void
ShardedWorker::ClearCallbacks(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    if (!socket)
    {
        return;
    }
    socket->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
    socket->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
    socket->SetConnectCallback(MakeNullCallback<void, Ptr<Socket>>(),
                               MakeNullCallback<void, Ptr<Socket>>());
    socket->SetCloseCallbacks(MakeNullCallback<void, Ptr<Socket>>(),
                              MakeNullCallback<void, Ptr<Socket>>());
    socket->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                              MakeNullCallback<void, Ptr<Socket>, const Address&>());
}

void
ShardedWorker::DoDispose()
{
    NS_LOG_FUNCTION(this);
    // The run may end with a collective in flight: detach from the sockets
    // so nothing calls back into a disposed worker while ns-3 tears down.
    m_event.Cancel();
    ClearCallbacks(m_sendSocket);
    ClearCallbacks(m_recvSocket);
    ClearCallbacks(m_listener);
    m_sendSocket = nullptr;
    m_recvSocket = nullptr;
    m_listener = nullptr;
    m_job = nullptr;
    TrainingWorker::DoDispose();
}

// ------------------------------------------------------------------ start and stop

void
ShardedWorker::StartApplication()
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(!m_job, "ShardedWorker: Setup() before the application starts");
    m_running = true;
    StartCommunication();
    m_iteration = 0;
    BeginIteration();
}

void
ShardedWorker::StopApplication()
{
    NS_LOG_FUNCTION(this);
    // Compute stops; the connections are left as they are (a close would
    // look like a failure to the peers that are still running).
    m_running = false;
    m_event.Cancel();
    m_busy = false;
}

void
ShardedWorker::StartCommunication()
{
    NS_LOG_FUNCTION(this);
    m_n = m_job->GetNWorkers();
    m_ackTos = m_job->GetAckTos();

    const uint16_t port = m_job->GetPort();
    // The first data on the connection is the all-gather of group 0: its
    // class is the connection's class until the first collective.
    const uint8_t firstTos = m_job->GetGroupTos(0);

    m_listener = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    m_listener->SetIpTos(m_ackTos < 0 ? firstTos : uint8_t(m_ackTos)); // SYN-ACK
    if (m_listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), port)) != 0)
    {
        Error("cannot bind port " + std::to_string(port));
    }
    m_listener->Listen();
    m_listener->SetAcceptCallback(MakeCallback(&ShardedWorker::AcceptRequest, this),
                                  MakeCallback(&ShardedWorker::Accepted, this));

    m_sendSocket = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    m_sendSocket->SetIpTos(firstTos); // before Connect(): the SYN travels in this class
    m_sendSocket->Bind();
    m_sendSocket->SetConnectCallback(MakeCallback(&ShardedWorker::ConnectionSucceeded, this),
                                     MakeCallback(&ShardedWorker::ConnectionFailed, this));
    m_sendSocket->SetCloseCallbacks(MakeCallback(&ShardedWorker::SendSocketClosed, this),
                                    MakeCallback(&ShardedWorker::SendSocketError, this));
    m_sendSocket->Connect(InetSocketAddress(m_right, port));
}

void
ShardedWorker::GradientsReady(uint64_t, uint32_t)
{
    NS_LOG_FUNCTION(this);
    // LayerCompute's callback: its timeline is not run by this worker.
}

// ------------------------------------------------------------------ compute

void
ShardedWorker::BeginIteration()
{
    NS_LOG_FUNCTION(this);
    m_job->NotifyIterationStart(m_rank, m_iteration);
    m_phase = 0;
    m_layerInPhase = 0;
    m_busy = false;
    m_phasesDone = false;
    m_nextIssue = 0;
    m_reduceScattered = 0;
    m_gathered.assign(m_job->GetNPhases(), false);
    PhaseDue();
}

void
ShardedWorker::PhaseDue()
{
    NS_LOG_FUNCTION(this);
    // phase m_phase is due: issue the all-gathers up to PrefetchDepth phases ahead
    const uint64_t last =
        std::min<uint64_t>(uint64_t(m_phase) + m_job->GetPrefetchDepth(), m_job->GetNPhases() - 1);
    for (; m_nextIssue <= last; ++m_nextIssue)
    {
        if (m_job->PhaseGathers(m_nextIssue))
        {
            m_job->NotifyCollectiveReady(m_rank, m_iteration, m_nextIssue);
        }
    }
    TryStartPhase();
}

void
ShardedWorker::TryStartPhase()
{
    NS_LOG_FUNCTION(this);
    if (!m_running || m_busy || m_phasesDone)
    {
        return;
    }
    if (m_job->PhaseGathers(m_phase) && !m_gathered[m_phase])
    {
        return; // resumed by the all-gather of this phase
    }
    m_busy = true;
    m_layerInPhase = 0;
    ComputeLayer();
}

uint32_t
ShardedWorker::CurrentLayer() const
{
    NS_LOG_FUNCTION(this);
    const uint32_t group = m_job->GetPhaseGroup(m_phase);
    return m_job->IsBackwardPhase(m_phase) ? m_job->GetGroupLast(group) - m_layerInPhase
                                           : m_job->GetGroupFirst(group) + m_layerInPhase;
}

Time
ShardedWorker::Duration(Time work) const
{
    NS_LOG_FUNCTION(this << work);
    // as LayerCompute: the iteration's factor, then the slowdown periods
    const double f = m_compute.GetIterationFactor(m_iteration);
    if (f != 1.0)
    {
        work = NanoSeconds(int64_t(double(work.GetNanoSeconds()) * f + 0.5));
    }
    return m_compute.Stretch(work);
}

void
ShardedWorker::ComputeLayer()
{
    NS_LOG_FUNCTION(this);
    const uint32_t layer = CurrentLayer();
    const Time work = m_job->IsBackwardPhase(m_phase) ? m_job->GetBackwardTime(layer)
                                                      : m_job->GetForwardTime(layer);
    m_computeStart = Simulator::Now();
    m_event = Simulator::Schedule(Duration(work), &ShardedWorker::LayerDone, this);
}

void
ShardedWorker::LayerDone()
{
    NS_LOG_FUNCTION(this);
    const uint32_t layer = CurrentLayer();
    const bool backward = m_job->IsBackwardPhase(m_phase);
    m_job->NotifyComputeDone(m_rank, m_iteration, layer, backward, m_computeStart);
    if (!m_running)
    {
        return;
    }
    const uint32_t group = m_job->GetPhaseGroup(m_phase);
    const uint32_t size = m_job->GetGroupLast(group) - m_job->GetGroupFirst(group) + 1;
    if (++m_layerInPhase < size)
    {
        ComputeLayer();
        return;
    }
    PhaseDone();
}

void
ShardedWorker::PhaseDone()
{
    NS_LOG_FUNCTION(this);
    m_busy = false;
    if (m_job->IsBackwardPhase(m_phase))
    {
        const uint32_t group = m_job->GetPhaseGroup(m_phase);
        m_job->NotifyCollectiveReady(m_rank, m_iteration, m_job->GetReduceScatterSlot(group));
    }
    if (++m_phase < m_job->GetNPhases())
    {
        PhaseDue();
        return;
    }
    m_phasesDone = true;
    CheckIterationEnd();
}

void
ShardedWorker::CollectiveDone(uint32_t slot)
{
    NS_LOG_FUNCTION(this << slot);
    if (m_job->GetSlotKind(slot) == ShardedJob::ALL_GATHER)
    {
        m_gathered.at(slot) = true;
        TryStartPhase();
        return;
    }
    m_reduceScattered++;
    CheckIterationEnd();
}

void
ShardedWorker::CheckIterationEnd()
{
    NS_LOG_FUNCTION(this);
    if (!m_running || !m_phasesDone || m_reduceScattered < m_job->GetNGroups())
    {
        return;
    }
    // every gradient shard is reduced here: the optimizer step is local
    m_iteration++;
    BeginIteration();
}

// ------------------------------------------------------------------ ring

uint32_t
ShardedWorker::SendPartition(uint32_t step) const
{
    NS_LOG_FUNCTION(this << step);
    return (m_rank + m_n - step % m_n) % m_n;
}

uint32_t
ShardedWorker::ReceivePartition(uint32_t step) const
{
    NS_LOG_FUNCTION(this << step);
    // what the left neighbour (rank - 1) sends at this step
    return (m_rank + 2 * m_n - 1 - step % m_n) % m_n;
}

void
ShardedWorker::SetTos(uint8_t tos)
{
    NS_LOG_FUNCTION(this << static_cast<uint32_t>(tos));
    // Segments (and retransmissions) take the socket's ToS when they are
    // sent, so the class switches for all data not yet transmitted. The
    // previous collective is completely received (hence sent) by now.
    m_sendSocket->SetIpTos(tos);
    if (m_recvSocket)
    {
        m_recvSocket->SetIpTos(m_ackTos < 0 ? tos : uint8_t(m_ackTos));
    }
}

void
ShardedWorker::StartCollective(uint64_t iteration, uint32_t slot)
{
    NS_LOG_FUNCTION(this << iteration << slot);
    if (!m_running)
    {
        return;
    }
    if (m_collActive)
    {
        Error("collective started while another one is in flight here");
        return;
    }
    if (iteration != m_iteration)
    {
        Error("collective of iteration " + std::to_string(iteration) + " started in iteration " +
              std::to_string(m_iteration));
    }
    m_collActive = true;
    m_collIteration = iteration;
    m_collSlot = slot;
    m_collGroup = m_job->GetSlotGroup(slot);
    m_rxStep = 0;
    m_rxInStep = 0;
    SetTos(m_job->GetGroupTos(m_collGroup));
    SendStep(0);
    ProcessReceived();
}

void
ShardedWorker::SendStep(uint32_t step)
{
    NS_LOG_FUNCTION(this << step);
    const uint32_t partition = SendPartition(step);
    const uint64_t bytes = m_job->GetPartitionBytes(m_collGroup, partition);
    m_job->NotifyPartitionSent(m_rank, step, partition, bytes);
    m_txBacklog += bytes;
    Flush(m_sendSocket, 0);
}

void
ShardedWorker::Flush(Ptr<Socket>, uint32_t)
{
    NS_LOG_FUNCTION(this);
    if (!m_connected || !m_running)
    {
        return; // sent once the connection is up
    }
    while (m_txBacklog > 0)
    {
        const uint32_t room = m_sendSocket->GetTxAvailable();
        if (room == 0)
        {
            return; // the send callback calls again when the buffer drains
        }
        const uint32_t chunk = uint32_t(std::min<uint64_t>(m_txBacklog, room));
        const int accepted = m_sendSocket->Send(Create<Packet>(chunk));
        if (accepted < 0)
        {
            Error("send failed (errno " + std::to_string(int(m_sendSocket->GetErrno())) + ")");
            return;
        }
        if (accepted == 0)
        {
            return;
        }
        m_txBacklog -= uint64_t(accepted);
        m_job->NotifyBytesSent(m_rank, uint64_t(accepted));
    }
}

void
ShardedWorker::Receive(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    while (Ptr<Packet> packet = socket->Recv())
    {
        const uint32_t size = packet->GetSize();
        if (size == 0)
        {
            break;
        }
        m_rxUnclaimed += size;
        m_rxTotal += size;
    }
    ProcessReceived();
}

void
ShardedWorker::ProcessReceived()
{
    NS_LOG_FUNCTION(this);
    const uint32_t steps = m_n - 1;
    while (m_collActive && m_running)
    {
        const uint64_t size = m_job->GetPartitionBytes(m_collGroup, ReceivePartition(m_rxStep));
        const uint64_t take = std::min(m_rxUnclaimed, size - m_rxInStep);
        m_rxInStep += take;
        m_rxUnclaimed -= take;
        if (m_rxInStep < size)
        {
            return; // more of this partition to come
        }
        m_job->NotifyPartitionReceived(m_rank, m_rxStep);
        m_rxStep++;
        m_rxInStep = 0;
        if (m_rxStep == steps)
        {
            // Last partition in: the group is gathered (or its gradient shard reduced) here.
            m_collActive = false;
            m_job->NotifyCollectiveFinished(m_rank);
            CollectiveDone(m_collSlot);
            break;
        }
        SendStep(m_rxStep); // step s+1 only after the whole step-s partition arrived
    }
    if (!m_collActive && m_rxUnclaimed > 0)
    {
        Error(std::to_string(m_rxUnclaimed) +
              " bytes received from the left neighbour outside any collective");
        m_rxUnclaimed = 0;
    }
}

// ------------------------------------------------------------------ sockets

void
ShardedWorker::ConnectionSucceeded(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    m_connected = true;
    socket->SetSendCallback(MakeCallback(&ShardedWorker::Flush, this));
    Flush(socket, socket->GetTxAvailable());
}

void
ShardedWorker::ConnectionFailed(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    Error("connection to the right neighbour " + [this] {
        std::ostringstream os;
        os << m_right;
        return os.str();
    }() + " failed (errno " + std::to_string(int(socket->GetErrno())) + ")");
}

bool
ShardedWorker::AcceptRequest(Ptr<Socket>, const Address& from)
{
    NS_LOG_FUNCTION(this << from);
    const Ipv4Address peer = InetSocketAddress::ConvertFrom(from).GetIpv4();
    if (peer != m_left || m_recvSocket)
    {
        std::ostringstream os;
        os << "refused a connection from " << peer << " (expected one from the left neighbour "
           << m_left << ")";
        Error(os.str());
        return false;
    }
    return true;
}

void
ShardedWorker::Accepted(Ptr<Socket> socket, const Address&)
{
    NS_LOG_FUNCTION(this << socket);
    m_recvSocket = socket;
    m_leftUp = true;
    if (m_collActive)
    {
        m_recvSocket->SetIpTos(m_ackTos < 0 ? m_job->GetGroupTos(m_collGroup)
                                            : uint8_t(m_ackTos));
    }
    socket->SetRecvCallback(MakeCallback(&ShardedWorker::Receive, this));
    socket->SetCloseCallbacks(MakeCallback(&ShardedWorker::RecvSocketClosed, this),
                              MakeCallback(&ShardedWorker::RecvSocketError, this));
}

void
ShardedWorker::SendSocketClosed(Ptr<Socket>)
{
    NS_LOG_FUNCTION(this);
    m_connected = false;
    Error("the connection to the right neighbour was closed");
}

void
ShardedWorker::SendSocketError(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    // (ns-3 leaves errno at 0 when the retransmissions run out)
    m_connected = false;
    Error("the connection to the right neighbour failed (errno " +
          std::to_string(int(socket->GetErrno())) + ")");
}

void
ShardedWorker::RecvSocketClosed(Ptr<Socket>)
{
    NS_LOG_FUNCTION(this);
    m_leftUp = false;
    Error("the left neighbour closed its connection");
}

void
ShardedWorker::RecvSocketError(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    m_leftUp = false;
    Error("the connection from the left neighbour failed (errno " +
          std::to_string(int(socket->GetErrno())) + ")");
}

} // namespace ns3
