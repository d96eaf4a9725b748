// Scenario names of the congestion controls, their reference-sheet defaults, the error for an
// unknown name, and congestion control chosen per priority class in a scenario.
#include "cc-scenario.h"
#include "fabric-scenario.h"
#include "input-error.h"

#include "ns3/double.h"
#include "ns3/fabric-runner.h"
#include "ns3/rdma-module.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

using namespace ns3;
using nlohmann::json;

TEST(CcRegistry, NamesIncludeEveryAlgorithm)
{
    auto names = CongestionControlFactory::Names();
    for (auto* n : {"none", "dcqcn", "dcqcn-paper", "hpcc", "timely", "dctcp", "swift"})
    {
        EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
    }
    for (auto* n : {"hpcc", "timely", "dctcp", "swift"})
    {
        auto cc = CongestionControlFactory::Get(n).Create<CongestionControl>();
        EXPECT_EQ(cc->Name(), n);
        EXPECT_EQ(cc->NeedsInt(), std::string(n) == "hpcc");
    }
}

TEST(CcRegistry, UnknownNameListsTheValidOnes)
{
    try
    {
        CongestionControlFactory::Get("hpcc2", "s.json", "transport.cc");
        FAIL() << "no error for an unknown name";
    }
    catch (const InputError& e)
    {
        EXPECT_EQ(e.File(), "s.json");
        EXPECT_EQ(e.Field(), "transport.cc");
        EXPECT_EQ(e.Found(), "\"hpcc2\"");
        for (auto* n : {"dcqcn", "hpcc", "timely", "dctcp", "swift"})
        {
            EXPECT_NE(e.Expected().find(n), std::string::npos) << n;
        }
    }
}

TEST(CcRegistry, DefaultsAreTheReferenceSheets)
{
    auto d = [](Ptr<Object> o, const std::string& a)
    {
        DoubleValue v;
        o->GetAttribute(a, v);
        return v.Get();
    };
    auto t = [](Ptr<Object> o, const std::string& a)
    {
        TimeValue v;
        o->GetAttribute(a, v);
        return v.Get();
    };
    auto r = [](Ptr<Object> o, const std::string& a)
    {
        DataRateValue v;
        o->GetAttribute(a, v);
        return v.Get().GetBitRate();
    };
    auto u = [](Ptr<Object> o, const std::string& a)
    {
        UintegerValue v;
        o->GetAttribute(a, v);
        return v.Get();
    };
    Ptr<Object> h = CongestionControlFactory::Get("hpcc").Create<Object>();
    EXPECT_EQ(d(h, "Eta"), 0.95);
    EXPECT_EQ(u(h, "MaxStage"), 5u);
    EXPECT_EQ(r(h, "RateAI"), 40000000u);
    Ptr<Object> tm = CongestionControlFactory::Get("timely").Create<Object>();
    EXPECT_EQ(d(tm, "Alpha"), 0.875);
    EXPECT_EQ(d(tm, "Beta"), 0.8);
    EXPECT_EQ(t(tm, "Tlow"), MicroSeconds(50));
    EXPECT_EQ(t(tm, "Thigh"), MicroSeconds(500));
    EXPECT_EQ(t(tm, "MinRtt"), MicroSeconds(20));
    EXPECT_EQ(r(tm, "Delta"), 100000000u);
    EXPECT_EQ(u(tm, "HaiThreshold"), 5u);
    EXPECT_EQ(u(tm, "HaiFactor") * r(tm, "Delta"), 500000000u); // hyper increase 500 Mb/s
    Ptr<Object> dc = CongestionControlFactory::Get("dctcp").Create<Object>();
    EXPECT_EQ(d(dc, "G"), 1.0 / 16);
    EXPECT_EQ(r(dc, "RateAI"), 615000000u);
    Ptr<Object> s = CongestionControlFactory::Get("swift").Create<Object>();
    EXPECT_EQ(t(s, "BaseTarget"), MicroSeconds(25));
    EXPECT_EQ(d(s, "Beta"), 0.8);
    EXPECT_EQ(d(s, "MaxMdf"), 0.4);
    EXPECT_EQ(d(s, "FsRange"), 4.0);
}

