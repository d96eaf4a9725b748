/*
 * The shared corpus beside the repository (../shared/corpus: measured tables, traces, MSCCL
 * files), read in place. A test that needs a file of it skips when it is absent, as in a user's
 * clone, and fails when it is absent under CI=true, where it must be there.
 */
#ifndef FABRICSIM_TESTS_SHARED_CORPUS_H
#define FABRICSIM_TESTS_SHARED_CORPUS_H

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace fabricsim::test
{

/// Path of \p rel inside ../shared/corpus, or "" when it is absent.
inline std::string
SharedCorpusFile(const std::string& rel)
{
    const std::string path = std::string(FABRICSIM_SHARED_DIR) + "/corpus/" + rel;
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? path : "";
}

/// True under CI (CI=true), where the shared corpus must be present.
inline bool
SharedCorpusRequired()
{
    const char* ci = std::getenv("CI");
    return ci && std::strcmp(ci, "true") == 0;
}

} // namespace fabricsim::test

/// At the top of a TEST: \p var is the path of corpus file \p rel; skip (fail under CI=true)
/// when it is absent.
#define REQUIRE_SHARED_CORPUS(var, rel)                                                      \
    const std::string var = ::fabricsim::test::SharedCorpusFile(rel);                        \
    if (var.empty())                                                                         \
    {                                                                                        \
        if (::fabricsim::test::SharedCorpusRequired())                                       \
        {                                                                                    \
            FAIL() << "shared corpus file " << rel << " not found: CI=true needs ../shared"; \
        }                                                                                    \
        GTEST_SKIP() << "shared corpus file " << rel << " not found (../shared absent)";     \
    }

#endif
