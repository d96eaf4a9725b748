// A scratch file path no other test process can share: ctest runs tests in parallel and
// ::testing::TempDir() is the same /tmp for all of them.
#ifndef FABRICSIM_TESTS_UNIQUE_TEMP_PATH_H
#define FABRICSIM_TESTS_UNIQUE_TEMP_PATH_H

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace fabricsim
{
namespace test
{

inline std::string
UniqueTempPath(const std::string& name)
{
    std::string dir = ::testing::TempDir();
    if (!dir.empty() && dir.back() != '/')
    {
        dir += '/';
    }
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string test = info ? std::string(info->test_suite_name()) + "." + info->name() : "none";
    return dir + "fabricsim-" + std::to_string(getpid()) + "-" + test + "-" + name;
}

} // namespace test
} // namespace fabricsim

#endif
