#include "cc-scenario.h"

#include "fabric-scenario.h"

#include "ns3/fabric-runner.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fabricsim::test
{

std::string
CcTempDir(const std::string& tag)
{
    std::string d = std::filesystem::temp_directory_path().string() + "/fabricsim-cc-" + tag + "-"
                    + std::to_string(getpid());
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
}

nlohmann::json
RunCcScenario(const nlohmann::json& scenario, const std::string& tag)
{
    std::string dir = CcTempDir(tag);
    FabricScenario sc = ParseFabricScenario(scenario, dir + "/scenario.json");
    RunOptions opt;
    opt.outDir = dir;
    std::ostringstream out;
    RunFabricScenario(sc, opt, out);
    std::ifstream in(dir + "/summary.json");
    nlohmann::json s = nlohmann::json::parse(in);
    std::filesystem::remove_all(dir);
    return s;
}

ns3::AckSample
MakeAck(uint32_t ackedPsn, uint32_t sndNxt, ns3::Time rtt, bool ece, uint64_t ackedBytes)
{
    ns3::AckSample a;
    a.ackedPsn = ackedPsn;
    a.sndNxt = sndNxt;
    a.rtt = rtt;
    a.ecnEcho = ece;
    a.newlyAckedBytes = ackedBytes;
    return a;
}

} // namespace fabricsim::test
