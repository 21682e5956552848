// DCQCN's reaction point (Zhu et al., "Congestion Control for Large-Scale
// RDMA Deployments", SIGCOMM 2015), as a queue pair's rate control.
//
// A CNP cuts the rate: target RT = current RC, RC = RC x (1 - alpha / 2),
// alpha = (1 - g) alpha + g; without a CNP for AlphaPeriod, alpha =
// (1 - g) alpha. After a cut the rate recovers in increase events, one per
// RateIncreasePeriod (timer T) and one per ByteCounter bytes sent (B), both
// restarted by each cut: while max(T, B) < F, fast recovery (RC = (RT +
// RC) / 2); while min(T, B) > F, hyper increase (RT += i x HyperIncrease,
// i = min(T, B) - F); otherwise additive increase (RT += AdditiveIncrease);
// each then RC = (RT + RC) / 2, never above the line rate.
//
// The timers are evaluated when the rate is asked for (each packet) rather
// than scheduled: the same increase events, in the same order, at no
// event's cost while the queue pair is idle or at line rate.
#ifndef DDNN_DCQCN_H
#define DDNN_DCQCN_H

#include "rdma-rate-control.h"

#include "ns3/nstime.h"
#include "ns3/traced-value.h"

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief DCQCN's reaction point: rate cuts on CNPs, fast recovery, additive and hyper increase.
 */
class Dcqcn : public RdmaRateControl
{
  public:
    /// \brief Get the type ID. \return the object TypeId
    static TypeId GetTypeId();
    Dcqcn();
    ~Dcqcn() override;

    void Start(DataRate lineRate) override;
    DataRate GetRate() override;
    void OnCongestionNotification() override;
    void OnSent(uint32_t bytes) override;
    uint64_t GetRateCuts() const override;

    /// \return alpha now (the timer's decay applied)
    double GetAlpha();

  private:
    /// Apply every rate-increase timer expiry up to now.
    void Advance();
    /// One increase event (timer or byte counter).
    void Increase();

    // attributes (the paper's defaults)
    double m_g;
    Time m_alphaPeriod;
    Time m_increasePeriod;
    uint64_t m_byteCounter;
    uint32_t m_f;
    DataRate m_additive;
    DataRate m_hyper;
    DataRate m_minRate;
    double m_initialAlpha;

    DataRate m_line;
    TracedValue<double> m_rc{0}; //!< current rate, bit/s
    double m_rt{0};              //!< target rate, bit/s
    double m_alpha{1};
    Time m_alphaSince;  //!< alpha was last updated then (a CNP)
    Time m_timerSince;  //!< the increase timer last restarted then
    uint64_t m_bytes{0}; //!< bytes sent since the byte counter last fired
    uint32_t m_timerEvents{0};
    uint32_t m_byteEvents{0};
    bool m_cut{false};  //!< cut at least once
    uint64_t m_cuts{0};
};

} // namespace ns3

#endif
