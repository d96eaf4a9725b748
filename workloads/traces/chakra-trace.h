/*
 * MLCommons Chakra execution traces (.et): a length-delimited stream of protobuf messages, a
 * GlobalMetadata first and then one Node per message (schema ChakraProtoMsg, et_def.proto).
 * This is a faithful in-memory form of the file: every node, dependency and attribute, so a
 * trace read and written again keeps its content.
 */
#ifndef FABRICSIM_TRACES_CHAKRA_TRACE_H
#define FABRICSIM_TRACES_CHAKRA_TRACE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricsim
{

/// Chakra node types (NodeType).
enum class ChakraNodeType : uint32_t
{
    kInvalid = 0,
    kMetadata = 1,
    kMemLoad = 2,
    kMemStore = 3,
    kComp = 4,
    kCommSend = 5,
    kCommRecv = 6,
    kCommColl = 7
};

/// Chakra collective types (CollectiveCommType, the comm_type attribute).
enum class ChakraCollType : int64_t
{
    kAllReduce = 0,
    kReduce = 1,
    kAllGather = 2,
    kGather = 3,
    kScatter = 4,
    kBroadcast = 5,
    kAllToAll = 6,
    kReduceScatter = 7,
    kReduceScatterBlock = 8,
    kBarrier = 9
};

/// "ALL_REDUCE", ... (the enum's own names); "UNKNOWN(n)" otherwise.
std::string ChakraCollTypeName(int64_t type);

/**
 * \brief One AttributeProto. \c field is the number of the oneof member that was set (3 double
 * ... 32 bytes list), which fixes how the value is encoded; 0 = none set.
 */
struct ChakraAttr
{
    std::string name;
    std::string docString;
    uint32_t field = 0;
    int64_t intValue = 0;    ///< integer and bool members (uint64 keeps its bit pattern)
    double doubleValue = 0;  ///< double and float members
    std::string stringValue; ///< string and bytes members
    std::vector<int64_t> intList;
    std::vector<double> doubleList;
    std::vector<std::string> stringList;

    /// True for the list members (even field numbers 4 .. 32).
    bool IsList() const;
    /// True for integer and bool scalars.
    bool IsInteger() const;

    /// An int64 attribute.
    static ChakraAttr Int64(const std::string& name, int64_t v);
    /// A bool attribute.
    static ChakraAttr Bool(const std::string& name, bool v);
    /// A string attribute.
    static ChakraAttr String(const std::string& name, const std::string& v);
    /// A bool list attribute.
    static ChakraAttr BoolList(const std::string& name, const std::vector<bool>& v);
};

/// IOInfo: the three strings Chakra keeps for inputs and outputs.
struct ChakraIoInfo
{
    std::string values;
    std::string shapes;
    std::string types;

    bool Empty() const
    {
        return values.empty() && shapes.empty() && types.empty();
    }
};

/// One Node message.
struct ChakraNode
{
    uint64_t id = 0;
    std::string name;
    uint32_t type = 0; ///< ChakraNodeType value (unknown values are kept)
    std::vector<uint64_t> ctrlDeps;
    std::vector<uint64_t> dataDeps;
    uint64_t startTimeMicros = 0;
    uint64_t durationMicros = 0;
    ChakraIoInfo inputs;
    ChakraIoInfo outputs;
    std::vector<ChakraAttr> attrs;

    /// The attribute called \p name, or nullptr.
    const ChakraAttr* Attr(const std::string& name) const;
};

/// A whole .et file.
struct ChakraTrace
{
    std::string version; ///< GlobalMetadata.version
    std::vector<ChakraAttr> metadataAttrs;
    std::vector<ChakraNode> nodes; ///< in file order
};

/**
 * Decode a Chakra stream. \throws fabricsim::InputError naming \p file, the message ("metadata" or
 * "node N") and the byte offset on malformed input (truncation, bad varints, wrong wire types,
 * an empty stream)
 */
ChakraTrace ParseChakra(std::string_view bytes, const std::string& file);

/// Read and decode \p path (InputError when unreadable or malformed).
ChakraTrace ReadChakraFile(const std::string& path);

/// Encode \p trace as a Chakra stream (proto3: default values left out).
std::string SerializeChakra(const ChakraTrace& trace);

/// Write \p trace to \p path atomically (std::runtime_error on I/O failure).
void WriteChakraFile(const std::string& path, const ChakraTrace& trace);

} // namespace fabricsim

#endif
