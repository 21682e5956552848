/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Faster ns3::TcpTxBuffer members (see the header). Written from the behaviour
 * of src/internet/model/tcp-tx-buffer.cc at ns-3.44: each returns what the
 * 3.44 member returns and leaves the buffer as it leaves it (compared call by
 * call in the DDNN_TCP_CROSSCHECK build, at the end of this file's sections).
 */

// The wheel is built with NS3_ASSERT on: keep its (cheap) invariant checks.
#define NS3_ASSERT_ENABLE 1

#include "tcp-tx-buffer-fastpath.h"

#include "tcp-tx-buffer-hints.h"

#include "ns3/assert.h"
#include "ns3/packet.h"
#include "ns3/tcp-tx-buffer.h"

#include <algorithm>
#include <array>
#include <iterator>

#ifdef DDNN_TCP_CROSSCHECK
#include <sstream>
#endif

namespace
{
// The replaced members, as the dynamic linker names them (see exports.map).
constexpr const char* kCopyFromSequence =
    "_ZN3ns311TcpTxBuffer16CopyFromSequenceEjRKNS_14SequenceNumberIjiEE";
constexpr const char* kUpdate =
    "_ZN3ns311TcpTxBuffer6UpdateERKNSt7__cxx114listISt4pairINS_14SequenceNumberIjiEES5_"
    "ESaIS6_EEERKNS_8CallbackIvJPNS_9TcpTxItemEEEE";
constexpr const char* kNextSeg = "_ZNK3ns311TcpTxBuffer7NextSegEPNS_14SequenceNumberIjiEES3_b";
constexpr const char* kIsLost = "_ZNK3ns311TcpTxBuffer6IsLostERKNS_14SequenceNumberIjiEE";
constexpr const char* kIsRetransmittedDataAcked =
    "_ZNK3ns311TcpTxBuffer24IsRetransmittedDataAckedERKNS_14SequenceNumberIjiEE";
constexpr const char* kDiscardUpTo =
    "_ZN3ns311TcpTxBuffer11DiscardUpToERKNS_14SequenceNumberIjiEERKNS_8CallbackIvJPNS_"
    "9TcpTxItemEEEE";
// The wheel's members that un-settle segments or pop the last one: each is the
// wheel's own, run after the buffer's hints are forgotten.
constexpr const char* kSetSentListLost = "_ZN3ns311TcpTxBuffer15SetSentListLostEb";
constexpr const char* kMarkHeadAsLost = "_ZN3ns311TcpTxBuffer14MarkHeadAsLostEv";
constexpr const char* kResetLastSegmentSent = "_ZN3ns311TcpTxBuffer20ResetLastSegmentSentEv";
constexpr const char* kResetRenoSack = "_ZN3ns311TcpTxBuffer13ResetRenoSackEv";
} // namespace

const std::vector<const char*>&
ddnn::tcpfastpath::TxBufferMembers()
{
    static const std::vector<const char*> members{kCopyFromSequence,
                                                  kUpdate,
                                                  kNextSeg,
                                                  kIsLost,
                                                  kIsRetransmittedDataAcked,
                                                  kDiscardUpTo,
                                                  kSetSentListLost,
                                                  kMarkHeadAsLost,
                                                  kResetLastSegmentSent,
                                                  kResetRenoSack};
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
using ItemList = std::list<TcpTxItem*>;
using HighestSack = std::pair<ItemList::const_iterator, SequenceNumber32>;

DDNN_EXPOSE(TxItemStart, TcpTxItem, m_startSeq, SequenceNumber32);
DDNN_EXPOSE(TxItemPacket, TcpTxItem, m_packet, Ptr<Packet>);
DDNN_EXPOSE(TxItemLost, TcpTxItem, m_lost, bool);
DDNN_EXPOSE(TxItemLastSent, TcpTxItem, m_lastSent, Time);
DDNN_EXPOSE(TxItemSacked, TcpTxItem, m_sacked, bool);
DDNN_EXPOSE(TxAppList, TcpTxBuffer, m_appList, ItemList);
DDNN_EXPOSE(TxSentList, TcpTxBuffer, m_sentList, ItemList);
DDNN_EXPOSE(TxMaxBuffer, TcpTxBuffer, m_maxBuffer, uint32_t);
DDNN_EXPOSE(TxSize, TcpTxBuffer, m_size, uint32_t);
DDNN_EXPOSE(TxSentSize, TcpTxBuffer, m_sentSize, uint32_t);
DDNN_EXPOSE(TxRWndCallback, TcpTxBuffer, m_rWndCallback, Callback<uint32_t>);
DDNN_EXPOSE(TxFirstByteSeq, TcpTxBuffer, m_firstByteSeq, TracedValue<SequenceNumber32>);
DDNN_EXPOSE(TxHighestSackTag, TcpTxBuffer, m_highestSack, HighestSack);
DDNN_EXPOSE(TxLostOut, TcpTxBuffer, m_lostOut, uint32_t);
DDNN_EXPOSE(TxSackedOut, TcpTxBuffer, m_sackedOut, uint32_t);
DDNN_EXPOSE(TxRetrans, TcpTxBuffer, m_retrans, uint32_t);
DDNN_EXPOSE(TxDupAckThresh, TcpTxBuffer, m_dupAckThresh, uint32_t);
DDNN_EXPOSE(TxSegmentSize, TcpTxBuffer, m_segmentSize, uint32_t);
DDNN_EXPOSE(TxRenoSack, TcpTxBuffer, m_renoSack, bool);
DDNN_EXPOSE(TxSackEnabled, TcpTxBuffer, m_sackEnabled, bool);
DDNN_EXPOSE(TxSackSeen, TcpTxBuffer, m_sackSeen, bool);
} // namespace tcpfastpath
} // namespace ddnn

// ---------------------------------------------------------------------------
// The debug build: a buffer's whole state, by value, and a deep copy to run
// the wheel's member on.

