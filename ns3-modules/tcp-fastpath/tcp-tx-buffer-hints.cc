/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "tcp-tx-buffer-hints.h"

namespace ddnn
{
namespace tcpfastpath
{

ns3::TypeId
TcpTxBufferHints::GetTypeId()
{
    static ns3::TypeId tid = ns3::TypeId("ddnn::TcpTxBufferHints")
                                 .SetParent<ns3::Object>()
                                 .SetGroupName("Internet");
    return tid;
}

TcpTxBufferHints*
TcpTxBufferHints::Find(const ns3::TcpTxBuffer& buffer)
{
    return ns3::PeekPointer(buffer.GetObject<TcpTxBufferHints>());
}

TcpTxBufferHints&
TcpTxBufferHints::Of(const ns3::TcpTxBuffer& buffer)
{
    TcpTxBufferHints* hints = Find(buffer);
    if (hints == nullptr)
    {
        ns3::Ptr<TcpTxBufferHints> made = ns3::CreateObject<TcpTxBufferHints>();
        // Aggregation does not change the buffer's behaviour; const members
        // (NextSeg) keep their hints here too.
        const_cast<ns3::TcpTxBuffer&>(buffer).AggregateObject(made);
        hints = ns3::PeekPointer(made);
    }
    return *hints;
}

void
TcpTxBufferHints::Forget(const ns3::TcpTxBuffer& buffer)
{
    if (TcpTxBufferHints* hints = Find(buffer))
    {
        hints->Clear();
    }
}

void
TcpTxBufferHints::Clear()
{
    settled.Clear();
    marked.Clear();
    sackedBlockCount = 0;
}

void
TcpTxBufferHints::Erasing(const ns3::TcpTxItem* item)
{
    settled.Erasing(item);
    marked.Erasing(item);
    // Segments leave from the head: a block whose last segment goes has no
    // segment left.
    std::size_t kept = 0;
    for (std::size_t k = 0; k < sackedBlockCount; ++k)
    {
        if (*sackedBlocks[k].last != item)
        {
            sackedBlocks[kept++] = sackedBlocks[k];
        }
    }
    sackedBlockCount = kept;
}

const TcpTxBufferHints::SackedBlock*
TcpTxBufferHints::Extended(ns3::SequenceNumber32 first, ns3::SequenceNumber32 second) const
{
    for (std::size_t k = 0; k < sackedBlockCount; ++k)
    {
        const SackedBlock& block = sackedBlocks[k];
        if (block.first <= first && first < block.second && block.second <= second)
        {
            return &block;
        }
    }
    return nullptr;
}

} // namespace tcpfastpath
} // namespace ddnn
