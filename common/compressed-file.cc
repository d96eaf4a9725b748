#include "compressed-file.h"

#include "file-reader.h"
#include "input-error.h"

#include <zlib.h>

#include <climits>

namespace fabricsim
{

bool
IsGzip(std::string_view bytes)
{
    return bytes.size() >= 2 && uint8_t(bytes[0]) == 0x1f && uint8_t(bytes[1]) == 0x8b;
}

std::string
Gunzip(std::string_view bytes, const std::string& file, uint64_t maxBytes)
{
    z_stream zs{};
    // 16 + MAX_WBITS: gzip wrapper only.
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
    {
        throw fabricsim::InputError(file, "", "a gzip stream", "zlib could not start");
    }
    std::string out;
    char buf[1 << 16];
    size_t pos = 0;
    int rc = Z_OK;
    while (true)
    {
        if (zs.avail_in == 0 && pos < bytes.size())
        {
            const size_t n = std::min<size_t>(bytes.size() - pos, UINT_MAX);
            zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + pos));
            zs.avail_in = uInt(n);
            pos += n;
        }
        zs.next_out = reinterpret_cast<Bytef*>(buf);
        zs.avail_out = sizeof buf;
        rc = inflate(&zs, Z_NO_FLUSH);
        out.append(buf, sizeof buf - zs.avail_out);
        if (out.size() > maxBytes)
        {
            inflateEnd(&zs);
            throw fabricsim::InputError(file,
                                        "",
                                        "at most " + std::to_string(maxBytes)
                                            + " bytes once decompressed",
                                        "more");
        }
        if (rc == Z_STREAM_END)
        {
            // Another gzip member may follow (cat a.gz b.gz); trailing zero padding is allowed.
            const size_t left = zs.avail_in + (bytes.size() - pos);
            const size_t at = bytes.size() - left;
            if (left == 0 || bytes.find_first_not_of('\0', at) == std::string_view::npos)
            {
                break;
            }
            if (!IsGzip(bytes.substr(at)))
            {
                inflateEnd(&zs);
                throw fabricsim::InputError(
                    file, "", "gzip members only", "trailing bytes after the stream");
            }
            inflateReset(&zs);
            continue;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR)
        {
            const std::string why = zs.msg ? zs.msg : "error " + std::to_string(rc);
            inflateEnd(&zs);
            throw fabricsim::InputError(
                file, "", "a valid gzip stream", "corrupt data (" + why + ")");
        }
        if (rc == Z_BUF_ERROR && zs.avail_in == 0 && pos >= bytes.size())
        {
            inflateEnd(&zs);
            throw fabricsim::InputError(file, "", "a complete gzip stream", "truncated data");
        }
    }
    inflateEnd(&zs);
    return out;
}

std::string
ReadMaybeGzipFile(const std::string& path, const std::string& what, const FileLimits& limits)
{
    // Only the compressed bytes may be anything; the text is text either way.
    if (IsGzip(ReadFileHead(path, what, 2)))
    {
        FileLimits raw = kBinaryDataFileLimits;
        raw.maxBytes = limits.maxBytes;
        std::string text = Gunzip(ReadFileBounded(path, what, raw), path, limits.maxBytes);
        if (text.find('\0') != std::string::npos)
        {
            throw fabricsim::InputError(
                path, "", what + " (text once decompressed)", "a zero byte");
        }
        return text;
    }
    FileLimits text = limits;
    text.binary = false;
    return ReadFileBounded(path, what, text);
}

} // namespace fabricsim