namespace
{
using namespace ns3;
using namespace ddnn::tcpfastpath;


/// One segment, by value. (Not its rate information: the buffer never writes
/// it; the SACK callback does, and the callbacks are compared one by one.)
struct ItemState
{
    uint32_t start;
    uint32_t size;
    uint64_t uid;
    int64_t lastSent;
    bool sacked;
    bool lost;
    bool retrans;

    bool operator==(const ItemState&) const = default;
};

/// A whole buffer, by value: what two buffers must agree on.
struct BufferState
{
    std::vector<ItemState> app;
    std::vector<ItemState> sent;
    uint32_t maxBuffer, size, sentSize, firstByteSeq;
    long highestSackIndex; ///< position in the sent list; -1 for end()
    uint32_t highestSackSeq;
    uint32_t lostOut, sackedOut, retrans, dupAckThresh, segmentSize;
    bool renoSack, sackEnabled, sackSeen;

    bool operator==(const BufferState&) const = default;
};

ItemState
StateOf(TcpTxItem* item)
{
    const Ptr<Packet>& p = item->*Get(TxItemPacket{});
    return {(item->*Get(TxItemStart{})).GetValue(),
            p ? p->GetSize() : 0,
            p ? p->GetUid() : 0,
            (item->*Get(TxItemLastSent{})).GetTimeStep(),
            item->*Get(TxItemSacked{}),
            item->*Get(TxItemLost{}),
            item->m_retrans};
}

std::string
Describe(const ItemState& i)
{
    std::ostringstream os;
    os << "[" << i.start << "+" << i.size << " uid " << i.uid << " sent " << i.lastSent
       << (i.sacked ? " sacked" : "") << (i.lost ? " lost" : "") << (i.retrans ? " retrans" : "")
       << "]";
    return os.str();
}

/// The first segment two lists disagree on, in words ("" when they agree).
std::string
FirstDifference(const char* list, const std::vector<ItemState>& a, const std::vector<ItemState>& b)
{
    for (size_t k = 0; k < std::max(a.size(), b.size()); ++k)
    {
        if (k >= a.size() || k >= b.size() || !(a[k] == b[k]))
        {
            std::ostringstream os;
            os << "; " << list << " segment #" << k << ": "
               << (k < a.size() ? Describe(a[k]) : "none") << " vs "
               << (k < b.size() ? Describe(b[k]) : "none");
            return os.str();
        }
    }
    return "";
}

BufferState
StateOf(const TcpTxBuffer& b)
{
    BufferState s{};
    for (auto* item : b.*Get(TxAppList{}))
    {
        s.app.push_back(StateOf(item));
    }
    const ItemList& sent = b.*Get(TxSentList{});
    for (auto* item : sent)
    {
        s.sent.push_back(StateOf(item));
    }
    const HighestSack& hs = b.*Get(TxHighestSackTag{});
    s.highestSackIndex = hs.first == sent.end() ? -1 : std::distance(sent.begin(), hs.first);
    s.highestSackSeq = hs.second.GetValue();
    s.maxBuffer = b.*Get(TxMaxBuffer{});
    s.size = b.*Get(TxSize{});
    s.sentSize = b.*Get(TxSentSize{});
    s.firstByteSeq = (b.*Get(TxFirstByteSeq{})).Get().GetValue();
    s.lostOut = b.*Get(TxLostOut{});
    s.sackedOut = b.*Get(TxSackedOut{});
    s.retrans = b.*Get(TxRetrans{});
    s.dupAckThresh = b.*Get(TxDupAckThresh{});
    s.segmentSize = b.*Get(TxSegmentSize{});
    s.renoSack = b.*Get(TxRenoSack{});
    s.sackEnabled = b.*Get(TxSackEnabled{});
    s.sackSeen = b.*Get(TxSackSeen{});
    return s;
}

/// A deep copy: items and packets too (splits and merges edit packets in place).
Ptr<TcpTxBuffer>
Clone(const TcpTxBuffer& b)
{
    Ptr<TcpTxBuffer> c = CreateObject<TcpTxBuffer>();
    auto copyList = [](const ItemList& from, ItemList& to) {
        for (auto* item : from)
        {
            auto* copy = new TcpTxItem(*item);
            Ptr<Packet>& p = copy->*Get(TxItemPacket{});
            if (p)
            {
                p = p->Copy();
            }
            to.push_back(copy);
        }
    };
    copyList(b.*Get(TxAppList{}), (*c).*Get(TxAppList{}));
    copyList(b.*Get(TxSentList{}), (*c).*Get(TxSentList{}));
    const ItemList& sent = b.*Get(TxSentList{});
    const ItemList& copySent = (*c).*Get(TxSentList{});
    const HighestSack& hs = b.*Get(TxHighestSackTag{});
    auto it = hs.first == sent.end()
                  ? copySent.cend()
                  : std::next(copySent.cbegin(), std::distance(sent.begin(), hs.first));
    (*c).*Get(TxHighestSackTag{}) = HighestSack(it, hs.second);
    (*c).*Get(TxMaxBuffer{}) = b.*Get(TxMaxBuffer{});
    (*c).*Get(TxSize{}) = b.*Get(TxSize{});
    (*c).*Get(TxSentSize{}) = b.*Get(TxSentSize{});
    (*c).*Get(TxRWndCallback{}) = b.*Get(TxRWndCallback{});
    (*c).*Get(TxFirstByteSeq{}) = (b.*Get(TxFirstByteSeq{})).Get();
    (*c).*Get(TxLostOut{}) = b.*Get(TxLostOut{});
    (*c).*Get(TxSackedOut{}) = b.*Get(TxSackedOut{});
    (*c).*Get(TxRetrans{}) = b.*Get(TxRetrans{});
    (*c).*Get(TxDupAckThresh{}) = b.*Get(TxDupAckThresh{});
    (*c).*Get(TxSegmentSize{}) = b.*Get(TxSegmentSize{});
    (*c).*Get(TxRenoSack{}) = b.*Get(TxRenoSack{});
    (*c).*Get(TxSackEnabled{}) = b.*Get(TxSackEnabled{});
    (*c).*Get(TxSackSeen{}) = b.*Get(TxSackSeen{});
    NS_ABORT_MSG_UNLESS(StateOf(*c) == StateOf(b), "tcp-fastpath cross-check: copy differs");
    return c;
}

/// How two buffers' states differ, in words ("" when they agree).
std::string
StateDifference(const TcpTxBuffer& ours, const TcpTxBuffer& stock)
{
    const BufferState a = StateOf(ours);
    const BufferState b = StateOf(stock);
    if (a == b)
    {
        return "";
    }
    std::ostringstream os;
    os << "buffer state (sent list " << a.sent.size() << " vs " << b.sent.size()
       << " segments, app list " << a.app.size() << " vs " << b.app.size() << ", retrans "
       << a.retrans << " vs " << b.retrans << " B, lost " << a.lostOut << " vs " << b.lostOut
       << " B, sacked " << a.sackedOut << " vs " << b.sackedOut << " B, highest SACK #"
       << a.highestSackIndex << " vs #" << b.highestSackIndex << ")"
       << FirstDifference("sent", a.sent, b.sent) << FirstDifference("app", a.app, b.app);
    return os.str();
}

/// Position of a segment in a buffer's sent list (-1: none).
long
IndexOf(const TcpTxBuffer& b, const TcpTxItem* item)
{
    const ItemList& sent = b.*Get(TxSentList{});
    auto it = std::find(sent.begin(), sent.end(), item);
    return item == nullptr || it == sent.end() ? -1 : std::distance(sent.begin(), it);
}

/// Records the segments a callback was given: Update's SACKed ones (in the
/// sent list) and DiscardUpTo's (just erased from it), by position (-1: not
/// in the list) and first sequence number.
struct ItemRecorder
{
    const TcpTxBuffer* buffer;
    Callback<void, TcpTxItem*> forward;
    std::vector<std::pair<long, uint32_t>> items;

