// ReadScenario: one reader for both parts of a scenario document. The inference part is read
// only when "serving" is present, the top-level keys of both are checked in one place, and an
// unknown key's error names every key a scenario may have.
#include "input-error.h"
#include "scenario-runner.h"
#include "scenario.h"

#include <gtest/gtest.h>

using nlohmann::json;

namespace
{

json
FabricDoc()
{
    return json{{"topology", {{"type", "single-switch"}, {"hosts", 4}}}, {"seed", 7}};
}

json
InferenceDoc()
{
    json d = FabricDoc();
    d["topology"] = fabricsim::test::SmallRailTopology();
    d["model"] = "Qwen3-30B-A3B";
    d["hardware"] = "H100";
    d["parallelism"] = {{"tp", 4}};
    d["serving"]
        = {{"requests",
            {{"rate_per_s", 0}, {"count", 2}, {"prompt_tokens", 64}, {"output_tokens", 2}}}};
    return d;
}

/// The InputError ReadScenario throws on \p doc (fails the test when it accepts it).
fabricsim::InputError
Refusal(const json& doc)
{
    try
    {
        fabricsim::ReadScenario(doc, "s.json");
    }
    catch (const fabricsim::InputError& e)
    {
        return e;
    }
    ADD_FAILURE() << "accepted " << doc.dump();
    return fabricsim::InputError("", "", "", "");
}

} // namespace

TEST(ReadScenario, FabricDocumentHasNoInferencePart)
{
    fabricsim::Scenario s = fabricsim::ReadScenario(FabricDoc(), "dir/s.json");
    EXPECT_FALSE(s.inference.has_value());
    EXPECT_EQ(s.fabric.topology.NumHosts(), 4u);
    EXPECT_EQ(s.fabric.seed, 7u);
    EXPECT_EQ(s.fabric.dir, "dir");
    EXPECT_EQ(s.document, FabricDoc());
    EXPECT_FALSE(s.fabric.stopGiven);
    EXPECT_EQ(s.fabric.stopNs, 1000000000u); // the fabric run's default end
    json d = FabricDoc();
    d["stop_ns"] = 2500;
    EXPECT_TRUE(fabricsim::ReadScenario(d, "s.json").fabric.stopGiven);
    d["stop_ns"] = nullptr; // null is absent, as for every key
    EXPECT_FALSE(fabricsim::ReadScenario(d, "s.json").fabric.stopGiven);
}

TEST(ReadScenario, InferenceDocumentHasBothParts)
{
    fabricsim::Scenario s = fabricsim::ReadScenario(InferenceDoc(), "s.json");
    ASSERT_TRUE(s.inference.has_value());
    EXPECT_EQ(s.inference->pool.par.tp, 4u);
    EXPECT_EQ(s.inference->requests.count, 2u);
    EXPECT_GE(s.fabric.topology.NumHosts(), 8u);
}

TEST(ReadScenario, UnknownTopLevelKeyListsEveryKey)
{
    json d = FabricDoc();
    d["trafic"] = json::object();
    fabricsim::InputError e = Refusal(d);
    EXPECT_EQ(e.Field(), "trafic");
    EXPECT_EQ(e.Found(), "unknown key \"trafic\" (did you mean \"traffic\"?)");
    for (const char* k : {"topology", "attributes", "model", "hardware", "parallelism", "serving"})
    {
        EXPECT_NE(e.Expected().find(k), std::string::npos) << k << " in " << e.Expected();
    }
    json i = InferenceDoc();
    i["paralelism"] = json::object();
    e = Refusal(i);
    EXPECT_EQ(e.Field(), "paralelism");
    for (const char* k : {"topology", "routes", "model", "parallelism", "serving"})
    {
        EXPECT_NE(e.Expected().find(k), std::string::npos) << k << " in " << e.Expected();
    }
}

TEST(ReadScenario, ModelWithoutServingIsRefusedNotIgnored)
{
    json d = FabricDoc();
    d["model"] = "Qwen3-30B-A3B";
    fabricsim::InputError e = Refusal(d);
    EXPECT_EQ(e.Field(), "model");
    EXPECT_NE(e.Expected().find("which needs serving"), std::string::npos) << e.Expected();
}
