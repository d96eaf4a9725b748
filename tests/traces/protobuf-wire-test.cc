#include "chakra-trace.h"
#include "input-error.h"
#include "protobuf-wire.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

TEST(ProtobufWire, VarintsRoundTripAtTheirBoundaries)
{
    const uint64_t values[] = {0, 1, 127, 128, 300, 16383, 16384, (1ULL << 35) + 7, UINT64_MAX};
    WireWriter w;
    for (uint64_t v : values)
    {
        w.Varint(v);
    }
    EXPECT_EQ(w.Bytes().substr(0, 5), std::string("\x00\x01\x7f\x80\x01", 5));
    WireReader r(w.Bytes());
    for (uint64_t v : values)
    {
        EXPECT_EQ(r.ReadVarint(), v);
    }
    EXPECT_TRUE(r.AtEnd());
    EXPECT_EQ(ZigZagDecode(ZigZagEncode(-5)), -5);
    EXPECT_EQ(ZigZagEncode(-1), 1u);
    EXPECT_EQ(ZigZagEncode(1), 2u);
}

TEST(ProtobufWire, MalformedBytesAreErrorsWithOffsets)
{
    const std::string truncatedBytes("\x96", 1); // the reader does not own its bytes
    WireReader truncated(truncatedBytes);
    EXPECT_THROW(truncated.ReadVarint(), WireError);
    // Eleven continuation bytes: longer than any 64-bit varint.
    const std::string tooLongBytes(11, '\xff'); // the reader does not own its bytes
    WireReader tooLong(tooLongBytes);
    EXPECT_THROW(tooLong.ReadVarint(), WireError);
    // A length that runs past the end of the buffer.
    const std::string pastEndBytes("\x0a\x05\x61\x62", 4); // the reader does not own its bytes
    WireReader pastEnd(pastEndBytes);
    uint32_t field;
    WireType type;
    pastEnd.ReadTag(field, type);
    EXPECT_EQ(field, 1u);
    EXPECT_EQ(type, WireType::kLength);
    try
    {
        pastEnd.ReadBytes();
        FAIL() << "no error";
    }
    catch (const WireError& e)
    {
        EXPECT_NE(std::string(e.what()).find("at byte 2"), std::string::npos) << e.what();
    }
    // Groups (wire type 3) are not part of proto3.
    const std::string groupBytes("\x0b", 1); // the reader does not own its bytes
    WireReader group(groupBytes);
    EXPECT_THROW(group.ReadTag(field, type), WireError);
}

TEST(ChakraFormat, NodesAndAttributesSurviveAWriteAndARead)
{
    ChakraTrace t;
    t.version = "0.0.4";
    t.metadataAttrs.push_back(ChakraAttr::String("schema", "test"));
    ChakraNode a;
    a.id = 0; // proto3 leaves the zero id out of the encoding
    a.name = "gemm";
    a.type = uint32_t(ChakraNodeType::kComp);
    a.durationMicros = 12;
    a.attrs.push_back(ChakraAttr::Bool("is_cpu_op", false));
    ChakraAttr d;
    d.name = "ratio";
    d.field = 3;
    d.doubleValue = -0.25;
    a.attrs.push_back(d);
    ChakraAttr neg;
    neg.name = "neg32";
    neg.field = 7;
    neg.intValue = -3;
    a.attrs.push_back(neg);
    ChakraNode b;
    b.id = 1;
    b.name = "allreduce";
    b.type = uint32_t(ChakraNodeType::kCommColl);
    b.dataDeps = {0};
    b.ctrlDeps = {0};
    b.attrs.push_back(ChakraAttr::Int64("comm_type", 0));
    b.attrs.push_back(ChakraAttr::Int64("comm_size", 1 << 20));
    b.attrs.push_back(ChakraAttr::BoolList("involved_dim", {true, false}));
    ChakraAttr strs;
    strs.name = "names";
    strs.field = 30;
    strs.stringList = {"x", "", "yz"};
    b.attrs.push_back(strs);
    t.nodes = {a, b};

    const std::string bytes = SerializeChakra(t);
    ChakraTrace back = ParseChakra(bytes, "mem");
    EXPECT_EQ(back.version, "0.0.4");
    ASSERT_EQ(back.nodes.size(), 2u);
    EXPECT_EQ(back.nodes[0].id, 0u);
    EXPECT_EQ(back.nodes[0].durationMicros, 12u);
    EXPECT_DOUBLE_EQ(back.nodes[0].Attr("ratio")->doubleValue, -0.25);
    EXPECT_EQ(back.nodes[0].Attr("neg32")->intValue, -3);
    EXPECT_EQ(back.nodes[0].Attr("is_cpu_op")->intValue, 0);
    EXPECT_EQ(back.nodes[1].dataDeps, std::vector<uint64_t>{0});
    EXPECT_EQ(back.nodes[1].Attr("comm_size")->intValue, 1 << 20);
    EXPECT_EQ(back.nodes[1].Attr("involved_dim")->intList, (std::vector<int64_t>{1, 0}));
    EXPECT_EQ(back.nodes[1].Attr("names")->stringList, (std::vector<std::string>{"x", "", "yz"}));
    // Writing what was read gives the same bytes.
    EXPECT_EQ(SerializeChakra(back), bytes);
}

TEST(ChakraFormat, TruncatedAndEmptyStreamsNameFileAndMessage)
{
    ChakraTrace t;
    t.version = "0.0.4";
    ChakraNode n;
    n.id = 7;
    n.name = "x";
    t.nodes = {n};
    std::string bytes = SerializeChakra(t);
    bytes.pop_back();
    try
    {
        ParseChakra(bytes, "cut.et");
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.File(), "cut.et");
        EXPECT_EQ(e.Field(), "node 0");
    }
    EXPECT_THROW(ParseChakra("", "empty.et"), fabricsim::InputError);
    // Empty messages (every field at its default) are no metadata and no node: zero bytes given
    // as a trace were once an endless stream of them, growing until memory ran out.
    auto fieldOf = [](const std::string& b)
    {
        try
        {
            ParseChakra(b, "z.et");
        }
        catch (const fabricsim::InputError& e)
        {
            return e.Field() + ": " + e.Found();
        }
        return std::string("no error");
    };
    EXPECT_EQ(fieldOf(std::string(1000, '\0')), "metadata: an empty message at byte 0");
    t.nodes.push_back(ChakraNode());
    EXPECT_EQ(fieldOf(SerializeChakra(t)), "node 1: an empty message at byte 14");
}

} // namespace
} // namespace fabricsim
