#include "fifo-scheduler.h"

namespace ns3
{

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
