/*
 * When a `run` with traffic ends, the same way on one process and across ranks of ns-3's
 * distributed engine (docs/performance.md, "The end of a run"). A rank knows only its own flows'
 * completions, and hears of another rank's no sooner than a lookahead later, when it has already
 * run past them. So the run ends one notice delay D after the last flow completes or fails
 * (D: the largest link delay of the fabric and a picosecond, always past the engine's
 * lookahead): each rank, when
 * its own flows are done, tells every rank (itself included) with a notice arriving D later;
 * when a rank has heard from every rank, it ends its run at that instant, after every other
 * event of that picosecond (a keyed event with the largest key). Every event up to that time runs
 * on every rank and none after it, whatever the partition. The stop_ns cap ends the run the same
 * way. The time the last flow finished is what summary.json reports as simulated time.
 */
#ifndef FABRICSIM_RUN_END_H
#define FABRICSIM_RUN_END_H

#include "ns3/nstime.h"

#include <cstdint>
#include <functional>

namespace fabricsim
{

class RunEnd
{
  public:
    /// \p ranks ranks, each to be heard from; \p notice the delay D of a notice.
    RunEnd(uint32_t ranks, ns3::Time notice);

    /// Sends this rank's notice to the other ranks (set by a distributed run; each must arrive
    /// `notice` later and call Heard there).
    void SetBroadcast(std::function<void(ns3::Time doneAt)> broadcast);

    /// Ends the run at \p at unless it ends earlier (the stop_ns cap).
    void CapAt(ns3::Time at);

    /// This rank's flows are all done (completed or failed): now.
    void LocalDone();

    /// A rank's notice arrived: its flows were done at \p doneAt.
    void Heard(ns3::Time doneAt);

    /// Whether every rank's flows were done (the run ended by this rule, not by the cap).
    bool AllDone() const;

    /// When the last flow finished (AllDone only).
    ns3::Time LastDone() const;

    /// The delay of a notice.
    ns3::Time Notice() const
    {
        return m_notice;
    }

    /// The notice delay for a fabric whose largest link delay is \p maxLinkDelay: that delay
    /// (at least 1 ns) and one picosecond, so that it is always more than the lookahead.
    static ns3::Time NoticeDelay(ns3::Time maxLinkDelay);

  private:
    uint32_t m_ranks;
    ns3::Time m_notice;
    std::function<void(ns3::Time)> m_broadcast;
    uint32_t m_heard = 0;
    ns3::Time m_lastDone;
    bool m_localDone = false;
};

} // namespace fabricsim

#endif
