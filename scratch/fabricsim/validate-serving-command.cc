#include "validate-serving-command.h"

#include "cli-options.h"
#include "fabric-scenario.h"
#include "inference-run.h"
#include "input-error.h"
#include "measured-run-config.h"
#include "measured-run.h"
#include "output-writer.h"
#include "serving-comparison.h"
#include "validate-benchmarks.h"
#include "validate-measured-runs.h"

#include "ns3/fabric-backend.h"
#include "ns3/run-provenance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <set>
#include <sstream>

namespace fabricsim
{

using nlohmann::json;

namespace
{

/// The C of a "conc=C" option value.
uint32_t
ConcurrencyOption(const std::string& v, const char* option, const char* meaning)
{
    if (v.rfind("conc=", 0) != 0)
    {
        throw InputError(
            kCommandLineSource, option, std::string("conc=C (") + meaning + ")", "\"" + v + "\"");
    }
    return uint32_t(CountOption(v.substr(5), option, 1, 1u << 30));
}

} // namespace

std::string
DefaultComputeCalibrationPath(const std::string& hardwarePreset)
{
    const std::string dir = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/compute/";
    if (hardwarePreset.rfind("RTX-PRO-6000", 0) == 0)
    {
        return dir + "rtx-pro-6000-server-vllm-0.19.0.json";
    }
    if (hardwarePreset == "H200")
    {
        return dir + "h200-sxm-vllm-0.24.0.json";
    }
    return dir + "h100-sxm-vllm-0.24.0.json";
}

ValidateServingOptions
ParseValidateServingArgs(const std::vector<std::string>& a)
{
    ValidateServingOptions o;
    for (size_t i = 1; i < a.size(); ++i)
    {
        std::string v;
        if (TakeOption(a, i, "--out", v))
        {
            o.outDir = v;
        }
        else if (TakeOption(a, i, "--backend", v))
        {
            ParseBackendKind(v, kCommandLineSource, "--backend");
            o.backend = v;
        }
        else if (TakeOption(a, i, "--set", v))
        {
            o.sets.push_back(v);
        }
        else if (TakeOption(a, i, "--compute-calibration", v))
        {
            o.computeCalibration = v == "none" ? "" : v;
            o.calibrationPerGpu = false;
        }
        else if (TakeOption(a, i, "--model", v))
        {
            o.deployment.model = v;
        }
        else if (TakeOption(a, i, "--hardware", v))
        {
            o.deployment.hardware = v;
        }
        else if (TakeOption(a, i, "--gpus", v))
        {
            o.deployment.gpus = uint32_t(CountOption(v, "--gpus", 1, 65535));
        }
        else if (TakeOption(a, i, "--parallel", v))
        {
            o.deployment.parallel = v;
        }
        else if (TakeOption(a, i, "--vllm-version", v))
        {
            o.deployment.vllmVersion = v;
        }
        else if (TakeOption(a, i, "--warmups", v))
        {
            o.deployment.warmups = int64_t(CountOption(v, "--warmups", 0, 1u << 30));
        }
        else if (TakeOption(a, i, "--fit-frontend", v))
        {
            o.fitConcurrency = ConcurrencyOption(
                v, "--fit-frontend", "fit on the results measured at concurrency C");
        }
        else if (TakeOption(a, i, "--fitted-on", v))
        {
            // Sorted and unique, so that the report names each once.
            for (size_t at = 0; at <= v.size();)
            {
                size_t comma = std::min(v.find(',', at), v.size());
                const std::string part = (at == 0 ? "" : "conc=") + v.substr(at, comma - at);
                o.fittedOn.push_back(ConcurrencyOption(
                    part, "--fitted-on", "the --set costs were fitted on the results at C[,C...]"));
                at = comma + 1;
            }
            std::sort(o.fittedOn.begin(), o.fittedOn.end());
            o.fittedOn.erase(std::unique(o.fittedOn.begin(), o.fittedOn.end()), o.fittedOn.end());
        }
        else if (a[i].rfind("--ns3::", 0) == 0)
        {
            o.ns3Args.push_back(a[i]);
        }
        else if (!a[i].empty() && a[i][0] != '-')
        {
            o.runs.push_back(a[i]);
        }
        else
        {
            throw InputError(kCommandLineSource,
                             a[i],
                             "a run directory, a benchmark result (file or folder) or an option of "
                             "'fabricsim validate-serving'",
                             "\"" + a[i] + "\"");
        }
    }
    if (o.runs.empty())
    {
        throw InputError(kCommandLineSource,
                         "RUN_DIR",
                         "at least one measured run directory (RUN/vllm/meta.json) or benchmark "
                         "result (file or folder)",
                         "none");
    }
    const size_t benchmarks = size_t(std::count_if(o.runs.begin(), o.runs.end(), IsBenchmarkInput));
    if (benchmarks != 0 && benchmarks != o.runs.size())
    {
        throw InputError(kCommandLineSource,
                         "RUN_DIR",
                         "measured run directories or benchmark results, one kind per call",
                         "both");
    }
    const bool benchmarkOnly
        = benchmarks == 0
          && (!o.deployment.model.empty() || !o.deployment.hardware.empty() || o.deployment.gpus > 0
              || !o.deployment.parallel.empty() || !o.deployment.vllmVersion.empty()
              || o.deployment.warmups >= 0 || o.fitConcurrency > 0 || !o.fittedOn.empty());
    if (benchmarkOnly)
    {
        throw InputError(kCommandLineSource,
                         "--model",
                         "--model, --hardware, --gpus, --parallel, --vllm-version, --warmups, "
                         "--fit-frontend and --fitted-on only with benchmark results (a measured "
                         "run says these)",
                         "a measured run directory");
    }
    if (o.fitConcurrency > 0 && !o.fittedOn.empty())
    {
        throw InputError(kCommandLineSource,
                         "--fitted-on",
                         "either --fit-frontend (fit here) or --fitted-on (fitted before, given "
                         "by --set)",
                         "both");
    }
    return o;
}

int
RunValidateServingCommand(const ValidateServingOptions& opt, std::ostream& out, std::ostream& err)
{
    if (IsBenchmarkInput(opt.runs.front()))
    {
        return RunValidateBenchmarks(opt, out, err);
    }
    return RunValidateMeasuredRuns(opt, out, err);
}

} // namespace fabricsim
