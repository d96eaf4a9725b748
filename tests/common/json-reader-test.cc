// The one JSON layer: the strict parser (duplicate keys, depth, malformed text) and the typed
// reads' shared rules (null is absent, whole floats up to 2^53 are integers, ranges, paths).
#include "error-of.h"
#include "input-error.h"
#include "json-reader.h"

#include <gtest/gtest.h>

#include <string>

using fabricsim::InputError;
using fabricsim::JsonObject;
using fabricsim::ParseJson;
using fabricsim::test::ErrorOf;
using nlohmann::json;

TEST(JsonReader, ParsesLikeNlohmannAndKeepsNumberKinds)
{
    const std::string text
        = R"({"a": [1, -2, 3.5, "x", null, true], "b": {"c": {}}, "d": 18446744073709551615})";
    json j = ParseJson(text, "f.json");
    EXPECT_EQ(j, json::parse(text));
    EXPECT_TRUE(j["a"][0].is_number_unsigned());
    EXPECT_TRUE(j["a"][1].is_number_integer());
    EXPECT_TRUE(j["a"][2].is_number_float());
    EXPECT_EQ(j["d"].get<uint64_t>(), UINT64_MAX);
    EXPECT_EQ(ParseJson("[[1], [2, [3]]]", "f").dump(), "[[1],[2,[3]]]");
}

TEST(JsonReader, DuplicateKeysAreRejectedWithTheirPath)
{
    InputError e = ErrorOf([] { ParseJson(R"({"a": [{"rate": 1, "rate": 2}]})", "s.json"); });
    EXPECT_EQ(e.File(), "s.json");
    EXPECT_EQ(e.Field(), "a[0].rate");
    EXPECT_EQ(e.Found(), "\"rate\" a second time");
    // The same key in different objects is fine.
    EXPECT_NO_THROW(ParseJson(R"({"a": {"x": 1}, "b": {"x": 1}})", "s.json"));
}

TEST(JsonReader, NestingPastTheLimitIsRejected)
{
    const std::string deep = std::string(128, '[') + std::string(128, ']');
    EXPECT_NO_THROW(ParseJson(deep, "d.json"));
    const std::string deeper = std::string(129, '[') + std::string(129, ']');
    InputError e = ErrorOf([&] { ParseJson(deeper, "d.json"); });
    EXPECT_EQ(e.Expected(), "JSON nested at most 128 deep");
    EXPECT_EQ(e.Field().substr(0, 9), "[0][0][0]");
    // A million brackets fail at the limit, without recursing a million deep.
    EXPECT_THROW(ParseJson(std::string(1000000, '['), "d.json"), InputError);
    fabricsim::JsonLimits two;
    two.maxDepth = 2;
    EXPECT_THROW(ParseJson(R"({"a": {"b": {}}})", "d.json", "", two), InputError);
    // Inside a JSON-lines file the path starts at the line.
    EXPECT_EQ(ErrorOf([] { ParseJson(R"({"x": 1, "x": 2})", "r.jsonl", "line 3"); }).Field(),
              "line 3.x");
    EXPECT_EQ(ErrorOf([] { ParseJson("{oops", "r.jsonl", "line 4"); }).Field(), "line 4");
}

TEST(JsonReader, MalformedTextNamesTheFile)
{
    InputError e = ErrorOf([] { ParseJson("{\"a\": }", "bad.json"); });
    EXPECT_EQ(e.File(), "bad.json");
    EXPECT_EQ(e.Expected(), "valid JSON");
    EXPECT_NE(e.Found().find("parse error"), std::string::npos) << e.Found();
    EXPECT_THROW(ParseJson("", "empty.json"), InputError);
    EXPECT_THROW(ParseJson("{} {}", "two.json"), InputError);
}

TEST(JsonReader, PathsUseDotsAndBrackets)
{
    EXPECT_EQ(fabricsim::JsonPath("", "a"), "a");
    EXPECT_EQ(fabricsim::JsonPath("a.b", "c"), "a.b.c");
    EXPECT_EQ(fabricsim::JsonIndex("a.b", 2), "a.b[2]");
    json j = {{"topology", {{"nodes", json::array({{{"id", "x"}}})}}}};
    JsonObject root(j, "t.json", "");
    JsonObject node(j["topology"]["nodes"][0], "t.json", fabricsim::JsonIndex("topology.nodes", 0));
    EXPECT_EQ(node.Field("id"), "topology.nodes[0].id");
    EXPECT_EQ(root.Object("topology").Field("nodes"), "topology.nodes");
}

