#include "chakra-trace.h"

#include "file-reader.h"
#include "input-error.h"
#include "output-writer.h"
#include "protobuf-wire.h"

#include <cstring>

namespace fabricsim
{

namespace
{

double
BitsToDouble(uint64_t bits)
{
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}

uint64_t
DoubleToBits(double d)
{
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    return bits;
}

float
BitsToFloat(uint32_t bits)
{
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

uint32_t
FloatToBits(float f)
{
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return bits;
}

/// How the elements of a scalar oneof member (or of its list) travel.
enum class Scalar
{
    kDouble,
    kFloat,
    kInt32,
    kInt64,
    kUint32,
    kUint64,
    kSint32,
    kSint64,
    kFixed32,
    kFixed64,
    kSfixed32,
    kSfixed64,
    kBool,
    kString,
    kBytes
};

/// The element kind of oneof member \p field (3..32); lists share their scalar's kind.
Scalar
KindOf(uint32_t field)
{
    static const Scalar kinds[] = {Scalar::kDouble,
                                   Scalar::kFloat,
                                   Scalar::kInt32,
                                   Scalar::kInt64,
                                   Scalar::kUint32,
                                   Scalar::kUint64,
                                   Scalar::kSint32,
                                   Scalar::kSint64,
                                   Scalar::kFixed32,
                                   Scalar::kFixed64,
                                   Scalar::kSfixed32,
                                   Scalar::kSfixed64,
                                   Scalar::kBool,
                                   Scalar::kString,
                                   Scalar::kBytes};
    return kinds[(field - 3) / 2];
}

WireType
WireTypeOf(Scalar k)
{
    switch (k)
    {
    case Scalar::kDouble:
    case Scalar::kFixed64:
    case Scalar::kSfixed64:
        return WireType::kFixed64;
    case Scalar::kFloat:
    case Scalar::kFixed32:
    case Scalar::kSfixed32:
        return WireType::kFixed32;
    case Scalar::kString:
    case Scalar::kBytes:
        return WireType::kLength;
    default:
        return WireType::kVarint;
    }
}

bool
IsFloating(Scalar k)
{
    return k == Scalar::kDouble || k == Scalar::kFloat;
}

bool
IsText(Scalar k)
{
    return k == Scalar::kString || k == Scalar::kBytes;
}

/// One numeric element of kind \p k from \p r (wire type already checked).
void
ReadNumber(WireReader& r, Scalar k, int64_t& i, double& d)
{
    switch (k)
    {
    case Scalar::kDouble:
        d = BitsToDouble(r.ReadFixed64());
        return;
    case Scalar::kFloat:
        d = BitsToFloat(r.ReadFixed32());
        return;
    case Scalar::kFixed64:
    case Scalar::kSfixed64:
        i = int64_t(r.ReadFixed64());
        return;
    case Scalar::kFixed32:
        i = int64_t(r.ReadFixed32());
        return;
    case Scalar::kSfixed32:
        i = int64_t(int32_t(r.ReadFixed32()));
        return;
    case Scalar::kSint32:
    case Scalar::kSint64:
        i = ZigZagDecode(r.ReadVarint());
        return;
    case Scalar::kInt32:
        i = int64_t(int32_t(uint32_t(r.ReadVarint())));
        return;
    case Scalar::kUint32:
        i = int64_t(uint32_t(r.ReadVarint()));
        return;
    case Scalar::kBool:
        i = r.ReadVarint() != 0 ? 1 : 0;
        return;
    default:
        i = int64_t(r.ReadVarint());
        return;
    }
}

/// The value alone (no tag), as a packed list element or after a tag.
void
WriteValue(WireWriter& w, Scalar k, int64_t i, double d)
{
    switch (k)
    {
    case Scalar::kDouble:
        w.Fixed64(DoubleToBits(d));
        return;
    case Scalar::kFloat:
        w.Fixed32(FloatToBits(float(d)));
        return;
    case Scalar::kFixed64:
    case Scalar::kSfixed64:
        w.Fixed64(uint64_t(i));
        return;
    case Scalar::kFixed32:
    case Scalar::kSfixed32:
        w.Fixed32(uint32_t(i));
        return;
    case Scalar::kSint32:
    case Scalar::kSint64:
        w.Varint(ZigZagEncode(i));
        return;
    case Scalar::kInt32:
        // Negative int32 values travel sign-extended to 64 bits, as protobuf does.
        w.Varint(uint64_t(int64_t(int32_t(i))));
        return;
    default:
        w.Varint(uint64_t(i));
        return;
    }
}

/// A list message: repeated field 1, packed or not.
void
ReadList(std::string_view bytes, uint64_t base, Scalar k, ChakraAttr& a)
{
    WireReader r(bytes, base);
    while (!r.AtEnd())
    {
        uint32_t field;
        WireType type;
        r.ReadTag(field, type);
        if (field != 1)
        {
            r.Skip(type);
            continue;
        }
        if (IsText(k))
        {
            if (type != WireType::kLength)
            {
                r.Fail("list element of the wrong wire type");
            }
            a.stringList.emplace_back(r.ReadBytes());
            continue;
        }
        auto one = [&](WireReader& src)
        {
            int64_t i = 0;
            double d = 0;
            ReadNumber(src, k, i, d);
            if (IsFloating(k))
            {
                a.doubleList.push_back(d);
            }
            else
            {
                a.intList.push_back(i);
            }
        };
        if (type == WireType::kLength && WireTypeOf(k) != WireType::kLength)
        {
            const uint64_t at = r.Offset();
            std::string_view packed = r.ReadBytes();
            WireReader p(packed, at);
            while (!p.AtEnd())
            {
                one(p);
            }
        }
        else if (type == WireTypeOf(k))
        {
            one(r);
        }
        else
        {
            r.Fail("list element of the wrong wire type");
        }
    }
}

ChakraAttr
ReadAttr(std::string_view bytes, uint64_t base)
{
    ChakraAttr a;
    WireReader r(bytes, base);
    while (!r.AtEnd())
    {
        uint32_t field;
        WireType type;
        r.ReadTag(field, type);
        if (field == 1 || field == 2)
        {
            if (type != WireType::kLength)
            {
                r.Fail("attribute name of the wrong wire type");
            }
            (field == 1 ? a.name : a.docString) = std::string(r.ReadBytes());
            continue;
        }
        if (field < 3 || field > 32)
        {
            r.Skip(type);
            continue;
        }
        const Scalar k = KindOf(field);
        // A oneof: a later member replaces an earlier one.
        ChakraAttr fresh;
        fresh.name = a.name;
        fresh.docString = a.docString;
        fresh.field = field;
        a = fresh;
        if (field % 2 == 0)
        {
            if (type != WireType::kLength)
            {
                r.Fail("attribute list of the wrong wire type");
            }
            const uint64_t at = r.Offset();
            std::string_view list = r.ReadBytes();
            ReadList(list, at, k, a);
        }
        else if (type != WireTypeOf(k))
        {
            r.Fail("attribute '" + a.name + "' value of the wrong wire type");
        }
        else if (IsText(k))
        {
            a.stringValue = std::string(r.ReadBytes());
        }
        else
        {
            ReadNumber(r, k, a.intValue, a.doubleValue);
        }
    }
    return a;
}

std::string
WriteAttr(const ChakraAttr& a)
{
    WireWriter w;
    if (!a.name.empty())
    {
        w.BytesField(1, a.name);
    }
    if (!a.docString.empty())
    {
        w.BytesField(2, a.docString);
    }
    if (a.field < 3 || a.field > 32)
    {
        return w.Bytes();
    }
    const Scalar k = KindOf(a.field);
    if (a.IsList())
    {
        WireWriter list;
        if (IsText(k))
        {
            for (const std::string& s : a.stringList)
            {
                list.BytesField(1, s);
            }
        }
        else
        {
            WireWriter packed;
            const size_t n = IsFloating(k) ? a.doubleList.size() : a.intList.size();
            for (size_t i = 0; i < n; ++i)
            {
                WriteValue(packed,
                           k,
                           IsFloating(k) ? 0 : a.intList[i],
                           IsFloating(k) ? a.doubleList[i] : 0);
            }
            if (n > 0)
            {
                list.BytesField(1, packed.Bytes());
            }
        }
        w.BytesField(a.field, list.Bytes());
    }
    else if (IsText(k))
    {
        w.BytesField(a.field, a.stringValue);
    }
    else
    {
        w.Tag(a.field, WireTypeOf(k));
        WriteValue(w, k, a.intValue, a.doubleValue);
    }
    return w.Bytes();
}

void
ReadDeps(WireReader& r, WireType type, std::vector<uint64_t>& out)
{
    if (type == WireType::kLength)
    {
        const uint64_t at = r.Offset();
        std::string_view packed = r.ReadBytes();
        WireReader p(packed, at);
        while (!p.AtEnd())
        {
            out.push_back(p.ReadVarint());
        }
    }
    else if (type == WireType::kVarint)
    {
        out.push_back(r.ReadVarint());
    }
    else
    {
        r.Fail("dependency of the wrong wire type");
    }
}

ChakraIoInfo
ReadIo(std::string_view bytes, uint64_t base)
{
    ChakraIoInfo io;
    WireReader r(bytes, base);
    while (!r.AtEnd())
    {
        uint32_t field;
        WireType type;
        r.ReadTag(field, type);
        if (field >= 1 && field <= 3 && type == WireType::kLength)
        {
            std::string s(r.ReadBytes());
            (field == 1 ? io.values : field == 2 ? io.shapes : io.types) = s;
        }
        else
        {
            r.Skip(type);
        }
    }
    return io;
}

std::string
WriteIo(const ChakraIoInfo& io)
{
    WireWriter w;
    if (!io.values.empty())
    {
        w.BytesField(1, io.values);
    }
    if (!io.shapes.empty())
    {
        w.BytesField(2, io.shapes);
    }
    if (!io.types.empty())
    {
        w.BytesField(3, io.types);
    }
    return w.Bytes();
}

uint64_t
ReadUintField(WireReader& r, WireType type, const char* what)
{
    if (type != WireType::kVarint)
    {
        r.Fail(std::string(what) + " of the wrong wire type");
    }
    return r.ReadVarint();
}

ChakraNode
ReadNode(std::string_view bytes, uint64_t base)
{
    ChakraNode n;
    WireReader r(bytes, base);
    while (!r.AtEnd())
    {
        uint32_t field;
        WireType type;
        r.ReadTag(field, type);
        switch (field)
        {
        case 1:
            n.id = ReadUintField(r, type, "id");
            break;
        case 2:
            if (type != WireType::kLength)
            {
                r.Fail("name of the wrong wire type");
            }
            n.name = std::string(r.ReadBytes());
            break;
        case 3:
            n.type = uint32_t(ReadUintField(r, type, "type"));
            break;
        case 4:
            ReadDeps(r, type, n.ctrlDeps);
            break;
        case 5:
            ReadDeps(r, type, n.dataDeps);
            break;
        case 6:
            n.startTimeMicros = ReadUintField(r, type, "start_time_micros");
            break;
        case 7:
            n.durationMicros = ReadUintField(r, type, "duration_micros");
            break;
        case 8:
        case 9:
        case 10:
        {
            if (type != WireType::kLength)
            {
                r.Fail("message field of the wrong wire type");
            }
            const uint64_t at = r.Offset();
            std::string_view sub = r.ReadBytes();
            if (field == 10)
            {
                n.attrs.push_back(ReadAttr(sub, at));
            }
            else
            {
                (field == 8 ? n.inputs : n.outputs) = ReadIo(sub, at);
            }
            break;
        }
        default:
            r.Skip(type); // storage and fields of newer schemas
            break;
        }
    }
    return n;
}

std::string
WriteNode(const ChakraNode& n)
{
    WireWriter w;
    if (n.id != 0)
    {
        w.VarintField(1, n.id);
    }
    if (!n.name.empty())
    {
        w.BytesField(2, n.name);
    }
    if (n.type != 0)
    {
        w.VarintField(3, n.type);
    }
    for (int which = 0; which < 2; ++which)
    {
        const std::vector<uint64_t>& deps = which == 0 ? n.ctrlDeps : n.dataDeps;
        if (deps.empty())
        {
            continue;
        }
        WireWriter packed;
        for (uint64_t d : deps)
        {
            packed.Varint(d);
        }
        w.BytesField(which == 0 ? 4 : 5, packed.Bytes());
    }
    if (n.startTimeMicros != 0)
    {
        w.VarintField(6, n.startTimeMicros);
    }
    if (n.durationMicros != 0)
    {
        w.VarintField(7, n.durationMicros);
    }
    if (!n.inputs.Empty())
    {
        w.BytesField(8, WriteIo(n.inputs));
    }
    if (!n.outputs.Empty())
    {
        w.BytesField(9, WriteIo(n.outputs));
    }
    for (const ChakraAttr& a : n.attrs)
    {
        w.BytesField(10, WriteAttr(a));
    }
    return w.Bytes();
}

} // namespace

std::string
ChakraCollTypeName(int64_t type)
{
    static const char* names[] = {"ALL_REDUCE",
                                  "REDUCE",
                                  "ALL_GATHER",
                                  "GATHER",
                                  "SCATTER",
                                  "BROADCAST",
                                  "ALL_TO_ALL",
                                  "REDUCE_SCATTER",
                                  "REDUCE_SCATTER_BLOCK",
                                  "BARRIER"};
    if (type >= 0 && type <= 9)
    {
        return names[type];
    }
    return "UNKNOWN(" + std::to_string(type) + ")";
}

bool
ChakraAttr::IsList() const
{
    return field >= 4 && field <= 32 && field % 2 == 0;
}

bool
ChakraAttr::IsInteger() const
{
    if (field < 3 || field > 32 || IsList())
    {
        return false;
    }
    const Scalar k = KindOf(field);
    return !IsFloating(k) && !IsText(k);
}

ChakraAttr
ChakraAttr::Int64(const std::string& name, int64_t v)
{
    ChakraAttr a;
    a.name = name;
    a.field = 9;
    a.intValue = v;
    return a;
}

ChakraAttr
ChakraAttr::Bool(const std::string& name, bool v)
{
    ChakraAttr a;
    a.name = name;
    a.field = 27;
    a.intValue = v ? 1 : 0;
    return a;
}

ChakraAttr
ChakraAttr::String(const std::string& name, const std::string& v)
{
    ChakraAttr a;
    a.name = name;
    a.field = 29;
    a.stringValue = v;
    return a;
}

ChakraAttr
ChakraAttr::BoolList(const std::string& name, const std::vector<bool>& v)
{
    ChakraAttr a;
    a.name = name;
    a.field = 28;
    for (bool b : v)
    {
        a.intList.push_back(b ? 1 : 0);
    }
    return a;
}

const ChakraAttr*
ChakraNode::Attr(const std::string& attrName) const
{
    for (const ChakraAttr& a : attrs)
    {
        if (a.name == attrName)
        {
            return &a;
        }
    }
    return nullptr;
}

ChakraTrace
ParseChakra(std::string_view bytes, const std::string& file)
{
    ChakraTrace t;
    DelimitedStreamReader stream(bytes);
    std::string_view msg;
    size_t index = 0;
    std::string where = "metadata";
    try
    {
        while (true)
        {
            const uint64_t at = stream.Offset();
            where = index == 0 ? "metadata" : "node " + std::to_string(index - 1);
            if (!stream.Next(msg))
            {
                break;
            }
            const uint64_t body = at + (stream.Offset() - at - msg.size());
            if (msg.empty())
            {
                // Every field at its default: no metadata, or a node with neither id, name nor
                // type. A run of zero bytes would otherwise be a stream of such nodes.
                throw fabricsim::InputError(file,
                                            where,
                                            index == 0
                                                ? "a GlobalMetadata message (version or attributes)"
                                                : "a node (id, name, type, ...)",
                                            "an empty message at byte " + std::to_string(at));
            }
            if (index == 0)
            {
                WireReader r(msg, body);
                while (!r.AtEnd())
                {
                    uint32_t field;
                    WireType type;
                    r.ReadTag(field, type);
                    if ((field == 1 || field == 2) && type == WireType::kLength)
                    {
                        const uint64_t sub = r.Offset();
                        std::string_view v = r.ReadBytes();
                        if (field == 1)
                        {
                            t.version = std::string(v);
                        }
                        else
                        {
                            t.metadataAttrs.push_back(ReadAttr(v, sub));
                        }
                    }
                    else
                    {
                        r.Skip(type);
                    }
                }
            }
            else
            {
                t.nodes.push_back(ReadNode(msg, body));
            }
            ++index;
        }
    }
    catch (const WireError& e)
    {
        throw fabricsim::InputError(file, where, "a Chakra protobuf message", e.what());
    }
    if (index == 0)
    {
        throw fabricsim::InputError(file,
                                    "metadata",
                                    "a Chakra trace (a GlobalMetadata message, then nodes)",
                                    "an empty file");
    }
    return t;
}

ChakraTrace
ReadChakraFile(const std::string& path)
{
    // The first message (the metadata) is checked before the whole file is read: anything
    // else given as a trace (a gigabyte of zeros, say) is refused from its first bytes.
    const std::string head = ReadFileHead(path, "Chakra trace", 1 << 16);
    DelimitedStreamReader first(head);
    std::string_view msg;
    bool complete = false;
    try
    {
        complete = first.Next(msg);
    }
    catch (const WireError&)
    {
        complete = false; // longer than the head: judged when the whole file is read
    }
    if (complete)
    {
        ParseChakra(std::string_view(head).substr(0, first.Offset()), path);
    }
    return ParseChakra(ReadFileBounded(path, "Chakra trace", kBinaryDataFileLimits), path);
}

std::string
SerializeChakra(const ChakraTrace& trace)
{
    std::string out;
    WireWriter meta;
    if (!trace.version.empty())
    {
        meta.BytesField(1, trace.version);
    }
    for (const ChakraAttr& a : trace.metadataAttrs)
    {
        meta.BytesField(2, WriteAttr(a));
    }
    AppendDelimited(out, meta.Bytes());
    for (const ChakraNode& n : trace.nodes)
    {
        AppendDelimited(out, WriteNode(n));
    }
    return out;
}

void
WriteChakraFile(const std::string& path, const ChakraTrace& trace)
{
    WriteFileAtomic(path, SerializeChakra(trace));
}

} // namespace fabricsim
