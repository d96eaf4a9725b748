/*
 * The congestion-control interface: one instance per queue pair, fed with the events a RoCE
 * NIC sees (send, ACK, CNP, NACK, timeout) and producing a sending rate and an optional window.
 * Algorithms are ns-3 Objects selected by name through CongestionControlFactory, so new ones
 * plug in without touching the NIC.
 */
#ifndef FABRICSIM_CONGESTION_CONTROL_H
#define FABRICSIM_CONGESTION_CONTROL_H

#include "fabric-packet.h"
#include "link-memo.h"

#include "ns3/callback.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/object.h"
#include "ns3/traced-value.h"

#include <string>
#include <vector>

namespace ns3
{

/// What an ACK tells the sender.
struct AckSample
{
    uint64_t newlyAckedBytes = 0; ///< payload bytes newly acknowledged
    uint32_t ackedPsn = 0;        ///< cumulative: everything below this PSN is acknowledged
    uint32_t sndNxt = 0;          ///< sender's next PSN when the ACK arrived
    bool ecnEcho = false;         ///< acked frame was CE-marked
    Time rtt;                     ///< now - send time of the acked frame
    uint32_t hops = 0; ///< switch hops the ACK crossed (from its TTL; paths are symmetric)
    const std::vector<IntHop>* intHops = nullptr; ///< INT stack echoed by the receiver
};

/**
 * \brief Per-QP congestion control: rate (bits/s) and window (bytes, 0 = none).
 */
class CongestionControl : public Object
{
  public:
    static TypeId GetTypeId();
    CongestionControl();

    /// Called once when the QP is created. Starts at line rate.
    virtual void Init(uint64_t lineRateBps, Time baseRtt, uint32_t mtuBytes);

    virtual void OnSend(uint32_t wireBytes)
    {
    }

    virtual void OnAck(const AckSample& ack)
    {
    }

    virtual void OnCnp()
    {
    }

    virtual void OnNack()
    {
    }

    virtual void OnTimeout()
    {
    }

    /// True if the algorithm needs switches to stamp INT on its data frames.
    virtual bool NeedsInt() const
    {
        return false;
    }

    /**
     * \brief The collective memo's view (link-memo.h): a pending timer keeps the algorithm
     * from rest; the digest holds its state relative to now and to \p psn (the queue pair's
     * acknowledged sequence number, for state kept as sequence numbers).
     */
    virtual void ProbeRest(MemoProbe& probe, uint32_t psn) const;
    /// Every state field, in a fixed order (link-memo.h).
    virtual void VisitMemo(MemoRecord& record);

    /// Algorithm name as used in scenarios ("none", "dcqcn", ...).
    virtual std::string Name() const = 0;

    uint64_t GetRateBps() const
    {
        return m_rateBps;
    }

    uint64_t GetWindowBytes() const
    {
        return m_windowBytes;
    }

    uint64_t GetLineRateBps() const
    {
        return m_lineRateBps;
    }

    /// The NIC is told when rate or window change (to re-evaluate pacing).
    void SetUpdateCallback(Callback<void> cb)
    {
        m_update = cb;
    }

  protected:
    void DoDispose() override;
    /// Set the rate, clamped to [MinRate, line rate], and notify the NIC.
    void SetRate(uint64_t bps);
    void SetWindow(uint64_t bytes);
    /**
     * \brief A rate the model computed in floating point: clamped to [MinRate, line rate] before
     * it becomes an integer (a double below 0 or past 2^64 has no uint64 value, and converting it
     * is undefined), rounded down. Throws fabricsim::UnitOverflow on NaN: a model that divided
     * by zero stops the run instead of sending at an arbitrary rate.
     */
    void SetRateFromModel(double bps);
    /// A window in bytes from floating point: rounded to nearest, at least 1 (0 would mean "no
    /// window"), at most 2^63; NaN throws fabricsim::UnitOverflow.
    void SetWindowFromModel(double bytes);

    uint64_t m_lineRateBps = 0;
    uint64_t m_minRateBps = 0;
    Time m_baseRtt;
    uint32_t m_mtu = 1000;

  private:
    TracedValue<uint64_t> m_rateBps;
    uint64_t m_windowBytes = 0;
    Callback<void> m_update;
};

/// No congestion control: line rate, PFC alone keeps the fabric lossless.
class NoCongestionControl : public CongestionControl
{
  public:
    static TypeId GetTypeId();

    std::string Name() const override
    {
        return "none";
    }
};

/**
 * \brief Maps scenario names ("none", "dcqcn", "dcqcn-paper", ...) to configured factories.
 */
class CongestionControlFactory
{
  public:
    /// Factory for `name`; throws InputError(file, field, valid names, name) if unknown.
    static ObjectFactory Get(const std::string& name,
                             const std::string& file = "",
                             const std::string& field = "transport.cc");
    /// Register an algorithm (user-defined ones included) under a scenario name.
    static void Register(const std::string& name, const ObjectFactory& factory);
    /// All registered names, sorted.
    static std::vector<std::string> Names();
};

} // namespace ns3

#endif