TEST(JsonReader, NullIsAbsent)
{
    json j = {{"a", nullptr}, {"b", 3}};
    JsonObject o(j, "f", "x");
    EXPECT_FALSE(o.Has("a"));
    EXPECT_EQ(o.OptionalUint("a", 7), 7u);
    EXPECT_EQ(o.OptionalString("a", "d"), "d");
    EXPECT_FALSE(o.OptionalObject("a").has_value());
    InputError e = ErrorOf([&] { o.Uint("a"); });
    EXPECT_EQ(e.Field(), "x.a");
    EXPECT_EQ(e.Found(), "nothing (the key is required)");
}

TEST(JsonReader, IntegersAcceptWholeFloatsUpToTwoToThe53)
{
    json j = {{"f", 4.0},
              {"big", 9007199254740992.0},
              {"bigger", 9007199254740994.0},
              {"half", 4.5},
              {"neg", -1},
              {"max", UINT64_MAX},
              {"s", "4"}};
    JsonObject o(j, "f.json", "");
    EXPECT_EQ(o.Uint("f"), 4u);
    EXPECT_EQ(o.Uint("big"), 9007199254740992u);
    EXPECT_EQ(o.Uint("max"), UINT64_MAX);
    for (const char* k : {"bigger", "half", "neg", "s"})
    {
        InputError e = ErrorOf([&] { o.Uint(k); });
        EXPECT_EQ(e.Field(), k);
        EXPECT_EQ(e.Expected(), "an integer >= 0");
    }
    // The lenient form (profiler metadata) follows the same rule without throwing.
    EXPECT_EQ(JsonObject::AsUint(j["f"]), std::optional<uint64_t>(4));
    EXPECT_FALSE(JsonObject::AsUint(j["bigger"]).has_value());
    EXPECT_FALSE(JsonObject::AsUint(j["neg"]).has_value());
    EXPECT_FALSE(JsonObject::AsUint(j["s"]).has_value());
    InputError r = ErrorOf([&] { o.Uint("f", 5, 10); });
    EXPECT_EQ(r.Expected(), "an integer from 5 to 10");
    EXPECT_EQ(r.Found(), "4.0");
}

TEST(JsonReader, NumbersBoolsStringsAndObjects)
{
    json j = {{"x", 0.5}, {"b", true}, {"s", "hi"}, {"o", {{"k", 1}}}, {"n", "0.5"}};
    JsonObject o(j, "f.json", "root");
    EXPECT_DOUBLE_EQ(o.Number("x", 0, 1), 0.5);
    EXPECT_DOUBLE_EQ(o.OptionalNumber("missing", 2.5, 0, 3), 2.5);
    EXPECT_EQ(ErrorOf([&] { o.Number("x", 1, 2); }).Expected(), "a number in [1, 2]");
    EXPECT_EQ(ErrorOf([&] { o.Number("n", 0, 1); }).Found(), "\"0.5\"");
    EXPECT_TRUE(o.Bool("b"));
    EXPECT_EQ(ErrorOf([&] { o.Bool("s"); }).Expected(), "true or false");
    EXPECT_EQ(o.String("s"), "hi");
    EXPECT_EQ(ErrorOf([&] { o.String("x"); }).Expected(), "a string");
    EXPECT_EQ(o.Object("o").Uint("k"), 1u);
    EXPECT_EQ(ErrorOf([&] { o.Object("s"); }).Field(), "root.s");
    EXPECT_EQ(ErrorOf([&] { JsonObject(j["s"], "f.json", "root.s"); }).Expected(), "a JSON object");
}

TEST(JsonReader, UnknownKeysAreNamedWithTheKnownOnes)
{
    json j = {{"rate", 1}, {"dealy", 2}};
    JsonObject o(j, "f.json", "topology.host_link");
    InputError e = ErrorOf([&] { o.CheckKeys({"rate", "delay"}); });
    EXPECT_EQ(e.Field(), "topology.host_link.dealy");
    EXPECT_EQ(e.Expected(), "a known key (one of: rate, delay)");
    EXPECT_EQ(e.Found(), "unknown key \"dealy\" (did you mean \"delay\"?)");
    EXPECT_NO_THROW(o.CheckKeys({"rate", "delay", "dealy"}));
    EXPECT_EQ(ErrorOf([&] { o.CheckKeys({"rate"}, "a trace replaces them"); }).Expected(),
              "a known key (one of: rate; a trace replaces them)");
}

