/*
 * Helpers of the calibration tests: corpus paths (data/, then FABRICSIM_CORPUS), a fresh
 * scratch directory, and running a CLI command in process.
 */
#ifndef FABRICSIM_TESTS_CALIBRATION_TEST_UTIL_H
#define FABRICSIM_TESTS_CALIBRATION_TEST_UTIL_H

#include "output-writer.h"
#include "shared-corpus.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fabricsim
{

/// A new empty directory under the system temp folder.
inline std::string
ScratchDir(const std::string& name)
{
    const auto p = std::filesystem::temp_directory_path()
                   / ("fabricsim-cal-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(p);
    std::filesystem::create_directories(p);
    return p.string();
}

/// A calibration system scenario of the repository.
inline std::string
SystemScenario(const std::string& name)
{
    return std::string(FABRICSIM_SOURCE_DIR) + "/collectives/calibration/systems/" + name + ".json";
}

/// The rows of a CSV file the CLI wrote (no quoting), split on commas; the header is dropped
/// and, when \p header is given, receives it.
inline std::vector<std::vector<std::string>>
ReadCsvRows(const std::string& path, std::vector<std::string>* header = nullptr)
{
    std::vector<std::vector<std::string>> rows;
    std::ifstream in(path);
    std::string line;
    bool first = true;
    while (std::getline(in, line))
    {
        std::vector<std::string> f;
        std::stringstream ss(line);
        std::string x;
        while (std::getline(ss, x, ','))
        {
            f.push_back(x);
        }
        if (first && header)
        {
            *header = f;
        }
        else if (!first)
        {
            rows.push_back(f);
        }
        first = false;
    }
    return rows;
}

} // namespace fabricsim

#endif