namespace
{

json
OneFlow(const json& transport, const json& flow)
{
    return json{{"seed", 1},
                {"stop_ns", 10000000},
                {"topology",
                 {{"type", "single-switch"},
                  {"hosts", 2},
                  {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}}}}},
                {"transport", transport},
                {"monitor", {{"interval_ns", 0}}},
                {"traffic", {{"flows", json::array({flow})}}}};
}

} // namespace

TEST(CcPerPriority, PriorityClassSelectsTheAlgorithm)
{
    // One 100-packet flow alone on an idle path: with HPCC every data frame carries the 2-byte
    // shim and one 8-byte hop record, and every ACK echoes them: 100 * 10 + 100 * 10 bytes more.
    json flow = {{"src", 0}, {"dst", 1}, {"size_bytes", 100000}, {"priority", 5}};
    json base = fabricsim::test::RunCcScenario(OneFlow({{"cc", "dcqcn"}}, flow), "prio-base");
    json t = {{"cc", "dcqcn"}, {"cc_per_priority", {{"5", "hpcc"}}}};
    json hp = fabricsim::test::RunCcScenario(OneFlow(t, flow), "prio-hpcc");
    ASSERT_EQ(base["flows_completed"], 1);
    ASSERT_EQ(hp["flows_completed"], 1);
    EXPECT_EQ(hp["conservation"]["sent_frames"], base["conservation"]["sent_frames"]);
    EXPECT_EQ(hp["conservation"]["sent_bytes"].get<uint64_t>(),
              base["conservation"]["sent_bytes"].get<uint64_t>() + 2000);
    EXPECT_TRUE(hp["conservation"]["ok"].get<bool>());
    EXPECT_EQ(hp["transport"]["cc_per_priority"]["5"], "hpcc");

    // Another class keeps the default; a flow's own cc wins over its class.
    json other = flow;
    other["priority"] = 3;
    json p3 = fabricsim::test::RunCcScenario(OneFlow(t, other), "prio-3");
    EXPECT_EQ(p3["conservation"]["sent_bytes"], base["conservation"]["sent_bytes"]);
    json own = flow;
    own["cc"] = "dcqcn";
    json pOwn = fabricsim::test::RunCcScenario(OneFlow(t, own), "prio-own");
    EXPECT_EQ(pOwn["conservation"]["sent_bytes"], base["conservation"]["sent_bytes"]);
}

TEST(CcPerPriority, BadInputNamesTheField)
{
    json flow = {{"src", 0}, {"dst", 1}, {"size_bytes", 1000}};
    std::string base = fabricsim::test::CcTempDir("bad");
    std::string dir = base + "/out";
    auto fieldOf = [&](const json& transport)
    {
        try
        {
            auto sc = fabricsim::ParseFabricScenario(OneFlow(transport, flow), "s.json");
            fabricsim::RunOptions opt;
            opt.outDir = dir;
            std::ostringstream out;
            fabricsim::RunFabricScenario(sc, opt, out);
            return std::string("no error");
        }
        catch (const InputError& e)
        {
            return e.Field() + " | " + e.Expected();
        }
    };
    EXPECT_EQ(
        fieldOf({{"cc_per_priority", {{"9", "hpcc"}}}}).rfind("transport.cc_per_priority.9 |", 0),
        0u);
    EXPECT_EQ(fieldOf({{"cc_per_priority", {{"5", 3}}}}).rfind("transport.cc_per_priority.5 |", 0),
              0u);
    EXPECT_EQ(fieldOf({{"cc_per_priority", json::array()}}).rfind("transport.cc_per_priority |", 0),
              0u);
    std::string unknown = fieldOf({{"cc_per_priority", {{"5", "nope"}}}});
    EXPECT_EQ(unknown.rfind("transport.cc_per_priority.5 |", 0), 0u) << unknown;
    EXPECT_NE(unknown.find("swift"), std::string::npos);
    // Names are resolved before anything is written.
    EXPECT_FALSE(std::filesystem::exists(dir + "/summary.json"));
    std::filesystem::remove_all(base);
}