    void Record(TcpTxItem* item)
    {
        items.emplace_back(IndexOf(*buffer, item), (item->*Get(TxItemStart{})).GetValue());
        if (!forward.IsNull())
        {
            forward(item);
        }
    }
};

} // namespace

// What the cross-check (tcp-fastpath.h's CrossChecked) compares for this
// file's members.
namespace ddnn
{
namespace tcpfastpath
{

/// A TcpTxBuffer: a deep copy for the wheel, its whole state compared.
template <>
struct Shadow<TcpTxBuffer>
{
    /**
     * @param b the buffer
     * @return a deep copy (items and packets too)
     */
    static Ptr<TcpTxBuffer> Clone(const TcpTxBuffer& b)
    {
        return ::Clone(b);
    }

    /**
     * @param ours the buffer after our member
     * @param stock its copy after the wheel's
     * @return "" or how they differ
     */
    static std::string Difference(const TcpTxBuffer& ours, const TcpTxBuffer& stock)
    {
        return StateDifference(ours, stock);
    }
};

/// CopyFromSequence's segment: the same position in each buffer's sent list.
template <>
struct Outcome<TcpTxItem*>
{
    /**
     * @param ours our segment
     * @param stock the wheel's (in its copy of the buffer)
     * @param ourBuffer the buffer
     * @param stockBuffer the copy
     * @return "" or what differs
     */
    static std::string Difference(TcpTxItem* ours,
                                  TcpTxItem* stock,
                                  const TcpTxBuffer& ourBuffer,
                                  const TcpTxBuffer& stockBuffer)
    {
        const bool same = IndexOf(ourBuffer, ours) == IndexOf(stockBuffer, stock) &&
                          (ours == nullptr) == (stock == nullptr);
        return same ? "" : "returned another segment";
    }
};

/// NextSeg's out-parameters: the wheel writes into a copy of each. Compared
/// when the member found a segment (true); otherwise the socket ignores them.
template <>
struct Argument<SequenceNumber32*>
{
    /**
     * @param ours the caller's variable
     */
    Argument(SequenceNumber32* ours, const TcpTxBuffer*, const TcpTxBuffer*)
        : ours(ours),
          stock(*ours)
    {
    }

    /** @return the copy, for the wheel's member */
    SequenceNumber32* ForStock()
    {
        return &stock;
    }

    /** @return the caller's variable, for ours */
    SequenceNumber32* ForOurs() const
    {
        return ours;
    }

    /**
     * @param found what the member returned
     * @return "" or what differs
     */
    std::string Difference(bool found) const
    {
        return found && *ours != stock ? "returned another segment" : "";
    }

    SequenceNumber32* ours;  //!< the caller's variable
    SequenceNumber32 stock; //!< the wheel's answer
};

/// Update's SACK callback and DiscardUpTo's: each member reports to a recorder
/// of its own (positions in its own buffer), ours forwarding to the socket's
/// callback; the two must report the same segments.
template <>
struct Argument<const Callback<void, TcpTxItem*>&>
{
    /**
     * @param forward the socket's callback
     * @param ours the buffer
     * @param stock its copy
     */
    Argument(const Callback<void, TcpTxItem*>& forward, TcpTxBuffer* ours, TcpTxBuffer* stock)
        : ours{ours, forward, {}},
          stock{stock, Callback<void, TcpTxItem*>(), {}}
    {
    }

    /** @return the wheel's recorder */
    Callback<void, TcpTxItem*> ForStock()
    {
        return MakeCallback(&ItemRecorder::Record, &stock);
    }

    /** @return ours, which forwards */
    Callback<void, TcpTxItem*> ForOurs()
    {
        return MakeCallback(&ItemRecorder::Record, &ours);
    }

    /** @return "" or what differs (whatever the member returned) */
    template <typename... Result>
    std::string Difference(const Result&...) const
    {
        return ours.items == stock.items ? "" : "gave its callback other segments";
    }

