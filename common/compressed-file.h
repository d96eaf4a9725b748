/*
 * Reads input files that may be gzip-compressed (torch.profiler writes .json.gz; data/ ships
 * large measurement tables as .csv.gz): the gzip magic bytes decide, not the file name. The
 * decompressed size is capped so a small malicious file cannot exhaust memory.
 */
#ifndef FABRICSIM_COMMON_COMPRESSED_FILE_H
#define FABRICSIM_COMMON_COMPRESSED_FILE_H

#include "file-reader.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace fabricsim
{

/// Default cap on decompressed bytes (4 GiB).
constexpr uint64_t kMaxDecompressedBytes = 4ULL << 30;

/// True when \p bytes start with the gzip magic (1f 8b).
bool IsGzip(std::string_view bytes);

/**
 * Decompress a gzip stream (concatenated members allowed).
 * \throws fabricsim::InputError naming \p file on corrupt or truncated data or when the output
 * would exceed \p maxBytes
 */
std::string Gunzip(std::string_view bytes,
                   const std::string& file,
                   uint64_t maxBytes = kMaxDecompressedBytes);

/**
 * \brief The text of \p path (\p what says what it should be, for errors), decompressed when
 * it is gzip. \p limits.maxBytes bounds the text either way; a zero byte in it is refused, in a
 * plain file as in a compressed one. InputError when unreadable.
 */
std::string ReadMaybeGzipFile(const std::string& path,
                              const std::string& what = "trace file",
                              const FileLimits& limits = kDataFileLimits);

} // namespace fabricsim

#endif
