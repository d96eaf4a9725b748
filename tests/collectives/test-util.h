/*
 * Helpers shared by the collectives tests: corpus location and manifest, temp files, small
 * hand-built schedules.
 */
#ifndef FABRICSIM_TESTS_COLLECTIVES_TEST_UTIL_H
#define FABRICSIM_TESTS_COLLECTIVES_TEST_UTIL_H

#include "schedule-ir.h"

#include <ostream>
#include <string>
#include <vector>

namespace fabricsim
{
namespace test
{

/// One row of tests/collectives/msccl-corpus.tsv: a schedule of data/msccl and its verdict.
struct CorpusEntry
{
    std::string m_file; ///< relative to data/msccl: "<source>/<file>.xml"
    std::string m_source;
    std::string m_coll;
    int m_ngpus = 0;
    std::string m_mode;     ///< inplace / outofplace
    std::string m_expected; ///< valid / invalid
};

/// gtest printer: the file name (keeps test names and logs readable).
inline void
PrintTo(const CorpusEntry& e, std::ostream* os)
{
    *os << e.m_file;
}

/// data/msccl (one folder per source), or "" when it is absent.
std::string CorpusDir();

/// Rows of tests/collectives/msccl-corpus.tsv.
std::vector<CorpusEntry> LoadManifest();

/// A fresh path under the system temp folder ending in \p suffix.
std::string TempPath(const std::string& suffix);

/// Writes \p content to a fresh temp file ending in \p suffix; returns its path.
std::string WriteTemp(const std::string& content, const std::string& suffix);

/**
 * Correct in-place ring allreduce on \p ranks ranks, one channel, K = ranks chunks:
 * reduce-scatter (rrs... rrc) then allgather (rcs ... r).
 */
Schedule RingAllReduce(int ranks);

/// Correct out-of-place direct alltoall on \p ranks ranks (one tb per peer pair direction).
Schedule DirectAllToAll(int ranks);

} // namespace test
} // namespace fabricsim

#endif