    ItemRecorder ours;  //!< what our member reported
    ItemRecorder stock; //!< what the wheel's reported
};

} // namespace tcpfastpath
} // namespace ddnn
#endif // DDNN_TCP_CROSSCHECK

namespace
{
using ddnn::tcpfastpath::TcpTxBufferHints;

#ifdef DDNN_TCP_CROSSCHECK
/**
 * The debug build checks a buffer's hints before every use: each prefix ends
 * at a segment of the sent list, and each of its segments is what the prefix
 * says (settled: retransmitted or SACKed; marked: SACKed or lost).
 */
void
CheckHints(const ns3::TcpTxBuffer& buffer, const TcpTxBufferHints& hints)
{
    using namespace ddnn::tcpfastpath;
    const ItemList& sent = buffer.*Get(TxSentList{});
    auto check = [&sent](const TcpTxBufferHints::Prefix& prefix, const char* name, auto holds) {
        if (!prefix.IsSet())
        {
            return;
        }
        for (auto it = sent.cbegin(); it != sent.cend(); ++it)
        {
            if (!holds(*it))
            {
                Mismatch("TcpTxBuffer hints",
                         std::string(name) + " prefix holds segment #" +
                             std::to_string(std::distance(sent.cbegin(), it)) + " " +
                             Describe(StateOf(*it)));
            }
            if (it == prefix.Last())
            {
                return;
            }
        }
        Mismatch("TcpTxBuffer hints", std::string(name) + " prefix ends outside the sent list");
    };
    check(hints.settled, "settled", [](ns3::TcpTxItem* item) {
        return item->m_retrans || item->*Get(TxItemSacked{});
    });
    check(hints.marked, "marked", [](ns3::TcpTxItem* item) {
        return item->*Get(TxItemSacked{}) || item->*Get(TxItemLost{});
    });
    for (std::size_t k = 0; k < hints.sackedBlockCount; ++k)
    {
        const TcpTxBufferHints::SackedBlock& block = hints.sackedBlocks[k];
        bool lastFound = false;
        for (auto it = sent.cbegin(); it != sent.cend(); ++it)
        {
            const ns3::SequenceNumber32 begin = (*it)->*Get(TxItemStart{});
            const ns3::SequenceNumber32 end = begin + ((*it)->*Get(TxItemPacket{}))->GetSize();
            const bool inside = begin >= block.first && end <= block.second;
            if (inside && !((*it)->*Get(TxItemSacked{})))
            {
                Mismatch("TcpTxBuffer hints",
                         "SACKed block [" + std::to_string(block.first.GetValue()) + ", " +
                             std::to_string(block.second.GetValue()) + ") holds segment " +
                             Describe(StateOf(*it)));
            }
            if (it == block.last)
            {
                lastFound = end <= block.second;
            }
        }
        if (!lastFound)
        {
            Mismatch("TcpTxBuffer hints",
                     "a SACKed block's last segment is not in the sent list or ends past it");
        }
    }
}
#else
void
CheckHints(const ns3::TcpTxBuffer&, const TcpTxBufferHints&)
{
}
#endif

using ddnn::tcpfastpath::CountHintUse;
using ddnn::tcpfastpath::HintUse;

/**
 * Forget a buffer's hints, then run the wheel's own member on it (looked up
 * in libns3-internet; these members are called rarely: RTOs, recoveries).
 * @param symbol the member's mangled name
 * @param buffer the buffer
 * @param args the member's arguments
 */
template <typename... Args>
void
ForgetHintsThenStock(const char* symbol, ns3::TcpTxBuffer* buffer, Args... args)
{
    using Member = void (*)(ns3::TcpTxBuffer*, Args...);
    TcpTxBufferHints::Forget(*buffer);
    ddnn::tcpfastpath::Stock<Member>(symbol)(buffer, args...);
}

} // namespace

