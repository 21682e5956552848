/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Where one TcpTxBuffer's scoreboard walks may start, kept between calls (as
 * Linux keeps its retransmit and lost hints on a socket).
 *
 * NextSeg looks for the first segment that is neither retransmitted nor
 * SACKed; UpdateLostCount marks segments lost down to SND.UNA; Update marks
 * the segments inside each SACK block. In a recovery each walked, on every
 * call, the segments a previous call had already settled: the retransmissions
 * still in flight, the lost ones, and a SACK block's whole length again as it
 * grew by one segment per acknowledgement. That is two cache lines per segment
 * (a list node and its item); with thousands of connections in a large fabric
 * those lines are rarely in cache, and these walks were where the cost of an
 * event grew with the fabric. Each walk now remembers what it settled (a
 * prefix of the sent list; the SACK blocks it processed) and starts after it.
 *
 * A hint stays true while nothing un-settles a segment it covers or removes
 * its last segment; what can (TcpTxBuffer members of the wheel that clear
 * flags or pop segments, DiscardUpTo, merges) forgets or shortens it. The
 * hints are an Object aggregated to the buffer, so a buffer made later at the
 * same address never sees another's, and a copy of a buffer (CopyObject)
 * carries none.
 */

#ifndef DDNN_TCP_TX_BUFFER_HINTS_H
#define DDNN_TCP_TX_BUFFER_HINTS_H

#include "ns3/object.h"
#include "ns3/sequence-number.h"
#include "ns3/tcp-tx-buffer.h"

#include <array>
#include <list>

namespace ddnn
{
namespace tcpfastpath
{

/**
 * What earlier walks of one TcpTxBuffer's sent list settled: two prefixes and
 * the SACK blocks the last Update processed.
 */
class TcpTxBufferHints : public ns3::Object
{
  public:
    /// A position in the sent list (TcpTxBuffer's private PacketList).
    using Position = std::list<ns3::TcpTxItem*>::const_iterator;

    /**
     * From the head of the sent list up to and including `last`, or nothing.
     */
    class Prefix
    {
      public:
        /**
         * @param list the sent list
         * @return the first segment after the prefix
         */
        Position After(const std::list<ns3::TcpTxItem*>& list) const
        {
            return m_set ? std::next(m_last) : list.cbegin();
        }

        /** @return whether the prefix holds a segment */
        bool IsSet() const
        {
            return m_set;
        }

        /** @return its last segment (IsSet() only) */
        Position Last() const
        {
            return m_last;
        }

        /**
         * The prefix now ends at `last` (at or after its old end).
         * @param last the new last segment
         */
        void EndAt(Position last)
        {
            m_set = true;
            m_last = last;
        }

        /** Empty: a walk starts at the head again. Always true. */
        void Clear()
        {
            m_set = false;
        }

        /**
         * Before `item` leaves the list from its head: when it is the
         * prefix's last segment, the whole prefix is gone.
         * @param item the segment about to be erased (still in the list)
         */
        void Erasing(const ns3::TcpTxItem* item)
        {
            if (m_set && *m_last == item)
            {
                m_set = false;
            }
        }

      private:
        bool m_set = false; //!< whether the prefix holds a segment
        Position m_last;    //!< its last segment
    };

    /**
     * A SACK block the last Update processed: every segment wholly inside
     * [first, second) is SACKed, and `last`, the last of them Update met,
     * ends at or before `second`. A later block that starts inside this one
     * may skip the segments up to `last`: those inside it are inside this one.
     */
    struct SackedBlock
    {
        ns3::SequenceNumber32 first;  //!< the block's first sequence number
        ns3::SequenceNumber32 second; //!< one past its last
        Position last;                //!< the last segment inside it Update met
    };

    /// The most blocks kept: a SACK option carries at most 4.
    static constexpr std::size_t kMaxSackedBlocks = 4;

    /** @return the TypeId */
    static ns3::TypeId GetTypeId();

    /**
     * @param buffer a buffer
     * @return its hints, or nullptr when it has none yet
     */
    static TcpTxBufferHints* Find(const ns3::TcpTxBuffer& buffer);

    /**
     * @param buffer a buffer
     * @return its hints, aggregated to it the first time
     */
    static TcpTxBufferHints& Of(const ns3::TcpTxBuffer& buffer);

    /**
     * Forget both prefixes of `buffer` (if it has hints): a member changed it
     * in a way they do not follow.
     * @param buffer the buffer
     */
    static void Forget(const ns3::TcpTxBuffer& buffer);

    /**
     * Before a segment leaves the sent list from its head (DiscardUpTo).
     * @param item the segment, still in the list
     */
    void Erasing(const ns3::TcpTxItem* item);

    /**
     * The block Update processed before that a new SACK block extends: one
     * that the new block starts inside of and reaches at least to the end of.
     * Its segments wholly inside the new block are SACKed already.
     * @param first the new block's first sequence number
     * @param second one past its last
     * @return the block, or nullptr when none is
     */
    const SackedBlock* Extended(ns3::SequenceNumber32 first, ns3::SequenceNumber32 second) const;

    /** Forget both prefixes and the SACK blocks. */
    void Clear();

    /// Each segment retransmitted or SACKed: NextSeg's rules take none of them.
    Prefix settled;
    /// Each segment SACKed or lost: UpdateLostCount changes none of them.
    Prefix marked;
    /// The SACK blocks the last Update processed (the first sackedBlockCount).
    std::array<SackedBlock, kMaxSackedBlocks> sackedBlocks{};
    /// How many of sackedBlocks hold one.
    std::size_t sackedBlockCount = 0;
};

} // namespace tcpfastpath
} // namespace ddnn

#endif /* DDNN_TCP_TX_BUFFER_HINTS_H */
