#include "random-order-scheduler.h"

#include "ns3/log.h"

#include <utility>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RandomOrderScheduler");

NS_OBJECT_ENSURE_REGISTERED(RandomOrderScheduler);

TypeId
RandomOrderScheduler::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RandomOrderScheduler")
                            .SetParent<TicTacScheduler>()
                            .SetGroupName("Ddnn")
                            .AddConstructor<RandomOrderScheduler>();
    return tid;
}

RandomOrderScheduler::RandomOrderScheduler()
    : m_random(CreateObject<UniformRandomVariable>())
{
    NS_LOG_FUNCTION(this);
}

void
RandomOrderScheduler::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_random = nullptr;
    TicTacScheduler::DoDispose();
}

std::vector<uint32_t>
RandomOrderScheduler::MakeOrder(uint64_t)
{
    NS_LOG_FUNCTION(this);
    // Fisher-Yates over the run's seeded stream (the schedulers are created
    // in the same order in every run: same seed, same orders)
    std::vector<uint32_t> order = GetTensors();
    for (uint32_t i = order.size(); i > 1; --i)
    {
        const uint32_t j = m_random->GetInteger(0, i - 1);
        std::swap(order[i - 1], order[j]);
    }
    return order;
}

} // namespace ns3
