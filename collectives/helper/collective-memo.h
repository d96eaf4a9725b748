/*
 * The collective memo: a Collective API over another that simulates a repeated collective once
 * and replays it when it recurs on a fabric in the same state. A collective is recorded when
 * its part of the fabric (MemoFabric's scope of its hosts) is at rest at its start: the time
 * of each rank's completion, and the span's effect on the fabric until that part rests again.
 * It replays when the same request starts on the same state, its scope is closed (only its
 * members' ports around it) and the caller's horizon shows no member can put other traffic on
 * it before the span ends; the replay writes the span's effect and calls back at the recorded
 * times. Anything else is simulated. Replays are exact: later collectives meet the fabric as
 * simulation would have left it.
 */
#ifndef FABRICSIM_COLLECTIVE_MEMO_H
#define FABRICSIM_COLLECTIVE_MEMO_H

#include "collective-api.h"
#include "memo-fabric.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fabricsim
{

/// What the memo did, for timing.json.
struct CollectiveMemoStats
{
    uint64_t lookups = 0;  ///< collectives started through the memo
    uint64_t hits = 0;     ///< replayed
    uint64_t recorded = 0; ///< spans stored
    /// Simulated, by reason ("not at rest", "first of its kind", "open scope", ...).
    std::map<std::string, uint64_t> misses;
    /// Spans recorded and not stored, by reason ("queue pairs opened", "overlapped", ...).
    std::map<std::string, uint64_t> unstored;
    /// Events the stored spans took to simulate, summed over their replays (other activity
    /// during a recording counts too: an estimate).
    uint64_t eventsSkipped = 0;
    /// Verification (SetVerify): hits simulated instead and compared with their entry.
    uint64_t verified = 0;
    uint64_t verifyMismatches = 0;        ///< comparisons that found any difference
    uint64_t verifyInconclusive = 0;      ///< other traffic entered the scope: nothing to compare
    int64_t maxCompletionDeviationPs = 0; ///< largest |simulated - recorded| completion offset
    uint64_t maxCounterDeviation = 0;     ///< largest |simulated - recorded| delta value
    std::string firstMismatch;            ///< what the first mismatch was

    nlohmann::json ToJson() const;
};

class CollectiveMemo : public CollectiveApi
{
  public:
    /// Replays over \p fabric, simulates through \p inner; both must outlive the memo.
    CollectiveMemo(CollectiveApi& inner, MemoFabric& fabric);
    ~CollectiveMemo() override;

    void Start(const CollectiveRequest& req, RankDone onRankDone, Done onDone) override;
    void SendRecv(uint32_t src, uint32_t dst, uint64_t bytes, Done onDone) override;
    int64_t NowPs() const override;
    void Schedule(int64_t delayPs, Done fn) override;
    void SetHorizon(const CollectiveHorizon* horizon) override;

    const CollectiveMemoStats& Stats() const
    {
        return m_stats;
    }

    /**
     * \brief Every \p everyN-th hit is simulated instead (and recorded), then compared with
     * the entry it would have replayed: the completions' offsets and the span's effect must be
     * equal (0: never). Results stay exact; the figures go to Stats().
     */
    void SetVerify(uint32_t everyN)
    {
        m_verifyEvery = everyN;
    }

    /// One recorded collective: what each completion's offset was, in order (rank index, or
    /// -1 for the end), and the span until its scope rested.
    struct Entry
    {
        std::vector<uint64_t> state;
        bool signalled = false;
        std::vector<uint64_t> signalState;
        std::vector<std::pair<int64_t, int64_t>> calls; ///< (rank index or -1, offset ps)
        int64_t spanPs = 0;
        FabricSpan span;
        uint64_t events = 0;
    };

    /// The stored entries, to inspect them (and, in tests, to corrupt one).
    std::vector<Entry*> Entries();

  private:
    struct Recording;
    /// Simulates \p req and records it: stored as an entry, or compared with \p verifying.
    void Record(const CollectiveRequest& req,
                RankDone onRankDone,
                Done onDone,
                const FabricProbe& probe,
                const Entry* verifying);
    void Verify(const Entry& cached, const Recording& rec, const FabricSpan& span, int64_t spanPs);

    /// Another op on \p hosts: recordings whose scope it shares are spoiled; a replay's
    /// reservation it enters means the horizon was wrong, which must never happen.
    void Touch(const std::vector<uint32_t>& hosts);
    void PollRest(uint64_t id, int polls);
    /// The horizon while it lives (nullptr after).
    const CollectiveHorizon* Horizon() const;
    void Miss(const std::string& why);

    CollectiveApi& m_inner;
    MemoFabric& m_fabric;
    const CollectiveHorizon* m_horizon = nullptr;
    std::shared_ptr<const bool> m_horizonAlive; ///< false once the horizon is gone
    std::map<std::string, std::vector<Entry>> m_entries;
    std::map<uint64_t, std::shared_ptr<Recording>> m_recordings;
    uint64_t m_nextRecording = 0;
    uint32_t m_verifyEvery = 0;
    uint64_t m_matches = 0; ///< occurrences that matched an entry (hits and verifications)
    /// Replays in progress: hosts and the end of their span.
    std::vector<std::pair<std::vector<uint32_t>, int64_t>> m_reserved;
    CollectiveMemoStats m_stats;
    std::shared_ptr<bool> m_alive = std::make_shared<bool>(true);
};

} // namespace fabricsim

#endif
