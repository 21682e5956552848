/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * libddnn-tcp's entry points: is the fast path in force, is this the
 * cross-checking build; and that build's shared machinery.
 */

#include "tcp-fastpath.h"

#include "ns3/tcp-tx-buffer.h"

#include <iterator>

namespace ddnn
{
namespace tcpfastpath
{
namespace
{
unsigned long long g_checkedCalls = 0; ///< calls compared with the wheel's (debug build)
unsigned long long g_hintUses[3] = {0, 0, 0}; ///< walks after the hints, by HintUse (debug build)
} // namespace

void*
StockLibrary()
{
    // TcpTxBuffer::GetTypeId is not replaced: it resolves into libns3-internet.
    static void* handle = [] {
        Dl_info info{};
        NS_ABORT_MSG_UNLESS(
            dladdr(reinterpret_cast<void*>(&ns3::TcpTxBuffer::GetTypeId), &info),
            "tcp-fastpath: cannot find libns3-internet");
        return dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    }();
    NS_ABORT_MSG_UNLESS(handle, "tcp-fastpath: libns3-internet is not loaded");
    return handle;
}

#ifdef DDNN_TCP_CROSSCHECK

namespace
{
int g_depth = 0; ///< replaced members running as the compared one (Nested)
} // namespace

void
CountCheck()
{
    ++g_checkedCalls;
}

void
CountHintUse(HintUse use)
{
    ++g_hintUses[static_cast<int>(use)];
}

Nested::Nested()
{
    ++g_depth;
}

Nested::~Nested()
{
    --g_depth;
}

bool
Nested::Outermost()
{
    return g_depth == 0;
}

void
Mismatch(const char* member, const std::string& what)
{
    NS_FATAL_ERROR("tcp-fastpath cross-check: " << member << " differs from ns-3.44's at t="
                                                << ns3::Simulator::Now().GetNanoSeconds()
                                                << " ns: " << what);
}

#endif // DDNN_TCP_CROSSCHECK

} // namespace tcpfastpath
} // namespace ddnn

extern "C" int
ddnn_tcp_fastpath_in_force(int* total)
{
    using namespace ddnn::tcpfastpath;
    Dl_info self{};
    dladdr(reinterpret_cast<void*>(&ddnn_tcp_fastpath_in_force), &self);
    int here = 0;
    int count = 0;
    for (const auto* members : {&TxBufferMembers(), &RxBufferMembers()})
    {
        for (const char* symbol : *members)
        {
            ++count;
            Dl_info info{};
            void* resolved = dlsym(RTLD_DEFAULT, symbol);
            if (resolved && dladdr(resolved, &info) && info.dli_fbase == self.dli_fbase)
            {
                ++here;
            }
        }
    }
    if (total)
    {
        *total = count;
    }
    return here;
}

extern "C" int
ddnn_tcp_fastpath_crosscheck(void)
{
#ifdef DDNN_TCP_CROSSCHECK
    return 1;
#else
    return 0;
#endif
}

extern "C" unsigned long long
ddnn_tcp_fastpath_checked_calls(void)
{
    return ddnn::tcpfastpath::g_checkedCalls;
}

extern "C" void
ddnn_tcp_fastpath_hint_uses(unsigned long long uses[3])
{
    for (int k = 0; k < 3; ++k)
    {
        uses[k] = ddnn::tcpfastpath::g_hintUses[k];
    }
}