TEST(JsonReader, SignedIntegersAndArrays)
{
    json j = {{"i", -3}, {"f", -2.0}, {"a", {1, 2.0, 3}}, {"bad", {1, -1}}, {"s", "x"}};
    JsonObject o(j, "f.json", "r");
    EXPECT_EQ(o.Int("i", -5, 5), -3);
    EXPECT_EQ(o.Int("f", -5, 5), -2);
    EXPECT_EQ(o.OptionalInt("none", -1, -1, 9), -1);
    EXPECT_EQ(ErrorOf([&] { o.Int("i", 0, 5); }).Expected(), "an integer from 0 to 5");
    EXPECT_EQ(o.UintArray("a", true), (std::vector<uint64_t>{1, 2, 3}));
    EXPECT_TRUE(o.UintArray("none", false).empty());
    EXPECT_EQ(ErrorOf([&] { o.UintArray("bad", true); }).Field(), "r.bad[1]");
    EXPECT_EQ(ErrorOf([&] { o.Array("s"); }).Expected(), "an array");
    EXPECT_EQ(ErrorOf([&] { o.UintArray("none", true); }).Field(), "r.none");
}

TEST(JsonReader, QuantitiesWithUnits)
{
    json j = {{"bw", "3.35TB/s"}, {"size", 80e9}, {"zero", "0us"}, {"bad", "3 parsecs"}};
    JsonObject o(j, "f.json", "hardware");
    EXPECT_DOUBLE_EQ(o.Quantity("bw", fabricsim::UnitKind::BytesPerSec), 3.35e12);
    EXPECT_DOUBLE_EQ(o.Quantity("size", fabricsim::UnitKind::Bytes), 80e9);
    EXPECT_DOUBLE_EQ(o.OptionalQuantity("none", fabricsim::UnitKind::Seconds, 7e-6), 7e-6);
    EXPECT_DOUBLE_EQ(o.Quantity("zero", fabricsim::UnitKind::Seconds, true), 0.0);
    // Zero is refused unless allowed; wrong units and absent required fields name the field.
    InputError zero = ErrorOf([&] { o.Quantity("zero", fabricsim::UnitKind::Seconds); });
    EXPECT_EQ(zero.Field(), "hardware.zero");
    EXPECT_NE(zero.Expected().find("> 0"), std::string::npos);
    EXPECT_EQ(ErrorOf([&] { o.Quantity("bad", fabricsim::UnitKind::Seconds); }).Found(),
              "\"3 parsecs\"");
    EXPECT_EQ(ErrorOf([&] { o.Quantity("none", fabricsim::UnitKind::Bytes); }).Field(),
              "hardware.none");
}

TEST(JsonReader, LenientMembersForMetadata)
{
    json args = {{"n", 4.0}, {"neg", -1}, {"s", "x"}, {"half", 2.5}};
    EXPECT_EQ(JsonObject::MemberUint(args, "n"), 4u);
    EXPECT_FALSE(JsonObject::MemberUint(args, "neg"));
    EXPECT_FALSE(JsonObject::MemberUint(args, "half"));
    EXPECT_FALSE(JsonObject::MemberUint(args, "none"));
    EXPECT_FALSE(JsonObject::MemberUint(json::array({1}), "n"));
    EXPECT_EQ(JsonObject::MemberString(args, "s"), "x");
    EXPECT_EQ(JsonObject::MemberString(args, "n"), "");
    EXPECT_EQ(JsonObject::MemberString(json(3), "s"), "");
}

TEST(JsonReader, NearestNameForMisspeltKeys)
{
    const std::vector<std::string> keys = {"hidden_size", "num_hidden_layers", "vocab_size"};
    EXPECT_EQ(fabricsim::NearestName("hiden_size", keys), "hidden_size");
    EXPECT_EQ(fabricsim::NearestName("Hidden_Size", keys), "hidden_size");
    EXPECT_EQ(fabricsim::NearestName("num_layers", keys), ""); // 7 edits away: no guess
    EXPECT_EQ(fabricsim::NearestName("rate", {"mtu", "pfc"}), "");
    EXPECT_EQ(fabricsim::DidYouMean("vocab_sise", keys), " (did you mean \"vocab_size\"?)");
}
