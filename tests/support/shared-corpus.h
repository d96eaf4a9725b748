/*
 * The corpus the tests read (measured tables, traces, MSCCL files): what ships in data/ (same
 * relative paths) first, else the team's corpus, FABRICSIM_CORPUS (default ../shared/corpus
 * beside the repository), read in place. A test that needs a file neither has skips, as in a
 * user's clone, and fails under CI=true, where the corpus must be there.
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

/// Path of \p rel inside data/, else inside FABRICSIM_CORPUS (default ../shared/corpus), or ""
/// when neither has it.
inline std::string
SharedCorpusFile(const std::string& rel)
{
    const char* corpus = std::getenv("FABRICSIM_CORPUS");
    for (const std::string& dir :
         {std::string(FABRICSIM_DATA_DIR),
          corpus && *corpus ? std::string(corpus) : std::string(FABRICSIM_SHARED_DIR) + "/corpus"})
    {
        const std::string path = dir + "/" + rel;
        struct stat st;
        if (::stat(path.c_str(), &st) == 0)
        {
            return path;
        }
    }
    return "";
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
