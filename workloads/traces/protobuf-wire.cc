#include "protobuf-wire.h"

namespace fabricsim
{

WireReader::WireReader(std::string_view data, uint64_t base)
    : m_data(data)
    , m_base(base)
{
}

void
WireReader::Fail(const std::string& what) const
{
    throw WireError(what + " at byte " + std::to_string(Offset()));
}

uint64_t
WireReader::ReadVarint()
{
    uint64_t v = 0;
    for (int i = 0; i < 10; ++i)
    {
        if (m_pos >= m_data.size())
        {
            Fail("truncated varint");
        }
        const uint8_t b = static_cast<uint8_t>(m_data[m_pos++]);
        // The tenth byte may only carry the top bit of a 64-bit value.
        if (i == 9 && b > 1)
        {
            Fail("varint longer than 64 bits");
        }
        v |= uint64_t(b & 0x7f) << (7 * i);
        if ((b & 0x80) == 0)
        {
            return v;
        }
    }
    Fail("varint longer than 10 bytes");
}

void
WireReader::ReadTag(uint32_t& field, WireType& type)
{
    const uint64_t key = ReadVarint();
    const uint64_t number = key >> 3;
    const uint8_t wt = uint8_t(key & 7);
    if (number == 0 || number > 0x1fffffff)
    {
        Fail("invalid field number " + std::to_string(number));
    }
    if (wt != 0 && wt != 1 && wt != 2 && wt != 5)
    {
        Fail("unsupported wire type " + std::to_string(wt));
    }
    field = uint32_t(number);
    type = WireType(wt);
}

std::string_view
WireReader::ReadBytes()
{
    const uint64_t len = ReadVarint();
    if (len > m_data.size() - m_pos)
    {
        Fail("length " + std::to_string(len) + " runs past the end ("
             + std::to_string(m_data.size() - m_pos) + " bytes left)");
    }
    std::string_view out = m_data.substr(m_pos, size_t(len));
    m_pos += size_t(len);
    return out;
}

uint64_t
WireReader::ReadFixed64()
{
    if (m_data.size() - m_pos < 8)
    {
        Fail("truncated fixed64");
    }
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
    {
        v = (v << 8) | static_cast<uint8_t>(m_data[m_pos + size_t(i)]);
    }
    m_pos += 8;
    return v;
}

uint32_t
WireReader::ReadFixed32()
{
    if (m_data.size() - m_pos < 4)
    {
        Fail("truncated fixed32");
    }
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i)
    {
        v = (v << 8) | static_cast<uint8_t>(m_data[m_pos + size_t(i)]);
    }
    m_pos += 4;
    return v;
}

void
WireReader::Skip(WireType type)
{
    switch (type)
    {
    case WireType::kVarint:
        ReadVarint();
        break;
    case WireType::kFixed64:
        ReadFixed64();
        break;
    case WireType::kLength:
        ReadBytes();
        break;
    case WireType::kFixed32:
        ReadFixed32();
        break;
    }
}

int64_t
ZigZagDecode(uint64_t v)
{
    return int64_t(v >> 1) ^ -int64_t(v & 1);
}

uint64_t
ZigZagEncode(int64_t v)
{
    return (uint64_t(v) << 1) ^ uint64_t(v >> 63);
}

void
WireWriter::Varint(uint64_t v)
{
    while (v >= 0x80)
    {
        m_out.push_back(char(uint8_t(v) | 0x80));
        v >>= 7;
    }
    m_out.push_back(char(uint8_t(v)));
}

void
WireWriter::Tag(uint32_t field, WireType type)
{
    Varint(uint64_t(field) << 3 | uint64_t(type));
}

void
WireWriter::Fixed64(uint64_t v)
{
    for (int i = 0; i < 8; ++i)
    {
        m_out.push_back(char(uint8_t(v >> (8 * i))));
    }
}

void
WireWriter::Fixed32(uint32_t v)
{
    for (int i = 0; i < 4; ++i)
    {
        m_out.push_back(char(uint8_t(v >> (8 * i))));
    }
}

void
WireWriter::VarintField(uint32_t field, uint64_t v)
{
    Varint(uint64_t(field) << 3 | uint64_t(WireType::kVarint));
    Varint(v);
}

void
WireWriter::BytesField(uint32_t field, std::string_view bytes)
{
    Varint(uint64_t(field) << 3 | uint64_t(WireType::kLength));
    Varint(bytes.size());
    m_out.append(bytes.data(), bytes.size());
}

void
WireWriter::Fixed64Field(uint32_t field, uint64_t v)
{
    Tag(field, WireType::kFixed64);
    Fixed64(v);
}

void
WireWriter::Fixed32Field(uint32_t field, uint32_t v)
{
    Tag(field, WireType::kFixed32);
    Fixed32(v);
}

DelimitedStreamReader::DelimitedStreamReader(std::string_view data)
    : m_reader(data)
{
}

bool
DelimitedStreamReader::Next(std::string_view& message)
{
    if (m_reader.AtEnd())
    {
        return false;
    }
    message = m_reader.ReadBytes();
    return true;
}

void
AppendDelimited(std::string& stream, const std::string& message)
{
    WireWriter w;
    w.Varint(message.size());
    stream += w.Bytes();
    stream += message;
}

} // namespace fabricsim
