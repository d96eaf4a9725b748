// Every field of the shipped scenarios and of the fuzz seeds (scenarios, topologies of every
// builder, model configs), given a value of the wrong type (a string where a number goes, 5 where
// a string goes, 5 where an object or array goes) or a number past any range, is bad input: an
// InputError naming that field (or the object holding it), never another exception ("name": 5
// was an internal error).
#include "fabric-scenario.h"
#include "inference-scenario.h"
#include "input-error.h"
#include "json-reader.h"
#include "model-spec.h"
#include "scenario.h"
#include "topology.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace
{

using fabricsim::JsonPath;
using nlohmann::json;

/// JSON pointers of every value in \p j (objects and arrays too, not the root).
void
Paths(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& out)
{
    if (j.is_object())
    {
        for (auto it = j.begin(); it != j.end(); ++it)
        {
            out.push_back(at / it.key());
            Paths(it.value(), at / it.key(), out);
        }
    }
    else if (j.is_array())
    {
        for (size_t i = 0; i < j.size(); ++i)
        {
            out.push_back(at / i);
            Paths(j[i], at / i, out);
        }
    }
}

/// \p p inside \p doc as errors write it: "a.b[2].c" ("a.b.5" when b is an object).
std::string
DottedPath(const json& doc, const json::json_pointer& p)
{
    if (p.empty())
    {
        return "";
    }
    const std::string parent = DottedPath(doc, p.parent_pointer());
    const std::string key = p.back();
    if (doc.at(p.parent_pointer()).is_array())
    {
        return parent + "[" + key + "]";
    }
    return parent.empty() ? key : parent + "." + key;
}

/// Where a seed's fields sit in a scenario: a topology or model-config seed is read as the
/// scenario's "topology" or "model".
std::string
Prefix(const std::string& file)
{
    if (file.find("/corpus/topology/") != std::string::npos)
    {
        return "topology";
    }
    return file.find("/corpus/model-config/") != std::string::npos ? "model" : "";
}

/// Parses \p doc as the CLI does before it runs anything: as a topology or a model config when
/// \p file is one of the fuzz seeds of those, else as a scenario.
void
Parse(const json& doc, const std::string& file)
{
    if (file.find("/corpus/topology/") != std::string::npos)
    {
        fabricsim::BuildTopology(doc, file);
    }
    else if (file.find("/corpus/model-config/") != std::string::npos)
    {
        fabricsim::ModelSpec::Load(doc, file, "model");
    }
    else
    {
        fabricsim::ReadScenario(doc, file);
    }
}

/// Wrong values for \p v: another type, and a number past any field's range.
std::vector<json>
WrongValues(const json& v)
{
    std::vector<json> out;
    if (v.is_string())
    {
        out.push_back(5);
    }
    else if (v.is_number())
    {
        out.push_back("five");
        out.push_back(1e300);
        out.push_back(-1);
    }
    else if (v.is_boolean())
    {
        out.push_back("yes");
    }
    else
    {
        out.push_back(5);
        out.push_back("x");
    }
    return out;
}

class ScenarioMutation : public testing::TestWithParam<std::string>
{
};

TEST_P(ScenarioMutation, EveryWrongValueIsAnInputError)
{
    const std::string file = std::string(FABRICSIM_SOURCE_DIR) + "/" + GetParam();
    const json doc = fabricsim::LoadScenarioJson(file, {}); // any JSON object, read strictly
    ASSERT_NO_THROW(Parse(doc, file));
    std::vector<json::json_pointer> paths;
    Paths(doc, json::json_pointer(), paths);
    size_t tried = 0;
    for (const auto& p : paths)
    {
        for (const json& wrong : WrongValues(doc.at(p)))
        {
            json m = doc;
            m[p] = wrong;
            ++tried;
            try
            {
                Parse(m, file);
                // Accepted: a value some fields do take (an integer where a number goes, a
                // name or path as a string). Nothing else to check.
            }
            catch (const fabricsim::InputError& e)
            {
                // The error names the field (or the object holding it), in the a.b[2].c style.
                const std::string want = JsonPath(Prefix(file), DottedPath(doc, p));
                const std::string got = e.Field();
                // One consequence names another field on purpose: a link slowed to 5 b/s makes
                // the CDF's largest flow too long for the clock, and that error says so.
                const bool consequence
                    = got == "largest size_bytes" && want.find("rate") != std::string::npos;
                const bool names = got == want || want.rfind(got + ".", 0) == 0
                                   || want.rfind(got + "[", 0) == 0 || got.rfind(want, 0) == 0
                                   || consequence;
                if (!names)
                {
                    ADD_FAILURE() << want << " = " << wrong.dump()
                                  << " named another field: " << e.what();
                }
            }
            catch (const std::exception& e)
            {
                ADD_FAILURE() << p.to_string() << " = " << wrong.dump() << ": "
                              << "not an InputError: " << e.what();
            }
        }
    }
    RecordProperty("mutations", int(tried));
    EXPECT_FALSE(paths.empty());
    EXPECT_GE(tried, paths.size());
}

INSTANTIATE_TEST_SUITE_P(Shipped,
                         ScenarioMutation,
                         testing::Values("scenarios/default.json",
                                         "scenarios/fabric-incast.json",
                                         "scenarios/hpcc-eval/small-websearch-30-incast.json",
                                         "fuzz/corpus/scenario/h100-8gpu.json",
                                         "fuzz/corpus/scenario/leaf-spine.json",
                                         "fuzz/corpus/topology/dragonfly.json",
                                         "fuzz/corpus/topology/fat-tree.json",
                                         "fuzz/corpus/topology/rail.json",
                                         "fuzz/corpus/topology/torus.json",
                                         "fuzz/corpus/model-config/llama-like.json",
                                         "fuzz/corpus/model-config/moe-like.json"),
                         [](const testing::TestParamInfo<std::string>& i)
                         {
                             std::string n = i.param.substr(i.param.find('/') + 1);
                             n = n.substr(0, n.rfind('.'));
                             for (char& c : n)
                             {
                                 c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                             }
                             return n;
                         });

} // namespace
