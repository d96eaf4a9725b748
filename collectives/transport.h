/*
 * The Transport seam (collectives -> network): "move N bytes from rank a to rank b on channel
 * c, call me when they are delivered", plus time and scheduling. The packet-level RDMA fabric
 * and the analytical flow model both implement it, so every algorithm runs unchanged on both.
 */
#ifndef FABRICSIM_TRANSPORT_H
#define FABRICSIM_TRANSPORT_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fabricsim
{

class MemoFabric;

class Transport
{
  public:
    using Callback = std::function<void()>;

    virtual ~Transport() = default;

    /**
     * Move `bytes` (> 0) from rank `src` to rank `dst` on `channel`. `onDelivered` runs when the
     * last byte has arrived at `dst`. Messages of one (src, dst, channel) arrive in order.
     */
    virtual void Send(
        uint32_t src, uint32_t dst, uint32_t channel, uint64_t bytes, Callback onDelivered)
        = 0;

    /// Current simulated time in picoseconds.
    virtual int64_t NowPs() const = 0;

    /// Run `fn` after `delayPs` picoseconds of simulated time.
    virtual void Schedule(int64_t delayPs, Callback fn) = 0;

    /// Number of ranks this transport connects.
    virtual uint32_t NumRanks() const = 0;

    /// Run the simulation until no work is left (or the transport's stop time).
    virtual void Run() = 0;

    /// "packet" or "analytical".
    virtual std::string Name() const = 0;

    /// Why the last Run() ended with work left (the stop time a user set, a stall watchdog) and
    /// when; empty when it ended because no work was left.
    virtual std::string StopReport() const
    {
        return "";
    }

    /// True when the last Run() ended at the stop time a user set (stop_ns) with work left.
    virtual bool ReachedStopTime() const
    {
        return false;
    }

    /// What the last Run() left undone, a line each: the transfers still in flight (a
    /// transport that tracks them), then StopReport() when it is not empty, last.
    virtual std::vector<std::string> StuckReport() const
    {
        const std::string stop = StopReport();
        return stop.empty() ? std::vector<std::string>{} : std::vector<std::string>{stop};
    }

    /// The fabric's side of the collective memo (memo-fabric.h), or nullptr when this transport
    /// cannot replay collectives (only a packet-level fabric keeps the state a replay writes).
    virtual MemoFabric* GetMemoFabric()
    {
        return nullptr;
    }
};

} // namespace fabricsim

#endif
