#include "tcp-dctcp-linux.h"

#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TcpDctcpLinux");

NS_OBJECT_ENSURE_REGISTERED(TcpDctcpLinux);

TypeId
TcpDctcpLinux::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TcpDctcpLinux")
                            .SetParent<TcpDctcp>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<TcpDctcpLinux>();
    return tid;
}

TcpDctcpLinux::TcpDctcpLinux()
    : TcpDctcp()
{
    NS_LOG_FUNCTION(this);
}

TcpDctcpLinux::TcpDctcpLinux(const TcpDctcpLinux& sock)
    : TcpDctcp(sock)
{
    NS_LOG_FUNCTION(this);
}

TcpDctcpLinux::~TcpDctcpLinux()
{
    NS_LOG_FUNCTION(this);
}

std::string
TcpDctcpLinux::GetName() const
{
    return "TcpDctcpLinux";
}

uint32_t
TcpDctcpLinux::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    NS_LOG_FUNCTION(this << tcb << bytesInFlight);
    return std::max(TcpDctcp::GetSsThresh(tcb, bytesInFlight), 2 * tcb->m_segmentSize);
}

Ptr<TcpCongestionOps>
TcpDctcpLinux::Fork()
{
    NS_LOG_FUNCTION(this);
    return CopyObject<TcpDctcpLinux>(this);
}

} // namespace ns3
