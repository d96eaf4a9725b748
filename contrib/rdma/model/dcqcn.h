/*
 * DCQCN (Zhu et al., SIGCOMM'15) as NIC firmware runs it and as the paper specifies it.
 * Rate decrease on CNP with the alpha estimate; recovery by timer (and, in the paper flavour,
 * byte counter): fast recovery, additive increase, hyper increase. Alpha decays lazily (exact
 * closed form per elapsed period) so no per-microsecond timer runs per QP.
 */
#ifndef FABRICSIM_DCQCN_H
#define FABRICSIM_DCQCN_H

#include "congestion-control.h"
#include "pending-event.h"

#include "ns3/data-rate.h"
#include "ns3/event-id.h"

namespace ns3
{

class Dcqcn : public CongestionControl
{
  public:
    static TypeId GetTypeId();
    Dcqcn();

    /// Factory with the NIC firmware defaults (reference sheet, "DCQCN (firmware flavour)").
    static ObjectFactory FirmwarePreset();
    /// Factory with the paper's defaults (reference sheet, "DCQCN (paper)").
    static ObjectFactory PaperPreset();

    void Init(uint64_t lineRateBps, Time baseRtt, uint32_t mtuBytes) override;
    void OnSend(uint32_t wireBytes) override;
    void OnCnp() override;

    void ProbeRest(MemoProbe& probe, uint32_t psn) const override;
    void VisitMemo(MemoRecord& record) override;

    std::string Name() const override
    {
        return "dcqcn";
    }

    double GetAlpha() const
    {
        return m_alpha;
    }

    uint64_t GetTargetRateBps() const
    {
        return m_targetBps;
    }

  protected:
    void DoDispose() override;

  private:
    void DecayAlpha();
    void IncreaseTimer();
    void Increase();
    void ArmIncreaseTimer();

    // attributes
    double m_g;
    Time m_alphaPeriod;
    Time m_decreasePeriod;
    Time m_increasePeriod;
    uint64_t m_byteCounter; ///< bytes per byte-counter stage; 0 disables it
    uint32_t m_fastRecoveryRounds;
    DataRate m_rai;
    DataRate m_rhai;
    DataRate m_minRate;
    double m_initialAlpha;

    // state
    double m_alpha;
    uint64_t m_targetBps;
    Time m_alphaUpdated;
    Time m_lastDecrease;
    bool m_decreasedOnce;
    uint32_t m_timerStage;
    uint32_t m_byteStage;
    uint64_t m_bytesSinceStage;
    PendingEvent m_increaseEvent;
};

} // namespace ns3

#endif
