/*
 * A small reader and writer for the protobuf wire format (varints, tags, length-delimited
 * fields, fixed 32/64-bit values) and for length-delimited message streams, enough to read and
 * write Chakra execution traces without a protobuf dependency. Every read is bounds-checked:
 * malformed input raises WireError, never reads past the buffer.
 */
#ifndef FABRICSIM_TRACES_PROTOBUF_WIRE_H
#define FABRICSIM_TRACES_PROTOBUF_WIRE_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fabricsim
{

/// Malformed protobuf bytes; what() says what and at which byte offset.
class WireError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

/// Protobuf wire types.
enum class WireType : uint8_t
{
    kVarint = 0,
    kFixed64 = 1,
    kLength = 2,
    kFixed32 = 5
};

/**
 * \brief Sequential reader over a byte range (not owned). Offsets in errors count from the
 * start of the outermost buffer (\p base).
 */
class WireReader
{
  public:
    /// Read \p data; \p base is the offset of data[0] in the enclosing buffer (for errors).
    explicit WireReader(std::string_view data, uint64_t base = 0);

    /// True when every byte has been consumed.
    bool AtEnd() const
    {
        return m_pos >= m_data.size();
    }

    /// Offset of the next byte in the enclosing buffer.
    uint64_t Offset() const
    {
        return m_base + m_pos;
    }

    /// A base-128 varint of at most 10 bytes.
    uint64_t ReadVarint();

    /// A field key: field number and wire type. Field number 0 and wire types 3, 4, 6, 7
    /// (groups and undefined) are errors.
    void ReadTag(uint32_t& field, WireType& type);

    /// A length-delimited payload (the returned view points into the buffer).
    std::string_view ReadBytes();

    /// A little-endian fixed 64-bit value.
    uint64_t ReadFixed64();

    /// A little-endian fixed 32-bit value.
    uint32_t ReadFixed32();

    /// Skip the value of a field of wire type \p type.
    void Skip(WireType type);

    /// Throws WireError with \p what at the current offset.
    [[noreturn]] void Fail(const std::string& what) const;

  private:
    std::string_view m_data;
    uint64_t m_base;
    size_t m_pos = 0;
};

/// Zig-zag decoding of sint32 / sint64 values.
int64_t ZigZagDecode(uint64_t v);

/// Zig-zag encoding of sint32 / sint64 values.
uint64_t ZigZagEncode(int64_t v);

/**
 * \brief Appends protobuf fields to a byte string. Proto3 rules: callers skip default values
 * themselves where the format wants them left out.
 */
class WireWriter
{
  public:
    /// Append a varint (no tag).
    void Varint(uint64_t v);

    /// Append a field key (no value).
    void Tag(uint32_t field, WireType type);

    /// Append a little-endian fixed 64-bit value (no tag).
    void Fixed64(uint64_t v);

    /// Append a little-endian fixed 32-bit value (no tag).
    void Fixed32(uint32_t v);

    /// Field \p field as a varint.
    void VarintField(uint32_t field, uint64_t v);

    /// Field \p field as length-delimited bytes.
    void BytesField(uint32_t field, std::string_view bytes);

    /// Field \p field as a little-endian fixed 64-bit value.
    void Fixed64Field(uint32_t field, uint64_t v);

    /// Field \p field as a little-endian fixed 32-bit value.
    void Fixed32Field(uint32_t field, uint32_t v);

    /// The bytes written so far.
    const std::string& Bytes() const
    {
        return m_out;
    }

  private:
    std::string m_out;
};

/**
 * \brief Iterates the messages of a stream where each message is preceded by its length as a
 * varint (the framing Chakra and protobuf's writeDelimitedTo use).
 */
class DelimitedStreamReader
{
  public:
    /// Read from \p data (not owned).
    explicit DelimitedStreamReader(std::string_view data);

    /// The next message, or false at a clean end of the stream. WireError on a truncated
    /// length or message.
    bool Next(std::string_view& message);

    /// Offset of the next length prefix.
    uint64_t Offset() const
    {
        return m_reader.Offset();
    }

  private:
    WireReader m_reader;
};

/// Append \p message to \p stream with its varint length in front.
void AppendDelimited(std::string& stream, const std::string& message);

} // namespace fabricsim

#endif
