/*
 * TIMELY (Mittal et al., SIGCOMM'15): rate control from the RTT and its gradient. RTTs below
 * Tlow grow the rate additively, RTTs above Thigh cut it in proportion to the excess, and in
 * between the sign of the smoothed RTT gradient decides: negative or flat grows (hyper-active
 * after N such updates in a row), positive cuts in proportion to the normalised gradient.
 */
#ifndef FABRICSIM_TIMELY_H
#define FABRICSIM_TIMELY_H

#include "congestion-control.h"

#include "ns3/data-rate.h"

namespace ns3
{

/**
 * \brief TIMELY, updated once per RTT (default) or per completed segment of SegmentBytes.
 *
 * new_diff = rtt - prev_rtt; rtt_diff = (1 - alpha) rtt_diff + alpha new_diff;
 * g = rtt_diff / MinRtt. rtt < Tlow: R += delta; rtt > Thigh: R *= 1 - beta (1 - Thigh/rtt);
 * g <= 0: R += N delta (N = HaiFactor from the HaiThreshold-th update in a row with g <= 0,
 * else 1);
 * g > 0: R *= 1 - beta g.
 */
class Timely : public CongestionControl
{
  public:
    static TypeId GetTypeId();
    Timely();

    void Init(uint64_t lineRateBps, Time baseRtt, uint32_t mtuBytes) override;
    void OnAck(const AckSample& ack) override;

    void ProbeRest(MemoProbe& probe, uint32_t psn) const override;
    void VisitMemo(MemoRecord& record) override;

    std::string Name() const override
    {
        return "timely";
    }

    /// Smoothed RTT difference between consecutive updates (seconds).
    double GetRttDiffSeconds() const
    {
        return m_rttDiff;
    }

    /// Consecutive updates with a non-positive gradient.
    uint32_t GetNegativeGradientCount() const
    {
        return m_negCount;
    }

  private:
    void Update(Time rtt);

    // attributes
    double m_alpha;
    double m_beta;
    Time m_tLow;
    Time m_tHigh;
    Time m_minRtt;
    DataRate m_delta;
    uint32_t m_haiThreshold;
    uint32_t m_haiFactor;
    uint64_t m_segmentBytes;
    DataRate m_minRate;

    // state
    double m_rate;    ///< exact rate (bits/s) before integer rounding
    double m_rttDiff; ///< seconds
    Time m_prevRtt;
    bool m_havePrev;
    uint32_t m_negCount;
    uint64_t m_ackedSinceUpdate;
    uint32_t m_lastUpdateSeq; ///< sndNxt at the last update (per-RTT mode)
};

} // namespace ns3

#endif
