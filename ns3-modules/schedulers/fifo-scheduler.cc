#include "fifo-scheduler.h"

#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FifoScheduler");

NS_OBJECT_ENSURE_REGISTERED(FifoScheduler);

TypeId
FifoScheduler::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FifoScheduler")
                            .SetParent<CommScheduler>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<FifoScheduler>();
    return tid;
}

} // namespace ns3
