// The backlog of chosen bands of chosen egress queue discs over time: every
// Interval from Start until Stop, each band's packets and bytes queued are
// read into memory (one event per sample for every band, no sink per packet),
// and ToCsv() hands the series to the harness once, at the end of the run.
// Opt-in: the harness creates one only for a scenario's run.queue_samples
// (the recipe's `queue-sampler` and `sample-queue` directives), so ordinary
// runs schedule nothing. The Sample trace source fires for every band read.
#ifndef DDNN_QUEUE_SAMPLER_H
#define DDNN_QUEUE_SAMPLER_H

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/queue-disc.h"
#include "ns3/traced-callback.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief Samples the backlog of queue disc bands at a fixed interval.
 */
class QueueSampler : public Object
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    QueueSampler();

    /// \brief Sample bands `bands` (empty: every band) of the root queue disc
    /// `qdisc`, whose classes are its bands, on link `link` from `fromNode` to
    /// `toNode`. The first call schedules the first sample, at Start.
    void Track(Ptr<QueueDisc> qdisc,
               uint32_t link,
               uint32_t fromNode,
               uint32_t toNode,
               const std::vector<uint32_t>& bands);

    /// \brief Samples taken so far (each one reads every tracked band).
    uint32_t GetNSamples() const;

    /// \brief link,from_node,to_node,band,time_s,backlog_packets,backlog_bytes:
    /// one row per sample and band, in time order for each band.
    std::string ToCsv() const;

    /**
     * \brief Signature of the Sample trace source: a band's backlog was read.
     * \param link the link's index
     * \param fromNode the node the egress belongs to
     * \param toNode the node at the link's other end
     * \param band the band (child queue disc)
     * \param packets the packets it held
     */
    typedef void (*SampleCallback)(uint32_t link,
                                   uint32_t fromNode,
                                   uint32_t toNode,
                                   uint32_t band,
                                   uint32_t packets);

  protected:
    void DoDispose() override;

  private:
    struct Tracked
    {
        Ptr<QueueDisc> qdisc;
        uint32_t link;
        uint32_t fromNode;
        uint32_t toNode;
        std::vector<uint32_t> bands; //!< empty until the first sample: every band
        bool everyBand;
    };

    /// Read every tracked band now; schedule the next sample unless past Stop.
    void Sample();
    /// The bands of `t` to read (its root's classes exist once it is initialised).
    void ResolveBands(Tracked& t) const;

    Time m_interval;
    Time m_start;
    Time m_stop;
    std::vector<Tracked> m_tracked;
    std::vector<int64_t> m_times;     //!< each sample's time (ns)
    std::vector<uint32_t> m_packets;  //!< per sample, one value per tracked band
    std::vector<uint32_t> m_bytes;    //!< as m_packets
    uint32_t m_width = 0;             //!< tracked bands, summed over m_tracked
    EventId m_next;
    /// A band's backlog was read: see SampleCallback.
    TracedCallback<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t> m_sampleTrace;
};

} // namespace ns3

#endif
