// DCTCP whose window reduction stops at two segments, as Linux's
// (tcp_dctcp.c: dctcp_ssthresh returns max(cwnd - cwnd * alpha / 2, 2)).
//
// ns-3's TcpDctcp returns (1 - alpha / 2) x cwnd with no floor. A sender
// whose window is one segment (after a retransmission timeout) and which
// then gets an ECN echo ends with a window below one segment and nothing in
// flight: TcpSocketBase sends no segment larger than the window, no ACK can
// arrive to open it and no timer is armed, so the connection stalls for
// good. Training flows of a low band meet exactly this: they lose packets
// behind the background and are marked in the same band.
#ifndef DDNN_TCP_DCTCP_LINUX_H
#define DDNN_TCP_DCTCP_LINUX_H

#include "ns3/tcp-dctcp.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief ns-3's DCTCP with Linux's floor of two segments on the reduced
 * window (ssthresh), so that an ECN echo never leaves a window below one
 * segment.
 */
class TcpDctcpLinux : public TcpDctcp
{
  public:
    /// \brief Get the type ID. \return the object TypeId
    static TypeId GetTypeId();
    TcpDctcpLinux();
    /// \brief Copy constructor (Fork). \param sock the object to copy
    TcpDctcpLinux(const TcpDctcpLinux& sock);
    ~TcpDctcpLinux() override;

    std::string GetName() const override;
    /// \brief TcpDctcp's (1 - alpha / 2) x cwnd, at least two segments.
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
    Ptr<TcpCongestionOps> Fork() override;
};

} // namespace ns3

#endif // DDNN_TCP_DCTCP_LINUX_H
