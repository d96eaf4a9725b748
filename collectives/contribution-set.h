/*
 * Multiset of chunk contributions (origin rank, origin input chunk) held by one buffer slot
 * during symbolic execution. A reduction merges multisets, so a contribution counted twice
 * shows up as a duplicate instead of vanishing as it would in a plain set.
 */
#ifndef FABRICSIM_CONTRIBUTION_SET_H
#define FABRICSIM_CONTRIBUTION_SET_H

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim
{

struct ContributionDiff;

/// Sorted multiset of (rank, chunk) pairs.
class ContributionSet
{
  public:
    ContributionSet() = default;

    /// Set holding the single contribution (rank, chunk).
    static ContributionSet Single(int rank, int chunk);

    /// Adds one occurrence of (rank, chunk).
    void Add(int rank, int chunk);
    /// Multiset union: every occurrence in \p other is added.
    void Merge(const ContributionSet& other);
    /// True when empty (an uninitialised slot).
    bool Empty() const
    {
        return m_items.empty();
    }

    /// Number of occurrences, duplicates included.
    size_t Size() const
    {
        return m_items.size();
    }

    bool operator==(const ContributionSet& o) const
    {
        return m_items == o.m_items;
    }

    bool operator!=(const ContributionSet& o) const
    {
        return m_items != o.m_items;
    }

    /// "{r0.c3, r1.c3 x2}" listing at most \p maxItems distinct entries.
    std::string ToString(size_t maxItems = 8) const;

    /// Computes what \p found lacks or has too much of relative to \p expected.
    static ContributionDiff Compare(const ContributionSet& expected, const ContributionSet& found);

  private:
    static uint64_t Key(int rank, int chunk)
    {
        return (static_cast<uint64_t>(static_cast<uint32_t>(rank)) << 32)
               | static_cast<uint32_t>(chunk);
    }

    std::vector<uint64_t> m_items; ///< sorted keys, one per occurrence
};

/// Difference between an expected and a found multiset, split by cause.
struct ContributionDiff
{
    ContributionSet m_missing;    ///< expected, not found (occurrences)
    ContributionSet m_duplicated; ///< expected, found more times than expected (extra copies)
    ContributionSet m_unexpected; ///< found, never expected
};

} // namespace fabricsim

#endif