namespace ns3
{

// ---------------------------------------------------------------------------
// CopyFromSequence and the private helpers it uses (local to this library)

TcpTxItem*
TcpTxBuffer::CopyFromSequence(uint32_t numBytes, const SequenceNumber32& seq)
{
    DDNN_TCP_CROSSCHECKED(TcpTxBuffer, CopyFromSequence, numBytes, seq);
    NS_ABORT_MSG_IF(m_firstByteSeq > seq,
                    "Requested a sequence number which is not in the buffer anymore");

    // What the buffer holds from seq on (SizeFromSequence), capped at numBytes.
    const SequenceNumber32 tail = m_firstByteSeq + SequenceNumber32(m_size);
    const uint32_t available = tail >= seq ? static_cast<uint32_t>(tail - seq) : 0;
    const uint32_t s = std::min(numBytes, available);
    if (s == 0)
    {
        return nullptr;
    }

    TcpTxItem* item;
    if (m_firstByteSeq + m_sentSize >= seq + s)
    {
        // All of it was sent before: a retransmission.
        item = GetTransmittedSegment(s, seq);
        NS_ASSERT(item != nullptr);
        NS_ASSERT(!item->m_sacked);
    }
    else if (m_firstByteSeq + m_sentSize <= seq)
    {
        NS_ABORT_MSG_UNLESS(m_firstByteSeq + m_sentSize == seq,
                            "Requesting a piece of new data with an hole");
        item = GetNewSegment(s);
        NS_ASSERT(item != nullptr);
        NS_ASSERT(!item->m_retrans);
    }
    else
    {
        // Partly sent before: serve only the part already sent (the socket asks
        // for the new data next). 3.44 tests this case in raw 32-bit arithmetic
        // and dereferences a null item where that wraps; the amount is the same.
        const uint32_t sentPart = (m_firstByteSeq.Get().GetValue() + m_sentSize) - seq.GetValue();
        return CopyFromSequence(sentPart, seq);
    }

    item->m_lastSent = Simulator::Now();
    NS_ASSERT_MSG(item->m_startSeq >= m_firstByteSeq,
                  "Returning an item starting at " << item->m_startSeq << " with SND.UNA as "
                                                   << m_firstByteSeq);
    return item;
}

TcpTxItem*
TcpTxBuffer::GetNewSegment(uint32_t numBytes)
{
    const SequenceNumber32 start = m_firstByteSeq + m_sentSize;
    TcpTxItem* item = GetPacketFromList(m_appList, start, numBytes, start);
    item->m_startSeq = start;

    // The item is the head of the application list; move it to the sent list.
    auto it = std::find(m_appList.begin(), m_appList.end(), item);
    NS_ASSERT(it != m_appList.end());
    m_sentList.splice(m_sentList.end(), m_appList, it);
    m_sentSize += item->m_packet->GetSize();
    return item;
}

TcpTxItem*
TcpTxBuffer::GetTransmittedSegment(uint32_t numBytes, const SequenceNumber32& seq)
{
    NS_ASSERT(seq >= m_firstByteSeq);
    NS_ASSERT(numBytes <= m_sentSize);
    NS_ASSERT(!m_sentList.empty());

    // A retransmission takes the segment at seq and, when the next one is in the
    // same state (not SACKed, equally lost), at most that one too.
    uint32_t s = numBytes;
    auto it = std::find_if(m_sentList.begin(), m_sentList.end(), [&seq](const TcpTxItem* i) {
        return i->m_startSeq == seq;
    });
    if (it != m_sentList.end())
    {
        uint32_t limit = (*it)->m_packet->GetSize();
        auto next = std::next(it);
        if (next != m_sentList.end() && !(*next)->m_sacked && (*it)->m_lost == (*next)->m_lost)
        {
            limit += (*next)->m_packet->GetSize();
        }
        s = std::min(s, limit);
    }

    bool listEdited = false;
    TcpTxItem* item = GetPacketFromList(m_sentList, m_firstByteSeq, s, seq, &listEdited);
    if (!item->m_retrans)
    {
        m_retrans += item->m_packet->GetSize();
        item->m_retrans = true;
    }
    return item;
}

TcpTxItem*
TcpTxBuffer::GetPacketFromList(PacketList& list,
                               const SequenceNumber32& listStartFrom,
                               uint32_t numBytes,
                               const SequenceNumber32& seq,
                               bool* listEdited) const
{
    // The item that starts at seq and holds exactly numBytes, made by splitting
    // and merging items as needed. Each edit restarts the walk from the head,
    // as 3.44 does (it recurses), so the list ends up the same.
    const bool isSentList = &list == &m_sentList; // 3.44 compares the lists' contents
    for (;;)
    {
        SequenceNumber32 begin = listStartFrom;
        auto it = list.begin();
        for (; it != list.end(); ++it)
        {
            NS_ASSERT_MSG(!isSentList || (*it)->m_startSeq >= m_firstByteSeq,
                          "start: " << m_firstByteSeq
                                    << " currentItem start: " << (*it)->m_startSeq);
            if (seq < begin + (*it)->m_packet->GetSize())
            {
                break;
            }
            begin += (*it)->m_packet->GetSize();
        }
        NS_ABORT_MSG_IF(it == list.end(), "TcpTxBuffer: sequence " << seq << " is not in the list");
        TcpTxItem* current = *it;
        const uint32_t size = current->m_packet->GetSize();

        if (seq < begin)
        {
            NS_FATAL_ERROR("seq < beginOfCurrentPacket: our data is before");
        }
        if (seq > begin)
        {
            // seq falls inside this item: split off the part before it.
            auto* before = new TcpTxItem();
            SplitItems(before, current, seq - begin);
            list.insert(it, before);
            if (listEdited)
            {
                *listEdited = true;
            }
            continue;
        }

        // current starts at seq.
        if (seq + numBytes <= begin + size)
        {
            if (numBytes == size)
            {
                return current;
            }
            // numBytes < size: split off the requested part.
            auto* head = new TcpTxItem();
            SplitItems(head, current, numBytes);
            list.insert(it, head);
            if (listEdited)
            {
                *listEdited = true;
            }
            return head;
        }

        auto next = std::next(it);
        if (next == list.end())
        {
            // Less data than asked for; CopyFromSequence's bounds keep this from
            // happening, and 3.44 returns what there is.
            return current;
        }
        // The request goes past this item: merge the next one into it.
        TcpTxItem* following = *next;
        // Update walks from the highest SACKed segment's iterator (as 3.44's
        // UpdateLostCount does): it must not be erased here. A retransmission
        // that starts at a segment merges only an un-SACKed next one
        // (GetTransmittedSegment's limit); should another request reach the
        // highest SACKed segment, stop here rather than leave it dangling.
        NS_ABORT_MSG_IF(&list == &m_sentList && m_highestSack.first == next,
                        "merging away the highest SACKed segment");
        MergeItems(current, following);
        if (isSentList)
        {
            // A merge can clear a retransmitted flag and removes a segment a
            // hint may end at (rare: only segments smaller than a full one merge).
            TcpTxBufferHints::Forget(*this);
        }
        list.erase(next);
        delete following;
        if (listEdited)
        {
            *listEdited = true;
        }
    }
}

void
TcpTxBuffer::SplitItems(TcpTxItem* t1, TcpTxItem* t2, uint32_t size) const
{
    // t1 becomes the first `size` bytes of t2, with t2's flags; t2 keeps the rest.
    NS_ASSERT(t1 != nullptr && t2 != nullptr);
    t1->m_packet = t2->m_packet->CreateFragment(0, size);
    t2->m_packet->RemoveAtStart(size);
    t1->m_startSeq = t2->m_startSeq;
    t1->m_sacked = t2->m_sacked;
    t1->m_lastSent = t2->m_lastSent;
    t1->m_retrans = t2->m_retrans;
    t1->m_lost = t2->m_lost;
    t2->m_startSeq += size;
}

void
TcpTxBuffer::MergeItems(TcpTxItem* t1, TcpTxItem* t2) const
{
    // t2's bytes are appended to t1. A merged segment is about to be
    // retransmitted as a whole: if only one part was a retransmission, it no
    // longer counts as one (GetTransmittedSegment counts the whole again).
    NS_ASSERT(t1 != nullptr && t2 != nullptr);
    NS_ASSERT_MSG(t1->m_sacked == t2->m_sacked,
                  "Merging one sacked and another not sacked. Impossible");
    NS_ASSERT_MSG(t1->m_lost == t2->m_lost, "Merging one lost and another not lost. Impossible");
    if (t1->m_retrans != t2->m_retrans)
    {
        TcpTxItem* flagged = t1->m_retrans ? t1 : t2;
        const_cast<TcpTxBuffer*>(this)->m_retrans -= flagged->m_packet->GetSize();
        flagged->m_retrans = false;
    }
    if (t1->m_lastSent < t2->m_lastSent)
    {
        t1->m_lastSent = t2->m_lastSent;
    }
    t1->m_packet->AddAtEnd(t2->m_packet);
}

// ---------------------------------------------------------------------------
// The SACK scoreboard

uint32_t
TcpTxBuffer::Update(const TcpOptionSack::SackList& list, const Callback<void, TcpTxItem*>& sackedCb)
{
    DDNN_TCP_CROSSCHECKED(TcpTxBuffer, Update, list, sackedCb);
    // For each SACK block, mark the segments that lie wholly inside it (3.44
    // ignores a block that does not map onto whole segments). A segment starts
    // at its m_startSeq and ends where the next one starts (the last one at
    // SND.NXT): 3.44 adds up packet sizes from SND.UNA to the same numbers.
    TcpTxBufferHints& hints = TcpTxBufferHints::Of(*this);
    CheckHints(*this, hints);
    std::array<TcpTxBufferHints::SackedBlock, TcpTxBufferHints::kMaxSackedBlocks> processed;
    std::size_t processedCount = 0;
    uint32_t bytesSacked = 0;
    bool beyondSent = false;
    const SequenceNumber32 sentEnd = m_firstByteSeq + m_sentSize;
    for (const TcpOptionSack::SackBlock& block : list)
    {
        if (sentEnd < block.first)
        {
            beyondSent = true; // as 3.44: beyond what was sent, stop here (no lost count)
            break;
        }
        // The walk may start at any segment at or before the first one that
        // starts inside the block: those before it start below the block, so
        // none is inside it, and none ends past it before that one is reached
        // (the marked segments and their order are 3.44's). Start at SND.UNA,
        // or, when the block is nearer the highest SACKed segment (a block
        // above it, the newest, most often; or an older one just below),
        // step back from that segment to the block's first one.
        auto from = m_sentList.cbegin(); // const: m_highestSack holds a const_iterator
        TcpTxBufferHints::Position lastInside = m_sentList.cend();
        if (const auto* before = hints.Extended(block.first, block.second))
        {
            // The block extends one the last Update processed (a recovery's
            // block grows by a segment per acknowledgement): the segments up to
            // that block's last one that lie inside this block are inside that
            // one too, SACKed already. The walk may skip them.
            from = std::next(before->last);
            lastInside = before->last; // ends at or before this block's end too
            CountHintUse(HintUse::kSackedBlock);
        }
        else if (m_highestSack.first != m_sentList.end())
        {
            const SequenceNumber32 high = (*m_highestSack.first)->m_startSeq;
            if (high <= block.first || block.first - m_firstByteSeq > high - block.first)
            {
                from = m_highestSack.first;
                while (from != m_sentList.cbegin() && (*std::prev(from))->m_startSeq >= block.first)
                {
                    --from;
                }
            }
        }
        for (auto it = from; it != m_sentList.end(); ++it)
        {
            TcpTxItem* item = *it;
            const SequenceNumber32 begin = item->m_startSeq;
            auto next = std::next(it);
            const SequenceNumber32 end = next != m_sentList.end() ? (*next)->m_startSeq : sentEnd;
            if (begin >= block.first && end <= block.second)
            {
                lastInside = it;
                if (item->m_sacked)
                {
                    NS_ASSERT(!item->m_lost);
                    continue;
                }
                const uint32_t size = item->m_packet->GetSize();
                if (item->m_lost)
                {
                    item->m_lost = false;
                    m_lostOut -= size;
                }
                item->m_sacked = true;
                m_sackedOut += size;
                bytesSacked += size;
                if (m_highestSack.first == m_sentList.end() || m_highestSack.second <= end)
                {
                    m_sackSeen = true;
                    m_highestSack = std::make_pair(it, begin);
                }
                if (!sackedCb.IsNull())
                {
                    sackedCb(item);
                }
            }
            else if (end > block.second)
            {
                break; // past the block
            }
        }
        if (lastInside != m_sentList.cend() && processedCount < processed.size())
        {
            processed[processedCount++] = {block.first, block.second, lastInside};
        }
    }
    // What this Update processed, for the next one (its blocks are SACKed now).
    hints.sackedBlocks = processed;
    hints.sackedBlockCount = processedCount;
    if (beyondSent)
    {
        return bytesSacked;
    }

    if (bytesSacked > 0)
    {
        NS_ASSERT_MSG(m_highestSack.first != m_sentList.end(), "no highest SACK after a SACK");
        UpdateLostCount();
    }
    NS_ASSERT(m_sentList.empty() || !m_sentList.front()->m_sacked);
    NS_ASSERT(m_sentSize >= m_sackedOut + m_lostOut);
    return bytesSacked;
}

void
TcpTxBuffer::UpdateLostCount()
{
    // RFC 6675 IsLost, as 3.44 applies it: walking down from the highest SACKed
    // segment, once dupAckThresh SACKed segments are above, every segment neither
    // SACKed nor lost is lost. The head is judged last, by the same count.
    // Each segment of the hints' marked prefix is SACKed or lost, so the walk
    // would change none of them: it stops there when the head is lost already
    // (judging it changes nothing either). Below the segment where the count
    // reaches dupAckThresh, every segment ends SACKed or lost: the prefix grows
    // to it.
    TcpTxBufferHints& hints = TcpTxBufferHints::Of(*this);
    CheckHints(*this, hints);
    const bool stopAtMarked = hints.marked.IsSet() && m_sentList.front()->m_lost;
    uint32_t sacked = 0;
    bool stopped = false;
    bool reached = false;
    TcpTxBufferHints::Position reachedAt;
    for (auto it = m_highestSack.first; it != m_sentList.begin(); --it)
    {
        if (stopAtMarked && it == hints.marked.Last())
        {
            stopped = true;
            CountHintUse(HintUse::kMarkedPrefix);
            break;
        }
        TcpTxItem* item = *it;
        if (item->m_sacked)
        {
            sacked++;
        }
        else if (sacked >= m_dupAckThresh && !item->m_lost)
        {
            item->m_lost = true;
            m_lostOut += item->m_packet->GetSize();
        }
        if (!reached && sacked >= m_dupAckThresh)
        {
            reached = true;
            reachedAt = it;
        }
    }
    if (!stopped && sacked >= m_dupAckThresh)
    {
        TcpTxItem* head = m_sentList.front();
        if (!head->m_lost)
        {
            head->m_lost = true;
            m_lostOut += head->m_packet->GetSize();
        }
    }
    if (reached)
    {
        hints.marked.EndAt(reachedAt);
    }
}

// ---------------------------------------------------------------------------
// Scoreboard queries

bool
TcpTxBuffer::NextSeg(SequenceNumber32* seq, SequenceNumber32* seqHigh, bool isRecovery) const
{
    DDNN_TCP_CROSSCHECKED(TcpTxBuffer, NextSeg, seq, seqHigh, isRecovery);
    // RFC 6675 NextSeg, as 3.44 implements it. Rule 1: the first segment not
    // retransmitted, not SACKed, below the highest SACK (once SACKs were seen)
    // and lost. Rule 3 remembers the first such segment when in recovery.
    // Without lost segments (m_lostOut == 0) rule 1 cannot match: the walk
    // stops once rule 3 has its candidate (at once outside recovery). It stops
    // at the highest SACKed segment: segments are in sequence order, and
    // neither rule takes one at or above it.
    SequenceNumber32 rule3;
    bool rule3Valid = false;
    const bool anyLost = m_lostOut > 0;
    // With a highest SACKed segment in the list, its start lies within the
    // sent window (< 2^31 bytes), where sequence order is list order. Without
    // one (reset once SND.UNA passed it), 3.44 compares with 0, which wraps
    // after 2 GiB sent: then the whole list is walked, as 3.44 does.
    const bool highestInList = m_sackSeen && m_highestSack.first != m_sentList.end();
    if (anyLost || isRecovery)
    {
        // Each segment of the hints' settled prefix is retransmitted or SACKed:
        // neither rule takes it, so no rule 3 candidate is set there to stop
        // the walk; and where the highest SACK stops it inside the prefix,
        // every later segment lies at or above the highest SACK too, so a walk
        // from after the prefix takes none and stops at its first. The walk
        // starts after the prefix and extends it over the settled segments it
        // meets first.
        TcpTxBufferHints& hints = TcpTxBufferHints::Of(*this);
        CheckHints(*this, hints);
        if (hints.settled.IsSet())
        {
            CountHintUse(HintUse::kSettledPrefix);
        }
        bool settledSoFar = true;
        for (auto it = hints.settled.After(m_sentList); it != m_sentList.end(); ++it)
        {
            const TcpTxItem* item = *it;
            if (settledSoFar)
            {
                if (item->m_retrans || item->m_sacked)
                {
                    hints.settled.EndAt(it);
                }
                else
                {
                    settledSoFar = false;
                }
            }
            if (!item->m_retrans && !item->m_sacked &&
                (!m_sackSeen || item->m_startSeq < m_highestSack.second))
            {
                if (item->m_lost)
                {
                    *seq = item->m_startSeq;
                    *seqHigh = *seq + m_segmentSize;
                    return true;
                }
                // 3.44 keeps the first candidate unless its value is 0.
                if (rule3.GetValue() == 0 && isRecovery)
                {
                    rule3Valid = true;
                    rule3 = item->m_startSeq;
                }
            }
            if (!anyLost && rule3.GetValue() != 0)
            {
                break;
            }
            if (highestInList && !(item->m_startSeq < m_highestSack.second))
            {
                break; // rules 1 and 3 take only segments below the highest SACK
            }
        }
    }

    // Rule 2: unsent data, if the receiver's window allows.
    const SequenceNumber32 tail = m_firstByteSeq + SequenceNumber32(m_size);
    const SequenceNumber32 highData = m_firstByteSeq + m_sentSize;
    if (tail >= highData && static_cast<uint32_t>(tail - highData) > 0)
    {
        const uint32_t rWnd = m_rWndCallback();
        if (m_sentSize < rWnd)
        {
            *seq = highData;
            *seqHigh = *seq + std::min<uint32_t>(m_segmentSize, rWnd - m_sentSize);
            return true;
        }
        return false;
    }

    // Rule 3.
    if (rule3Valid)
    {
        *seq = rule3;
        *seqHigh = *seq + m_segmentSize;
        return true;
    }
    return false;
}

bool
TcpTxBuffer::IsLost(const SequenceNumber32& seq) const
{
    DDNN_TCP_CROSSCHECKED(TcpTxBuffer, IsLost, seq);
    // Lost when the segment holding seq, below the highest SACK, is marked lost.
    // Segments do not overlap: the walk stops at the one holding seq.
    if (seq >= m_highestSack.second)
    {
        return false;
    }
    for (const TcpTxItem* item : m_sentList)
    {
        if (item->m_startSeq <= seq && seq < item->m_startSeq + item->m_packet->GetSize())
        {
            return item->m_lost;
        }
    }
    return false;
}

bool
TcpTxBuffer::IsRetransmittedDataAcked(const SequenceNumber32& ack) const
{
    DDNN_TCP_CROSSCHECKED(TcpTxBuffer, IsRetransmittedDataAcked, ack);
    // Whether a retransmitted, un-SACKed segment ends exactly at ack. Nothing
    // to find when nothing is retransmitted; segments are in sequence order,
    // so none past the first one ending beyond ack can end at it.
    if (m_retrans == 0)
    {
        return false;
    }
    for (const TcpTxItem* item : m_sentList)
    {
        const SequenceNumber32 end = item->m_startSeq + item->m_packet->GetSize();
        if (end == ack && !item->m_sacked && item->m_retrans)
        {
            return true;
        }
        if (end > ack)
        {
            break;
        }
    }
    return false;
}

// ---------------------------------------------------------------------------
// Acknowledged data

void
TcpTxBuffer::DiscardUpTo(const SequenceNumber32& seq, const Callback<void, TcpTxItem*>& beforeDelCb)
{
    DDNN_TCP_CROSSCHECKED(TcpTxBuffer, DiscardUpTo, seq, beforeDelCb);
    // 3.44's member, without its log output, keeping the hints true: a prefix
    // whose last segment is acknowledged is gone, and the head's SACK flag
    // moving elsewhere forgets them (MarkHeadAsLost, below). Hints end only at
    // flagged segments: with none flagged (most acknowledgements) there is
    // nothing to keep, and no need to look them up.
    if (m_firstByteSeq >= seq)
    {
        return;
    }
    TcpTxBufferHints* hints = m_retrans != 0 || m_sackedOut != 0 || m_lostOut != 0
                                  ? TcpTxBufferHints::Find(*this)
                                  : nullptr;

    uint32_t offset = seq - m_firstByteSeq.Get(); // bytes to remove
    auto i = m_sentList.begin();
    while (m_size > 0 && offset > 0)
    {
        if (i == m_sentList.end())
        {
            // Move data from the application list to the sent list, to delete it.
            Ptr<Packet> p [[maybe_unused]] =
                CopyFromSequence(offset, m_firstByteSeq)->GetPacketCopy();
            NS_ASSERT(p);
            i = m_sentList.begin();
            NS_ASSERT(i != m_sentList.end());
        }
        TcpTxItem* item = *i;
        uint32_t pktSize = item->m_packet->GetSize();
        NS_ASSERT_MSG(item->m_startSeq == m_firstByteSeq,
                      "Item starts at " << item->m_startSeq << " while SND.UNA is "
                                        << m_firstByteSeq);
        if (offset >= pktSize)
        {
            // Wholly acknowledged: remove it.
            m_size -= pktSize;
            m_sentSize -= pktSize;
            offset -= pktSize;
            m_firstByteSeq += pktSize;
            RemoveFromCounts(item, pktSize);
            if (hints != nullptr)
            {
                hints->Erasing(item);
            }
            i = m_sentList.erase(i);
            if (!beforeDelCb.IsNull())
            {
                beforeDelCb(item); // the rate algorithms, for a whole segment only
            }
            delete item;
        }
        else
        {
            // Partly acknowledged: keep the rest (packet tags are kept).
            pktSize -= offset;
            item->m_packet = item->m_packet->CreateFragment(offset, pktSize);
            item->m_startSeq += offset;
            m_size -= offset;
            m_sentSize -= offset;
            m_firstByteSeq += offset;
            RemoveFromCounts(item, offset);
            break;
        }
    }
    if (m_size == 0)
    {
        m_firstByteSeq = seq; // a FIN acknowledged
    }

    if (!m_sentList.empty())
    {
        TcpTxItem* head = m_sentList.front();
        if (head->m_sacked)
        {
            // SND.UNA cannot be SACKed (it would have been acknowledged): a
            // wrong guess among Reno duplicate acknowledgements. Move the flag.
            NS_ASSERT(!head->m_lost);
            head->m_sacked = false;
            m_sackedOut -= head->m_packet->GetSize();
            TcpTxBufferHints::Forget(*this);
            AddRenoSack();
            MarkHeadAsLost();
        }
        NS_ASSERT_MSG(head->m_startSeq == seq,
                      "While removing up to " << seq << " SND.UNA is " << m_firstByteSeq);
    }

    if (m_highestSack.second <= m_firstByteSeq)
    {
        m_sackSeen = false;
        m_highestSack = std::make_pair(m_sentList.end(), SequenceNumber32(0));
    }
    NS_ASSERT(m_firstByteSeq >= seq);
    NS_ASSERT(m_sentSize >= m_sackedOut + m_lostOut);
    if (hints != nullptr)
    {
        CheckHints(*this, *hints);
    }
}

// ---------------------------------------------------------------------------
// The wheel's members that un-settle segments (clear a retransmitted, SACKed
// or lost flag) or pop the last one: the wheel's own, after the hints are
// forgotten. (3.44's own members call them directly, not through the PLT: our
// DiscardUpTo is the one that calls MarkHeadAsLost.)

void
TcpTxBuffer::SetSentListLost(bool resetSack)
{
    ForgetHintsThenStock(kSetSentListLost, this, resetSack);
}

void
TcpTxBuffer::MarkHeadAsLost()
{
    ForgetHintsThenStock(kMarkHeadAsLost, this);
}

void
TcpTxBuffer::ResetLastSegmentSent()
{
    ForgetHintsThenStock(kResetLastSegmentSent, this);
}

void
TcpTxBuffer::ResetRenoSack()
{
    ForgetHintsThenStock(kResetRenoSack, this);
}

} // namespace ns3
