/*
 * Swift (Kumar et al., SIGCOMM'20): delay-based AIMD toward a target delay that grows with the
 * path's hop count and shrinks with the flow's window (flow scaling), so many small flows get
 * more queue and stay fair. Rate-based here: the window W (bytes) is also enforced as the NIC
 * window, and the NIC paces at W / base RTT, which covers Swift's sub-packet windows.
 */
#ifndef FABRICSIM_SWIFT_H
#define FABRICSIM_SWIFT_H

#include "congestion-control.h"

#include "ns3/data-rate.h"

namespace ns3
{

/**
 * \brief Swift with hop and flow scaling of the target delay.
 *
 * target = BaseTarget + hops * PerHopScaling + fs, fs = clamp(a / sqrt(cwnd) + b, 0, R) with
 * R = FsRange * BaseTarget, a = R / (1/sqrt(FsMinCwnd) - 1/sqrt(FsMaxCwnd)),
 * b = -a / sqrt(FsMaxCwnd), cwnd = W / MTU in packets. delay < target: W += AI * MTU * acked / W
 * (cwnd >= 1 packet) or W += AI * acked (below one packet). Otherwise, at most once per RTT (delay
 * since the last cut): W *= max(1 - Beta (delay - target) / delay, 1 - MaxMdf). NACK or timeout:
 * W *= 1 - MaxMdf, also at most once per RTT. Rate = W / base RTT.
 */
class Swift : public CongestionControl
{
  public:
    static TypeId GetTypeId();
    Swift();

    void Init(uint64_t lineRateBps, Time baseRtt, uint32_t mtuBytes) override;
    void OnAck(const AckSample& ack) override;
    void OnNack() override;
    void OnTimeout() override;

    void ProbeRest(MemoProbe& probe, uint32_t psn) const override;
    void VisitMemo(MemoRecord& record) override;

    std::string Name() const override
    {
        return "swift";
    }

    /// Target delay for a path of `hops` switches at the current window.
    Time TargetDelay(uint32_t hops) const;

    /// Window W in bytes (exact).
    double GetWindow() const
    {
        return m_w;
    }

  private:
    bool CanDecrease(Time rtt) const;
    void Decrease(double factor);
    void Apply();

    // attributes
    Time m_baseTarget;
    Time m_perHop;
    double m_fsRange;
    double m_fsMinCwnd;
    double m_fsMaxCwnd;
    double m_ai;
    double m_beta;
    double m_maxMdf;
    DataRate m_minRate;

    // state
    double m_w;    ///< window (bytes)
    double m_wMax; ///< BDP at line rate: initial and largest window
    Time m_lastDecrease;
    bool m_decreased;
    Time m_lastRtt;
};

} // namespace ns3

#endif
