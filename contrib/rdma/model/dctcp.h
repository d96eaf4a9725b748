/*
 * DCTCP (Alizadeh et al., SIGCOMM'10) in the rate-based form RoCE simulators use: the sender
 * estimates the fraction of CE-marked bytes per RTT (alpha, gain g), cuts its rate by alpha/2 at
 * most once per window of data when an ACK echoes ECN, and adds R_AI once per RTT otherwise; the
 * window follows the rate, so sending stays ACK-clocked as in window-based DCTCP.
 * Switches mark with a step at K (Kmin = K, Kmax just above it, Pmax 1).
 */
#ifndef FABRICSIM_DCTCP_H
#define FABRICSIM_DCTCP_H

#include "congestion-control.h"

#include "ns3/data-rate.h"

namespace ns3
{

/**
 * \brief Rate-based DCTCP.
 *
 * Per ACK: count it (and whether it echoes ECN). The first ACK at or past the PSN boundary
 * recorded at the last update ends an RTT: alpha = (1 - g) alpha + g F (F = fraction of the
 * RTT's ACKs that echoed ECN), and, outside CWR and without ECN on this ACK, R += R_AI.
 * An ECN echo outside CWR: R *= 1 - alpha/2 and enter CWR until the data sent before the cut
 * (sndNxt at the cut) is acknowledged. With UseWindow (default, as the HPCC simulator runs
 * DCTCP) the in-flight window is rate * base RTT.
 */
class Dctcp : public CongestionControl
{
  public:
    static TypeId GetTypeId();
    Dctcp();

    void Init(uint64_t lineRateBps, Time baseRtt, uint32_t mtuBytes) override;
    void OnAck(const AckSample& ack) override;

    void ProbeRest(MemoProbe& probe, uint32_t psn) const override;
    void VisitMemo(MemoRecord& record) override;

    std::string Name() const override
    {
        return "dctcp";
    }

    double GetAlpha() const
    {
        return m_alpha;
    }

    /// True while a decrease is in effect (no further cut until its data is acknowledged).
    bool InCwr() const
    {
        return m_cwr;
    }

  private:
    /// Clamp and publish the rate (and the window that goes with it).
    void Apply();

    // attributes
    double m_g;
    double m_initialAlpha;
    bool m_useWindow;
    DataRate m_rai;
    DataRate m_minRate;

    // state
    double m_alpha;
    double m_rate; ///< exact rate (bits/s) before integer rounding
    uint32_t m_acks;
    uint32_t m_ecnAcks;
    uint32_t m_lastUpdateSeq;
    bool m_cwr;
    uint32_t m_cwrEndSeq;
};

} // namespace ns3

#endif
