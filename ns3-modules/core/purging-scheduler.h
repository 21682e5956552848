#ifndef DDNN_PURGING_SCHEDULER_H
#define DDNN_PURGING_SCHEDULER_H

#include "ns3/scheduler.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief The simulator's event queue: a binary heap that drops cancelled
 * events in batches.
 *
 * ns-3 cancels an event by flagging it; the event stays in the queue until
 * its time comes and is then skipped. TCP re-arms its retransmission timer
 * on every acknowledgement (cancel, schedule anew one RTO ahead), so the
 * queue fills with cancelled timers, one per acknowledgement of the last
 * RTO: ~97 % of the pending events of a 32-host leaf-spine, and as many more
 * as the fabric has more connections. They cost memory and cache misses
 * twice (their heap entries and their event objects) for nothing.
 *
 * The heap on a vector is ordered by (time, uid), as ns-3's
 * PriorityQueueScheduler, so events run in the same order. Whenever the
 * heap has doubled since the last purge (and holds at least MinPurgeSize
 * events), Insert removes the cancelled events and rebuilds the heap: linear
 * in the heap, amortised constant per event.
 *
 * A purged event is neither run nor removed, so ns-3's DefaultSimulatorImpl,
 * which asserts when its queue runs empty that every event it scheduled was
 * one or the other, would stop a run whose queue ran dry. So the heap always
 * holds one cancelled event at the end of time: the queue never runs empty
 * (a scenario recipe always ends with a stop event), and that event never
 * runs. RemoveNext drops the cancelled events it comes to as well, so the
 * simulator is handed live events only: Simulator::GetEventCount counts the
 * events that ran (ns-3's own queues also count each cancelled event the
 * simulator skips, a count that here would depend on when the heap purged).
 */
class PurgingScheduler : public Scheduler
{
  public:
    /**
     * \brief Register this type.
     * \return The object TypeId.
     */
    static TypeId GetTypeId();

    PurgingScheduler();
    ~PurgingScheduler() override;

    void Insert(const Scheduler::Event& ev) override;
    bool IsEmpty() const override;
    Scheduler::Event PeekNext() const override;
    Scheduler::Event RemoveNext() override;
    void Remove(const Scheduler::Event& ev) override;

    /// \return The cancelled events dropped so far.
    uint64_t GetPurgedEvents() const;

  private:
    /// Drop the cancelled events (all but the end-of-time one) and rebuild the heap.
    void Purge();

    std::vector<Scheduler::Event> m_heap; //!< min-heap on (time, uid)
    uint32_t m_minPurgeSize;              //!< no purge below this many events
    std::size_t m_purgeAt;                //!< purge when the heap reaches this size (and MinPurgeSize)
    uint64_t m_purged{0};                 //!< cancelled events dropped
};

} // namespace ns3

#endif /* DDNN_PURGING_SCHEDULER_H */
