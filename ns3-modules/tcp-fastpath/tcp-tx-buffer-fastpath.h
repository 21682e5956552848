/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Faster ns3::TcpTxBuffer members, mirroring ns-3.44 (see tcp-fastpath.h for
 * why and how they take the wheel's place). Replaced, as TcpSocketBase calls
 * them:
 *
 *   CopyFromSequence  3.44 asserts `list != m_sentList` for every item it walks,
 *                     an element-by-element comparison of two lists: O(N) per
 *                     item, O(N^2) per retransmission. Here it is an identity
 *                     test of the list (what the assertion means), O(1). The
 *                     private helpers it calls (GetNewSegment,
 *                     GetTransmittedSegment, GetPacketFromList, SplitItems,
 *                     MergeItems) are redefined with it, local to the library.
 *   Update            the SACK scoreboard walk reads each segment's start from
 *                     the segment itself (and its end from the next one's
 *                     start) instead of adding up packet sizes: the same
 *                     numbers, without touching every packet, and walks a block
 *                     from SND.UNA or from the highest SACKed segment,
 *                     whichever is nearer (3.44 walks every block from
 *                     SND.UNA); a block that extends one the last call
 *                     processed, from that block's last segment on (the
 *                     buffer's hints, tcp-tx-buffer-hints.h). UpdateLostCount,
 *                     which it calls, likewise skips a running sum 3.44 never
 *                     uses, and stops where the hints say every segment below
 *                     is SACKed or lost already.
 *   NextSeg           stops walking once nothing further can change its answer
 *                     (no segment is marked lost, or the highest SACK is
 *                     reached), starts after the segments the hints say are
 *                     retransmitted or SACKed, and reads segment starts as
 *                     Update does.
 *   IsLost            stops at the segment holding the sequence number.
 *   IsRetransmittedDataAcked
 *                     answers at once when nothing is retransmitted, and stops
 *                     past the acknowledged sequence number.
 *   DiscardUpTo       3.44's, keeping the hints true as segments leave.
 *   SetSentListLost, MarkHeadAsLost, ResetLastSegmentSent, ResetRenoSack
 *                     the wheel's own (looked up in libns3-internet), after
 *                     forgetting the hints: they clear flags or pop segments.
 *
 * These rely on what 3.44's own code keeps true of the sent list: segments in
 * sequence order, each starting where the previous one ends (m_startSeq), and
 * the byte counters (m_lostOut, m_retrans, ...) equal to the sums of the
 * flagged segments. The cross-checking build confirms it call by call.
 */

#ifndef DDNN_TCP_TX_BUFFER_FASTPATH_H
#define DDNN_TCP_TX_BUFFER_FASTPATH_H

#include "tcp-fastpath.h"

#endif /* DDNN_TCP_TX_BUFFER_FASTPATH_H */
