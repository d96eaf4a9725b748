/*
 * SHA-256 (FIPS 180-4), for the digests provenance.json gives of a command's input files.
 */
#ifndef FABRICSIM_COMMON_SHA256_H
#define FABRICSIM_COMMON_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace fabricsim
{

/// Incremental SHA-256: Update with the bytes in order, then HexDigest once.
class Sha256
{
  public:
    Sha256();

    void Update(const void* data, size_t size);

    /// The digest as 64 lower-case hex digits; the object is spent afterwards.
    std::string HexDigest();

  private:
    void Block(const uint8_t* block);

    std::array<uint32_t, 8> m_state;
    std::array<uint8_t, 64> m_buffer{};
    size_t m_buffered = 0;
    uint64_t m_bytes = 0;
};

/// SHA-256 of \p data as hex.
std::string Sha256Hex(const std::string& data);

/// SHA-256 of the contents of the regular file \p path as hex, read in blocks; "" when it cannot
/// be read.
std::string Sha256OfFile(const std::string& path);

} // namespace fabricsim

#endif
