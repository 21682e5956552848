/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A faster ns3::TcpRxBuffer::Add (see the header). Written from the behaviour
 * of src/internet/model/tcp-rx-buffer.cc at ns-3.44; compared call by call in
 * the DDNN_TCP_CROSSCHECK build.
 */

// The wheel is built with NS3_ASSERT on: keep its (cheap) invariant checks.
#define NS3_ASSERT_ENABLE 1

#include "tcp-rx-buffer-fastpath.h"

#include "ns3/assert.h"
#include "ns3/packet.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-rx-buffer.h"

#include <iterator>

#ifdef DDNN_TCP_CROSSCHECK
#include <sstream>
#endif

namespace
{
// The replaced member, as the dynamic linker names it (see exports.map).
constexpr const char* kAdd = "_ZN3ns311TcpRxBuffer3AddENS_3PtrINS_6PacketEEERKNS_9TcpHeaderE";
} // namespace

const std::vector<const char*>&
ddnn::tcpfastpath::RxBufferMembers()
{
    static const std::vector<const char*> members{kAdd};
    return members;
}

#ifdef DDNN_TCP_CROSSCHECK
// Private members the cross-check reads and copies (tags in this namespace,
// where the explicit instantiations must be).
namespace ddnn
{
namespace tcpfastpath
{
using namespace ns3;
using SegmentMap = std::map<SequenceNumber32, Ptr<Packet>>;

DDNN_EXPOSE(RxSackList, TcpRxBuffer, m_sackList, TcpOptionSack::SackList);
DDNN_EXPOSE(RxNextRxSeq, TcpRxBuffer, m_nextRxSeq, TracedValue<SequenceNumber32>);
DDNN_EXPOSE(RxFinSeq, TcpRxBuffer, m_finSeq, SequenceNumber32);
DDNN_EXPOSE(RxGotFin, TcpRxBuffer, m_gotFin, bool);
DDNN_EXPOSE(RxSize, TcpRxBuffer, m_size, uint32_t);
DDNN_EXPOSE(RxMaxBuffer, TcpRxBuffer, m_maxBuffer, uint32_t);
DDNN_EXPOSE(RxAvailBytes, TcpRxBuffer, m_availBytes, uint32_t);
DDNN_EXPOSE(RxData, TcpRxBuffer, m_data, SegmentMap);
} // namespace tcpfastpath
} // namespace ddnn

namespace
{
using namespace ns3;
using namespace ddnn::tcpfastpath;


/// A receive buffer, by value.
struct BufferState
{
    std::vector<std::tuple<uint32_t, uint32_t, uint64_t>> segments; ///< start, size, uid
    std::vector<std::pair<uint32_t, uint32_t>> sacks;
    uint32_t nextRxSeq, finSeq, size, maxBuffer, availBytes;
    bool gotFin;

    bool operator==(const BufferState&) const = default;
};

BufferState
StateOf(const TcpRxBuffer& b)
{
    BufferState s{};
    for (const auto& [start, p] : b.*Get(RxData{}))
    {
        s.segments.emplace_back(start.GetValue(), p->GetSize(), p->GetUid());
    }
    for (const auto& block : b.*Get(RxSackList{}))
    {
        s.sacks.emplace_back(block.first.GetValue(), block.second.GetValue());
    }
    s.nextRxSeq = (b.*Get(RxNextRxSeq{})).Get().GetValue();
    s.finSeq = (b.*Get(RxFinSeq{})).GetValue();
    s.size = b.*Get(RxSize{});
    s.maxBuffer = b.*Get(RxMaxBuffer{});
    s.availBytes = b.*Get(RxAvailBytes{});
    s.gotFin = b.*Get(RxGotFin{});
    return s;
}

Ptr<TcpRxBuffer>
Clone(const TcpRxBuffer& b)
{
    Ptr<TcpRxBuffer> c = CreateObject<TcpRxBuffer>();
    for (const auto& [start, p] : b.*Get(RxData{}))
    {
        ((*c).*Get(RxData{}))[start] = p->Copy();
    }
    (*c).*Get(RxSackList{}) = b.*Get(RxSackList{});
    (*c).*Get(RxNextRxSeq{}) = (b.*Get(RxNextRxSeq{})).Get();
    (*c).*Get(RxFinSeq{}) = b.*Get(RxFinSeq{});
    (*c).*Get(RxGotFin{}) = b.*Get(RxGotFin{});
    (*c).*Get(RxSize{}) = b.*Get(RxSize{});
    (*c).*Get(RxMaxBuffer{}) = b.*Get(RxMaxBuffer{});
    (*c).*Get(RxAvailBytes{}) = b.*Get(RxAvailBytes{});
    NS_ABORT_MSG_UNLESS(StateOf(*c) == StateOf(b), "tcp-fastpath cross-check: copy differs");
    return c;
}
} // namespace

