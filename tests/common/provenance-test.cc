// SHA-256 against FIPS 180-4's examples, and what a ProvenanceScope records.
#include "file-reader.h"
#include "provenance.h"
#include "sha256.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace fabricsim;

TEST(Sha256, FipsExamples)
{
    EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    // A million 'a', fed in uneven pieces: blocks straddle the pieces.
    Sha256 h;
    const std::string piece(997, 'a');
    size_t left = 1000000;
    while (left > 0)
    {
        const size_t n = std::min(left, piece.size());
        h.Update(piece.data(), n);
        left -= n;
    }
    EXPECT_EQ(h.HexDigest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    // 55 and 56 bytes: the length fits the last block, or needs one more.
    EXPECT_NE(Sha256Hex(std::string(55, 'x')), Sha256Hex(std::string(56, 'x')));
}

TEST(Sha256, OfAFileIsOfItsContent)
{
    const std::string path = std::filesystem::temp_directory_path() / "fabricsim-sha-test.bin";
    std::string content(3 << 20, '\0');
    for (size_t i = 0; i < content.size(); ++i)
    {
        content[i] = char(i * 131 % 251);
    }
    std::ofstream(path, std::ios::binary) << content;
    EXPECT_EQ(Sha256OfFile(path), Sha256Hex(content));
    std::remove(path.c_str());
    EXPECT_EQ(Sha256OfFile(path), "");
}

TEST(Provenance, TheInnermostScopeRecordsEachFileReadOnce)
{
    const std::string a = std::filesystem::temp_directory_path() / "fabricsim-prov-a.json";
    const std::string b = std::filesystem::temp_directory_path() / "fabricsim-prov-b.json";
    std::ofstream(a) << "{}";
    std::ofstream(b) << "{\"x\": 1}";
    ReadFileBounded(a, "file"); // no scope: nothing kept anywhere
    ProvenanceScope outer({"run", "x.json"});
    ReadFileBounded(a, "file");
    {
        ProvenanceScope inner({"inner"});
        ReadFileBounded(b, "file");
        EXPECT_EQ(inner.Inputs(), std::vector<std::string>{b});
        EXPECT_EQ(ProvenanceScope::Current(), &inner);
    }
    EXPECT_EQ(ProvenanceScope::Current(), &outer);
    {
        LineReader lines(b, "file");
    }
    ReadFileBounded(a, "file");
    EXPECT_EQ(outer.Inputs(), (std::vector<std::string>{a, b}));
    const nlohmann::json j = ProvenanceJson({{"seed", 1}}, {"--ns3::X::Y=1"}, "");
    EXPECT_EQ(j["command"], nlohmann::json({"run", "x.json"}));
    EXPECT_EQ(j["scenario"]["seed"], 1);
    EXPECT_EQ(j["attribute_overrides"][0], "--ns3::X::Y=1");
    ASSERT_EQ(j["inputs"].size(), 2u);
    EXPECT_EQ(j["inputs"][1]["sha256"], Sha256Hex("{\"x\": 1}"));
    EXPECT_FALSE(j["fabricsim_version"].get<std::string>().empty());
    std::remove(a.c_str());
    std::remove(b.c_str());
}

TEST(Provenance, PathsAreNeverAbsolute)
{
    EXPECT_EQ(PortablePath("scenarios/x.json", "/src/fabricsim"), "scenarios/x.json");
    EXPECT_EQ(PortablePath("/src/fabricsim/scenarios/x.json", "/src/fabricsim"),
              "<fabricsim>/scenarios/x.json");
    EXPECT_EQ(PortablePath("/src/fabricsim/./data/../scenarios/x.json", "/src/fabricsim/"),
              "<fabricsim>/scenarios/x.json");
    const std::string cwd = std::filesystem::current_path();
    EXPECT_EQ(PortablePath(cwd + "/a/b.csv", "/src/fabricsim"), "a/b.csv");
    const std::string outside = PortablePath("/elsewhere/data/t.csv", "/src/fabricsim");
    EXPECT_NE(outside.front(), '/') << outside;
    EXPECT_NE(outside.find("elsewhere/data/t.csv"), std::string::npos) << outside;
}
