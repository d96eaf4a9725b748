/*
 * Replays an imported trace over the Collective API: every rank runs its ops as their
 * dependencies allow; compute ops hold their lane for their (optionally scaled) recorded time;
 * collectives start when every member of their group has reached them (matched by process group
 * and sequence number) and take what the fabric behind the API makes of them; point-to-point
 * sends complete their paired receive on delivery. Communication that cannot be re-simulated
 * (unsized) takes its recorded time. With recorded communication and unscaled compute the
 * replay reproduces the recorded timeline, which checks the inferred dependencies.
 */
#ifndef FABRICSIM_TRACES_TRACE_REPLAY_H
#define FABRICSIM_TRACES_TRACE_REPLAY_H

#include "collective-api.h"
#include "trace-ir.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fabricsim
{

/// How to replay.
struct ReplayOptions
{
    /// Communication over the Collective API (true) or as recorded (false).
    bool simulateComm = true;
    /// Multiplies every compute duration (a hypothetical accelerator 2x faster: 0.5).
    double computeScale = 1.0;
    /// Multiplies compute durations per op class on top of computeScale (roofline ratios).
    std::map<OpClass, double> classScale;
    /// Algorithm the collectives ask for ("auto" = the API's choice).
    std::string algorithm = "auto";
};

/// One collective (or transfer) of the replay, over its members.
struct ReplayedComm
{
    std::string key;  ///< group#seq (collectives), src>dst#n (transfers)
    std::string name; ///< the trace's op name
    std::string collective;
    uint64_t bytes = 0;
    uint32_t members = 0;
    bool simulated = false;
    double recordedUs = 0; ///< mean recorded duration over the members' traces
    double replayedUs = 0; ///< mean over members: first member ready -> member done
    double exposedUs = 0;  ///< mean over members of the time no compute ran during it
};

/// Outcome of one replay.
struct ReplayRun
{
    bool complete = false;
    int64_t spanPs = 0;                          ///< last op end over all ranks
    std::vector<int64_t> rankEndPs;              ///< per rank
    std::vector<int64_t> rankComputePs;          ///< per rank: compute busy (union over lanes)
    std::vector<ReplayedComm> comms;             ///< in start order
    std::vector<std::string> stuck;              ///< ops that never ran, and why
    std::vector<std::vector<int64_t>> opStartPs; ///< per rank, per op (-1 never)
    std::vector<std::vector<int64_t>> opEndPs;   ///< per rank, per op (-1 never)
};

/**
 * \brief The replay engine (see the file comment).
 */
class TraceReplayer
{
  public:
    /// \param trace a completed trace (CompleteRanks done); it must outlive the replayer
    TraceReplayer(const ImportedTrace& trace, const ReplayOptions& opt);
    ~TraceReplayer();
    TraceReplayer(const TraceReplayer&) = delete;
    TraceReplayer& operator=(const TraceReplayer&) = delete;

    /// Start every rank over \p api (its ranks = trace ranks); then run the event loop.
    /// \throws fabricsim::InputError when the API refuses a collective
    void Start(CollectiveApi& api);

    /// The outcome once the event loop has run dry.
    ReplayRun Finish() const;

  private:
    struct State;
    std::unique_ptr<State> m_state;
};

/// Start, run \p runEventLoop, Finish.
ReplayRun ReplayTrace(const ImportedTrace& trace,
                      const ReplayOptions& opt,
                      CollectiveApi& api,
                      const std::function<void()>& runEventLoop);

/// The compute time of \p op under \p opt.
int64_t ScaledComputePs(const TraceOp& op, const ReplayOptions& opt);

} // namespace fabricsim

#endif
