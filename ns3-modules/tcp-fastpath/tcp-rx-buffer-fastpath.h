/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A faster ns3::TcpRxBuffer::Add, mirroring ns-3.44 (see tcp-fastpath.h for
 * why and how it takes the wheel's place).
 *
 * 3.44's Add walks the buffered segments (a std::map by sequence number) from
 * the first one twice for every arriving segment: to trim the new segment
 * against what overlaps it, and to advance RCV.NXT over what became in order.
 * Behind a hole the map holds every out-of-order segment of the window (up to
 * ~1,700 here), so each arrival walked them all. The segments in the map do
 * not overlap and are in sequence order, so the first walk can start at the
 * last segment beginning at or before the new one (those before it end before
 * the new data) and the second at the first segment not below RCV.NXT (3.44
 * skips those before it): found by the map's own search, O(log n). The SACK
 * list is kept by the wheel's own UpdateSackList and ClearSackList.
 */

#ifndef DDNN_TCP_RX_BUFFER_FASTPATH_H
#define DDNN_TCP_RX_BUFFER_FASTPATH_H

#include "tcp-fastpath.h"

#endif /* DDNN_TCP_RX_BUFFER_FASTPATH_H */
