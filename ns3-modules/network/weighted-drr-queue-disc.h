// Weighted deficit round robin (Shreedhar & Varghese; Linux sch_drr) over N
// bands, each a child queue disc with its own limit. A packet's band comes
// from the same mechanism as ns-3's PrioQueueDisc: packet filters if any,
// else its socket priority (derived from the IP ToS) through a 16-entry
// priomap, so traffic classes map to bands exactly as with `prio`.
//
// Each backlogged band is visited in turn; a visit adds the band's quantum
// (bytes) to its deficit and sends head packets while they fit in it. Over
// any interval in which bands stay backlogged they share the link in
// proportion to their quanta; a band without packets leaves the active list
// (and forgets its deficit), so an idle band's share goes to the others
// (work conservation).
#ifndef DDNN_WEIGHTED_DRR_QUEUE_DISC_H
#define DDNN_WEIGHTED_DRR_QUEUE_DISC_H

#include "ns3/prio-queue-disc.h"
#include "ns3/queue-disc.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Weighted deficit round robin over prio-style bands, each a child
 * queue disc with its own limit.
 */
class WeightedDrrQueueDisc : public QueueDisc
{
  public:
    /// \brief Get the type ID. \return the object TypeId
    static TypeId GetTypeId();
    /// \brief Bands are made at initialisation, from the Quanta/Priomap attributes.
    WeightedDrrQueueDisc();
    ~WeightedDrrQueueDisc() override;

    /// \brief The quantum of band `band` in bytes (after initialisation).
    uint32_t GetQuantum(uint32_t band) const;
    /// \brief The band a packet with socket priority `prio` is put in.
    uint16_t GetBandForPriority(uint8_t prio) const;

    /// \brief TracedCallback signature: a packet of `bytes` left band `band`.
    typedef void (*BandDequeueCallback)(uint32_t band, uint32_t bytes);

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> DoDequeue() override;
    bool CheckConfig() override;
    void InitializeParams() override;

    uint32_t BandOf(Ptr<QueueDiscItem> item);
    void Deactivate(uint32_t band);

    Priomap m_prio2band;            //!< socket priority -> band
    std::string m_quantaText;       //!< "Quanta" attribute: bytes per band, space-separated
    uint32_t m_quantum;             //!< "Quantum": every band's quantum when Quanta is empty
    std::vector<uint32_t> m_quanta; //!< bytes added to a band's deficit per visit
    std::vector<uint64_t> m_deficit;
    std::vector<bool> m_active;     //!< band is in m_activeList
    std::deque<uint32_t> m_activeList;
    TracedCallback<uint32_t, uint32_t> m_bandDequeue;
};

} // namespace ns3

#endif
