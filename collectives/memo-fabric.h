/*
 * What the collective memo needs of a fabric, in plain types (the packet transport implements
 * it over ns-3): whether the part of the fabric a group of hosts can reach is at rest and a
 * copy of its state relative to now, and a span's effect on that part (every counter,
 * sequence number and end state) recorded on one occasion and written on another. A
 * collective replayed from the memo writes what simulating it would have, so later
 * simulation goes on as if it had been simulated.
 */
#ifndef FABRICSIM_MEMO_FABRIC_H
#define FABRICSIM_MEMO_FABRIC_H

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim
{

/// The state of the part of the fabric a group can reach.
struct FabricProbe
{
    std::string notAtRest; ///< why it is not at rest ("" when it is)
    /// Its state relative to now, when at rest, whole: compared whole, since a replay on a
    /// hash collision would be a wrong result.
    std::vector<uint64_t> state;
    /// The state only a congestion signal reads (DCQCN's alpha and phase, a receiver's last
    /// CNP): part of the match only for a span that saw a signal.
    std::vector<uint64_t> signalState;
};

/// What a span did to that part of the fabric.
struct FabricSpan
{
    std::vector<uint64_t> delta;
    bool signalled = false; ///< an ECN mark or a CNP in the span
    std::string unusable;   ///< why it cannot be written elsewhere ("" when it can)
};

class MemoFabric
{
  public:
    virtual ~MemoFabric() = default;

    virtual FabricProbe Probe(const std::vector<uint32_t>& hosts) const = 0;
    /// True when traffic can enter the part \p hosts reach only from \p hosts themselves
    /// (every port around it is one of theirs).
    virtual bool ScopeClosed(const std::vector<uint32_t>& hosts) const = 0;
    /// True when the parts \p a and \p b reach share a host, a switch or a link.
    virtual bool ScopesOverlap(const std::vector<uint32_t>& a,
                               const std::vector<uint32_t>& b) const = 0;
    /// Starts recording what happens to the part \p hosts can reach; returns the span's id.
    virtual uint64_t BeginSpan(const std::vector<uint32_t>& hosts) = 0;
    /// Ends span \p id (now) and returns its effect.
    virtual FabricSpan EndSpan(uint64_t id) = 0;
    /// Writes \p span, recorded for the same hosts, as if it had started at \p startPs.
    virtual void ApplySpan(const std::vector<uint32_t>& hosts,
                           int64_t startPs,
                           const FabricSpan& span)
        = 0;
};

} // namespace fabricsim

#endif
