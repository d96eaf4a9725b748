// The one backend factory: both backends carry the scenario's transport, so an inference step's
// collectives agree within 1% on an idle fabric and the MTU moves the analytical result as it
// moves the packet one (the analytical backend in `run` once ignored the MTU).
#include "input-error.h"
#include "scenario-runner.h"

#include "ns3/fabric-backend.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

using nlohmann::json;

namespace
{

json
FabricDoc()
{
    return json{{"topology",
                 {{"type", "single-switch"},
                  {"hosts", 2},
                  {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}}}}},
                {"transport", {{"mtu_bytes", 4096}, {"ack_interval", 4}}}};
}

/// Qwen3-30B-A3B, TP 4 x DP 2 x EP 8 over 2 servers x 4 H100 (rail-optimised, 400G): one
/// request's prefill and decode step issue TP all-reduces and all-gathers inside the servers
/// and EP all-to-alls across them.
json
InferenceDoc(uint32_t mtu)
{
    return json{
        {"seed", 1},
        {"model", "Qwen3-30B-A3B"},
        {"hardware", "H100"},
        {"parallelism", {{"tp", 4}, {"dp", 2}, {"ep", 8}, {"dp_attention", true}}},
        {"serving",
         {{"requests",
           {{"rate_per_s", 0}, {"count", 1}, {"prompt_tokens", 256}, {"output_tokens", 2}}}}},
        {"topology", fabricsim::test::SmallRailTopology()},
        {"transport", {{"mtu_bytes", mtu}}}};
}

/// per_step[i].comm_ms of an inference run on \p backend.
json
StepComm(const std::string& dir, const std::string& backend, uint32_t mtu)
{
    const std::string name = backend + "-" + std::to_string(mtu);
    const std::string file = dir + "/" + name + ".json";
    std::ofstream(file) << InferenceDoc(mtu).dump(2);
    std::string log;
    EXPECT_EQ(fabricsim::test::RunCli(
                  "run " + file + " --backend " + backend + " --out " + dir + "/" + name, log),
              0)
        << log;
    json s = json::parse(fabricsim::test::ReadFile(dir + "/" + name + "/summary.json"));
    EXPECT_EQ(s["backend"], backend);
    json steps = json::array();
    for (const json& st : s["per_step"])
    {
        steps.push_back(st["comm_ms"]);
    }
    return steps;
}

} // namespace

TEST(BackendFactory, KindsAreNamedAndAnythingElseIsBadInput)
{
    using fabricsim::BackendKind;
    EXPECT_EQ(fabricsim::ParseBackendKind("packet", "f", "--backend"), BackendKind::kPacket);
    EXPECT_EQ(fabricsim::ParseBackendKind("analytical", "f", "--backend"),
              BackendKind::kAnalytical);
    EXPECT_EQ(fabricsim::ToString(BackendKind::kAnalytical), "analytical");
    try
    {
        fabricsim::ParseBackendKind("flow", "<command line>", "--backend");
        FAIL() << "accepted an unknown backend";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "--backend");
        EXPECT_EQ(e.Found(), "\"flow\"");
    }
}

TEST(BackendFactory, AnalyticalOptionsComeFromTheScenarioAndAttributes)
{
    fabricsim::FabricScenario sc = fabricsim::ParseFabricScenario(FabricDoc(), "t.json");
    fabricsim::FabricBackend b(
        sc, fabricsim::BackendKind::kAnalytical, {"--ns3::AnalyticalBackend::MessageOverhead=3us"});
    EXPECT_EQ(b.Fabric(), nullptr);
    EXPECT_EQ(b.GetTransport().Name(), "analytical");
    const fabricsim::AnalyticalOptions ao = fabricsim::AnalyticalOptionsFor(sc);
    EXPECT_EQ(ao.m_mtuBytes, 4096u);
    EXPECT_EQ(ao.m_ackInterval, 4u);
    EXPECT_EQ(ao.m_messageOverheadPs, 3000000);
}

TEST(BackendFactory, StopTimeIsStopNsWhenSetElseNone)
{
    json d = FabricDoc();
    // No cap of its own: a serving replay runs as long as its workload; stalls end at the
    // stall watchdog instead.
    EXPECT_EQ(fabricsim::WatchdogPs(fabricsim::ParseFabricScenario(d, "t.json")), 0);
    EXPECT_EQ(fabricsim::kStallWatchdogPs, 100 * 1000000000000LL);
    d["stop_ns"] = 2500;
    EXPECT_EQ(fabricsim::WatchdogPs(fabricsim::ParseFabricScenario(d, "t.json")), 2500000);
    fabricsim::FabricBackend b(fabricsim::ParseFabricScenario(d, "t.json"),
                               fabricsim::BackendKind::kPacket);
    ASSERT_NE(b.Fabric(), nullptr);
    EXPECT_EQ(b.GetTransport().Name(), "packet");
    EXPECT_NE(b.GetTransport().GetMemoFabric(), nullptr); // only the packet fabric replays
}

TEST(BackendFactory, InferenceStepCollectivesAgreeAcrossBackendsAndFollowTheMtu)
{
    const std::string dir = fabricsim::test::TempDir("backends");
    std::map<std::string, json> runs;
    for (const char* backend : {"packet", "analytical"})
    {
        for (uint32_t mtu : {1000u, 4096u})
        {
            runs[std::string(backend) + std::to_string(mtu)] = StepComm(dir, backend, mtu);
        }
    }
    int compared = 0;
    for (const char* mtu : {"1000", "4096"})
    {
        const json& p = runs[std::string("packet") + mtu];
        const json& a = runs[std::string("analytical") + mtu];
        ASSERT_EQ(p.size(), 2u) << "a prefill and a decode step";
        ASSERT_EQ(a.size(), p.size());
        for (size_t i = 0; i < p.size(); ++i)
        {
            for (auto it = p[i].begin(); it != p[i].end(); ++it)
            {
                const double pm = it.value().get<double>();
                ASSERT_TRUE(a[i].contains(it.key())) << it.key();
                const double am = a[i][it.key()].get<double>();
                EXPECT_NEAR(am / pm, 1.0, 0.01)
                    << "MTU " << mtu << " step " << i << " " << it.key() << ": packet " << pm
                    << " ms, analytical " << am << " ms";
                ++compared;
            }
        }
    }
    EXPECT_GE(compared, 16) << "TP all-reduce, all-gather, EP dispatch and combine per step";
    // Prefill's cross-server EP dispatch carries the most frames: 1000-byte frames cost about
    // 3% more wire time than 4096-byte ones on both backends.
    auto change = [&](const std::string& backend)
    {
        return runs[backend + "1000"][0]["ep_dispatch"].get<double>()
                   / runs[backend + "4096"][0]["ep_dispatch"].get<double>()
               - 1;
    };
    EXPECT_GT(change("analytical"), 0.02);
    EXPECT_NEAR(change("analytical"), change("packet"), 0.005);
}
