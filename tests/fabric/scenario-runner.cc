#include "scenario-runner.h"

#include "fabric-scenario.h"
#include "test-guard.h"

#include "ns3/fabric-runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fabricsim::test
{

std::string
TempDir(const std::string& tag)
{
    std::string d = std::filesystem::temp_directory_path().string() + "/fabricsim-test-" + tag + "-"
                    + std::to_string(getpid());
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
}

nlohmann::json
RunScenario(const nlohmann::json& scenario, const std::string& outDir)
{
    FabricScenario sc = ParseFabricScenario(scenario, outDir + "/scenario.json");
    RunOptions opt;
    opt.outDir = outDir;
    std::ostringstream out;
    RunFabricScenario(sc, opt, out);
    return nlohmann::json::parse(ReadFile(outDir + "/summary.json"));
}

std::string
ReadFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

int
RunCli(const std::string& args, std::string& output)
{
    // Capped as every test process is (tests/support/test-guard), in its own right as well.
    std::string cmd = test::CapPrefix() + FABRICSIM_BIN + " " + args + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::array<char, 4096> buf;
    output.clear();
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    {
        output.append(buf.data(), n);
    }
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

nlohmann::json
SmallRailTopology()
{
    return {{"type", "rail-optimized"},
            {"servers", 2},
            {"accels_per_server", 4},
            {"spines", 1},
            {"host_link", {{"rate", "400Gbps"}, {"delay", "1us"}}},
            {"fabric_link", {{"rate", "400Gbps"}, {"delay", "1us"}}},
            {"scale_up", {{"rate", "450GBps"}, {"delay", "100ns"}}}};
}

} // namespace fabricsim::test
