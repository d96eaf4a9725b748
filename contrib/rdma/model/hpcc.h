/*
 * HPCC (Li et al., SIGCOMM'19): window-based congestion control driven by in-band telemetry.
 * Every switch egress stamps (link rate, timestamp, tx bytes, queue length) on the data frame;
 * the ACK echoes the stack. From two consecutive samples of a hop the sender knows the hop's
 * utilisation exactly, and sets its window so that the most loaded hop runs at eta.
 */
#ifndef FABRICSIM_HPCC_H
#define FABRICSIM_HPCC_H

#include "congestion-control.h"

#include "ns3/data-rate.h"

#include <vector>

namespace ns3
{

/**
 * \brief HPCC with per-ACK fast reaction and a reference window committed once per RTT.
 *
 * Per hop i: u_i = txRate_i / B_i + min(qlen_i, qlen'_i) / (B_i T), txRate from the tx-byte and
 * timestamp deltas of two consecutive INT samples. U is an EWMA over the base RTT T of the
 * largest u_i, weighted by that hop's sample interval tau: U = (1 - tau/T) U + tau/T u.
 * Window: if U >= eta or stage >= MaxStage, W = Wc / (U / eta) + W_AI (stage 0), else
 * W = Wc + W_AI (stage + 1); Wc := W only on the first ACK past the PSN boundary recorded at the
 * previous commit. Rate = W / T. W_AI = RateAI * T.
 */
class Hpcc : public CongestionControl
{
  public:
    static TypeId GetTypeId();
    Hpcc();

    void Init(uint64_t lineRateBps, Time baseRtt, uint32_t mtuBytes) override;
    void OnAck(const AckSample& ack) override;

    bool NeedsInt() const override
    {
        return true;
    }

    void ProbeRest(MemoProbe& probe, uint32_t psn) const override;
    void VisitMemo(MemoRecord& record) override;

    std::string Name() const override
    {
        return "hpcc";
    }

    /// Smoothed normalised inflight U of the most loaded hop.
    double GetUtilisation() const
    {
        return m_u;
    }

    /// Reference window Wc (bytes, committed once per RTT).
    double GetReferenceWindow() const
    {
        return m_wc;
    }

    /// Additive-increase stages since the last multiplicative step.
    uint32_t GetIncreaseStage() const
    {
        return m_incStage;
    }

  private:
    /// U from the new INT stack against the previous one; false if no hop has a time delta.
    bool MeasureInflight(const std::vector<IntHop>& hops);
    /// Window from U; commits it as the reference when `commit`.
    double ComputeWindow(bool commit);
    void Apply(double window);

    // attributes
    double m_eta;
    uint32_t m_maxStage;
    DataRate m_rai;
    DataRate m_minRate;

    // state
    double m_u;
    double m_wc;   ///< reference window (bytes)
    double m_wMax; ///< BDP at line rate: the initial and largest window
    double m_wAi;  ///< additive step (bytes)
    uint32_t m_incStage;
    uint32_t m_lastUpdateSeq;
    bool m_started; ///< a first INT stack has been recorded
    std::vector<IntHop> m_prev;
};

} // namespace ns3

#endif