// What the cross-check (tcp-fastpath.h's CrossChecked) compares for Add.
namespace ddnn
{
namespace tcpfastpath
{

/// A TcpRxBuffer: a deep copy for the wheel, its whole state compared.
template <>
struct Shadow<TcpRxBuffer>
{
    /**
     * @param b the buffer
     * @return a deep copy (packets too)
     */
    static Ptr<TcpRxBuffer> Clone(const TcpRxBuffer& b)
    {
        return ::Clone(b);
    }

    /**
     * @param ours the buffer after our Add
     * @param stock its copy after the wheel's
     * @return "" or how they differ
     */
    static std::string Difference(const TcpRxBuffer& ours, const TcpRxBuffer& stock)
    {
        const BufferState a = StateOf(ours);
        const BufferState b = StateOf(stock);
        if (a == b)
        {
            return "";
        }
        std::ostringstream os;
        os << "buffer state (" << a.segments.size() << " vs " << b.segments.size()
           << " buffered segments, " << a.availBytes << " vs " << b.availBytes
           << " B available, RCV.NXT " << a.nextRxSeq << " vs " << b.nextRxSeq << ")";
        return os.str();
    }
};

} // namespace tcpfastpath
} // namespace ddnn
#endif // DDNN_TCP_CROSSCHECK

namespace ns3
{

bool
TcpRxBuffer::Add(Ptr<Packet> p, const TcpHeader& tcph)
{
    DDNN_TCP_CROSSCHECKED(TcpRxBuffer, Add, p, tcph);
    // The new segment's range, trimmed to the receive window.
    SequenceNumber32 headSeq = tcph.GetSequenceNumber();
    SequenceNumber32 tailSeq = headSeq + SequenceNumber32(p->GetSize());
    if (headSeq < m_nextRxSeq)
    {
        headSeq = m_nextRxSeq;
    }
    if (!m_data.empty())
    {
        const SequenceNumber32 maxSeq = m_data.begin()->first + SequenceNumber32(m_maxBuffer);
        if (maxSeq < tailSeq)
        {
            tailSeq = maxSeq;
        }
        if (tailSeq < headSeq)
        {
            headSeq = tailSeq;
        }
    }

    // Trim it against the buffered segments that overlap it (dropping those
    // it covers whole). Those before the last one starting at or before
    // headSeq end before headSeq: 3.44 walks past them doing nothing.
    auto i = m_data.upper_bound(headSeq);
    if (i != m_data.begin())
    {
        auto before = std::prev(i);
        if (before->first + SequenceNumber32(before->second->GetSize()) > headSeq)
        {
            i = before;
        }
    }
    while (i != m_data.end() && i->first <= tailSeq)
    {
        const SequenceNumber32 lastByteSeq = i->first + SequenceNumber32(i->second->GetSize());
        if (lastByteSeq > headSeq)
        {
            if (i->first > headSeq && lastByteSeq < tailSeq)
            {
                // a buffered segment lies wholly inside the new one
                m_size -= i->second->GetSize();
                i = m_data.erase(i);
                continue;
            }
            if (i->first <= headSeq)
            {
                headSeq = lastByteSeq; // its head is here already
            }
            if (lastByteSeq >= tailSeq)
            {
                tailSeq = i->first; // its tail is here already
            }
        }
        ++i;
    }
    if (headSeq >= tailSeq)
    {
        return false; // nothing new
    }
    const auto start = static_cast<uint32_t>(headSeq - tcph.GetSequenceNumber());
    const auto length = static_cast<uint32_t>(tailSeq - headSeq);
    Ptr<Packet> segment = p->CreateFragment(start, length);
    NS_ASSERT(length == segment->GetSize());
    NS_ASSERT(m_data.find(headSeq) == m_data.end());
    m_data[headSeq] = segment;
    if (headSeq > m_nextRxSeq)
    {
        UpdateSackList(headSeq, tailSeq); // out of order: a new SACK block
    }
    m_size += segment->GetSize();

    // Advance RCV.NXT over what is now in order; 3.44 skips the segments
    // below it one by one.
    for (auto j = m_data.lower_bound(m_nextRxSeq); j != m_data.end(); ++j)
    {
        if (j->first > m_nextRxSeq)
        {
            break;
        }
        m_nextRxSeq = j->first + SequenceNumber32(j->second->GetSize());
        m_availBytes += j->second->GetSize();
        ClearSackList(m_nextRxSeq);
    }
    if (m_gotFin && m_nextRxSeq == m_finSeq)
    {
        ++m_nextRxSeq; // the FIN takes one sequence number
    }
    return true;
}

} // namespace ns3
