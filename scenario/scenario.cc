#include "scenario.h"

#include <vector>

namespace fabricsim
{

namespace
{

const std::vector<std::string> kFabricKeys = {"name",
                                              "description",
                                              "seed",
                                              "stop_ns",
                                              "topology",
                                              "transport",
                                              "switch",
                                              "traffic",
                                              "link_events",
                                              "pcap",
                                              "monitor",
                                              "deadlock",
                                              "routes",
                                              "attributes"};

const std::vector<std::string> kServingKeys = {"model", "hardware", "parallelism", "serving"};

} // namespace

void
CheckScenarioKeys(const JsonObject& root)
{
    if (root.Has("serving"))
    {
        std::vector<std::string> keys = kFabricKeys;
        keys.insert(keys.end(), kServingKeys.begin(), kServingKeys.end());
        root.CheckKeys(keys);
        return;
    }
    // Without "serving" the document is a fabric scenario: a model alone is a mistake.
    root.CheckKeys(kFabricKeys,
                   "and, in an inference scenario, which needs serving: model, hardware, "
                   "parallelism, serving");
}

Scenario
ReadScenario(const nlohmann::json& doc, const std::string& file)
{
    Scenario s;
    if (InferenceScenario::IsInference(doc))
    {
        s.inference = InferenceScenario::FromJson(doc, file);
    }
    s.fabric = ParseFabricScenario(doc, file);
    s.document = doc;
    return s;
}

} // namespace fabricsim
