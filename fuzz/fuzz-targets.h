/*
 * One entry point per input parser, shared by the libFuzzer targets (built with clang when
 * FABRICSIM_FUZZ=ON) and the regression test that replays the seed corpora and every input a
 * fuzzer ever crashed on. Each feeds the bytes to the parser as the CLI would; bad input must
 * end in fabricsim::InputError, which the entry point swallows. Anything else escapes (or crashes)
 * and is a finding.
 */
#ifndef FABRICSIM_FUZZ_TARGETS_H
#define FABRICSIM_FUZZ_TARGETS_H

#include "input-error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim
{

/// A parser under fuzzing.
struct FuzzTarget
{
    const char* name;
    int (*run)(const uint8_t* data, size_t size);
};

/// Scenario JSON with "#set key.path=value" lines in front (the --set overrides).
int FuzzScenario(const uint8_t* data, size_t size);
/// Topology JSON ('{' first) or an HPCC topology file.
int FuzzTopology(const uint8_t* data, size_t size);
/// HPCC flow file (traffic.flow_file) and flow-size CDF file.
int FuzzFlowFile(const uint8_t* data, size_t size);
/// MSCCL XML, or the JSON schedule IR when the input starts with '{'.
int FuzzMscclXml(const uint8_t* data, size_t size);
/// Hugging Face config.json (an inline model object).
int FuzzModelConfig(const uint8_t* data, size_t size);
/// Request trace (CSV or JSON lines).
int FuzzRequestTrace(const uint8_t* data, size_t size);
/// PyTorch profiler trace (JSON, or gzip when the magic says so).
int FuzzKineto(const uint8_t* data, size_t size);
/// Chakra .et stream.
int FuzzChakra(const uint8_t* data, size_t size);
/// nccl-tests text log.
int FuzzNcclLog(const uint8_t* data, size_t size);
/// Measurement CSV (corpus NCCL tables and DeepEP tables).
int FuzzMeasurementCsv(const uint8_t* data, size_t size);
/// Calibration overlay file and --overlay expansion.
int FuzzOverlay(const uint8_t* data, size_t size);

/// Text of the input bytes.
inline std::string
FuzzText(const uint8_t* data, size_t size)
{
    return std::string(reinterpret_cast<const char*>(data), size);
}

/// Runs \p body; bad input (InputError) is the expected outcome for most inputs.
template <typename F>
int
FuzzGuard(F body)
{
    try
    {
        body();
    }
    catch (const fabricsim::InputError&)
    {
    }
    return 0;
}

/// Every target, by name.
const std::vector<FuzzTarget>& FuzzTargets();

/// Write \p data to a per-process scratch file with \p suffix and return its path (parsers
/// that only read files get the bytes this way).
std::string FuzzScratchFile(const uint8_t* data, size_t size, const std::string& suffix);

} // namespace fabricsim

#endif
