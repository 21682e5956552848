// autobyte (after AutoByte, ICDCS'22): a ByteScheduler whose
// (partition, credit) is re-chosen online every Interval iterations from a
// grid of Candidates. The paper's learned predictor is replaced by a measured
// search: each candidate is first run for one interval (exploration, in the
// given order, starting with the first), then the one with the shortest
// measured mean iteration time is kept; a switch happens only when its
// measured mean is at least MinGain shorter than the current one's latest.
// When the current candidate's interval mean moves by more than Retune from
// its previous one, runtime conditions have changed (the network, a slow
// worker): every other candidate's measurement is stale and the search starts
// again (AutoByte re-tunes online; 0 = never). Every sender of a job sees the
// same iteration times (worker 0's), so all switch together.
#ifndef DDNN_AUTOBYTE_SCHEDULER_H
#define DDNN_AUTOBYTE_SCHEDULER_H

#include "byte-scheduler.h"

#include "ns3/traced-callback.h"

#include <string>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief bytescheduler that re-chooses (partition, credit) by measured iteration time.
 */
class AutoByteScheduler : public ByteScheduler
{
  public:
    /**
     * \brief Get the type ID.
     * \return the object TypeId
     */
    static TypeId GetTypeId();
    /// \brief Constructor (attributes at their defaults).
    AutoByteScheduler();

    /// \brief Abort naming the attribute if the candidates or the search settings are unusable.
    void Validate() const override;
    /// \brief Time the current candidate; switch when its interval is over.
    void NotifyIterationDone(uint64_t iteration, Time duration) override;
    /// \brief The (partition, credit) in force.
    std::string GetState() const override;

    /// \brief Signature of the ConfigChanged trace source.
    typedef void (*ConfigCallback)(uint64_t iteration, uint64_t partition, uint64_t credit);

  protected:
    // the current candidate's (ByteScheduler's own attributes are not used:
    // attribute construction order would let them overwrite the candidate)
    uint64_t GetChunkBytes() const override;
    uint64_t GetCreditBytes() const override;

  private:
    void SetCandidates(std::string text);
    std::string GetCandidatesText() const;
    void Use(size_t candidate, uint64_t iteration);

    std::vector<std::pair<uint64_t, uint64_t>> m_candidates; //!< (partition, credit)
    std::vector<double> m_measuredMs;                        //!< per candidate; < 0: not yet
    size_t m_current;
    uint32_t m_interval;
    double m_minGain;
    double m_retune;
    std::vector<double> m_window; //!< iteration times (ms) since the last decision
    TracedCallback<uint64_t, uint64_t, uint64_t> m_configTrace;
};

} // namespace ns3

#endif
