/*
 * The one JSON layer every input goes through: a parser that rejects duplicate keys and nesting
 * past a limit (a second "rate" silently replacing the first, or a file of ten thousand '[',
 * are bad input, not values), and typed reads of an object's fields with one set of rules:
 *
 *  - a field path is written `a.b[2].c`, as in the docs and `--set key.path=value`;
 *  - a key whose value is null counts as absent (configuration files, Hugging Face's among them,
 *    write null for "not set");
 *  - an integer may be written as a whole float (4.0) up to 2^53, where doubles stop being exact;
 *    integer literals hold the whole 64-bit range;
 *  - numbers are finite and within the range the model can hold;
 *  - every error is an InputError naming the file, the field, what was expected and what was
 *    found.
 */
#ifndef FABRICSIM_COMMON_JSON_READER_H
#define FABRICSIM_COMMON_JSON_READER_H

#include "file-reader.h"
#include "units.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricsim
{

/// What the parser accepts.
struct JsonLimits
{
    uint32_t maxDepth = 128; ///< objects and arrays nested at most this deep
};

/**
 * \brief Parse \p text as the contents of \p file (at \p path inside it: "line 3" of a JSON-lines
 * file, or "" for a whole file). Malformed text, a key twice in one object and nesting deeper
 * than \p limits are InputErrors naming the file and the path ("line 3.a.b" for the last two).
 */
nlohmann::json ParseJson(std::string_view text,
                         const std::string& file,
                         const std::string& path = "",
                         const JsonLimits& limits = {});

/**
 * \brief The records of a JSON-lines file (one value per line; blank lines skipped), read
 * within \p limits; errors name the file and "line N". \p what says what the file should be.
 */
std::vector<nlohmann::json> ReadJsonLines(const std::string& path,
                                          const std::string& what,
                                          const FileLimits& limits = kDataFileLimits);

/**
 * \brief The candidate \p name is most likely a misspelling of: the nearest by edit distance
 * (case ignored), if within a third of its length (at least 1, at most 3 edits); else "".
 */
std::string NearestName(const std::string& name, const std::vector<std::string>& candidates);

/// " (did you mean \"x\"?)" for the NearestName of \p name, or "".
std::string DidYouMean(const std::string& name, const std::vector<std::string>& candidates);

/// The path of \p key inside \p parent: "a.b" + "c" = "a.b.c"; at the root just "c".
std::string JsonPath(const std::string& parent, const std::string& key);
/// The path of element \p i of the array at \p parent: "a.b[2]".
std::string JsonIndex(const std::string& parent, size_t i);

/**
 * \brief Typed reads of the fields of one JSON object (see the file comment for the rules).
 * Holds a reference: the JSON value must outlive it.
 */
class JsonObject
{
  public:
    /// \p value must be an object; InputError naming \p path otherwise.
    JsonObject(const nlohmann::json& value, std::string file, std::string path);

    const nlohmann::json& Json() const
    {
        return *m_value;
    }

    const std::string& File() const
    {
        return m_file;
    }

    /// Path of this object ("" at the root).
    const std::string& Path() const
    {
        return m_path;
    }

    /// Path of field \p key.
    std::string Field(const std::string& key) const;

    /// The value of \p key, or nullptr when absent or null.
    const nlohmann::json* Find(const std::string& key) const;

    bool Has(const std::string& key) const
    {
        return Find(key) != nullptr;
    }

    /// Reject every key not in \p known, naming the first unknown one and listing the known
    /// (with \p note after them when given: why a key is not allowed here).
    void CheckKeys(const std::vector<std::string>& known, const std::string& note = "") const;

    /// The object at \p key (required).
    JsonObject Object(const std::string& key) const;
    /// The object at \p key, or nothing when absent.
    std::optional<JsonObject> OptionalObject(const std::string& key) const;

    /// Integer in [\p min, \p max] (required).
    uint64_t Uint(const std::string& key, uint64_t min = 0, uint64_t max = UINT64_MAX) const;
    /// Integer in [\p min, \p max], \p def when absent.
    uint64_t OptionalUint(const std::string& key,
                          uint64_t def,
                          uint64_t min = 0,
                          uint64_t max = UINT64_MAX) const;

    /// Signed integer in [\p min, \p max] (required).
    int64_t Int(const std::string& key, int64_t min, int64_t max) const;
    /// Signed integer in [\p min, \p max], \p def when absent.
    int64_t OptionalInt(const std::string& key, int64_t def, int64_t min, int64_t max) const;

    /// The array at \p key (required).
    const nlohmann::json& Array(const std::string& key) const;
    /// The array at \p key as integers in [\p min, \p max]; empty when absent and not
    /// \p required.
    std::vector<uint64_t> UintArray(const std::string& key,
                                    bool required,
                                    uint64_t min = 0,
                                    uint64_t max = UINT64_MAX) const;

    /// Finite number in [\p lo, \p hi] (required).
    double Number(const std::string& key, double lo, double hi) const;
    /// Finite number in [\p lo, \p hi], \p def when absent.
    double OptionalNumber(const std::string& key, double def, double lo, double hi) const;

    /// A quantity with units of \p kind in base units (see ReadQuantity in units.h), > 0
    /// (>= 0 when \p allowZero); required.
    double Quantity(const std::string& key, UnitKind kind, bool allowZero = false) const;
    /// As Quantity, \p def when absent.
    double OptionalQuantity(const std::string& key,
                            UnitKind kind,
                            double def,
                            bool allowZero = false) const;

    /// true or false (required).
    bool Bool(const std::string& key) const;
    /// true or false, \p def when absent.
    bool OptionalBool(const std::string& key, bool def) const;

    /// A string (required).
    std::string String(const std::string& key) const;
    /// A string, \p def when absent.
    std::string OptionalString(const std::string& key, const std::string& def) const;

    /// The value at \p key (required, any type); \p expected says what it should be.
    const nlohmann::json& Require(const std::string& key, const std::string& expected) const;

    /// Throws InputError(file, Field(key), expected, found).
    [[noreturn]] void Fail(const std::string& key,
                           const std::string& expected,
                           const std::string& found) const;

    /// \p v as a non-negative integer by the rules above, or nothing: for metadata read
    /// leniently (profiler arguments that may be absent or of another type).
    static std::optional<uint64_t> AsUint(const nlohmann::json& v);
    /// Member \p key of \p obj read leniently as AsUint does; nothing when \p obj is not an
    /// object or the member is absent or not such an integer.
    static std::optional<uint64_t> MemberUint(const nlohmann::json& obj, const std::string& key);
    /// Member \p key of \p obj when it is a string, else "" (lenient, as MemberUint).
    static std::string MemberString(const nlohmann::json& obj, const std::string& key);
    /// \p v as an integer in [\p min, \p max] by the rules above; errors name \p field.
    static uint64_t ToUint(const nlohmann::json& v,
                           const std::string& file,
                           const std::string& field,
                           uint64_t min = 0,
                           uint64_t max = UINT64_MAX);
    /// \p v as a signed integer in [\p min, \p max]; errors name \p field.
    static int64_t ToInt(const nlohmann::json& v,
                         const std::string& file,
                         const std::string& field,
                         int64_t min,
                         int64_t max);
    /// \p v as a finite number in [\p lo, \p hi]; errors name \p field.
    static double ToNumber(const nlohmann::json& v,
                           const std::string& file,
                           const std::string& field,
                           double lo,
                           double hi);

  private:
    const nlohmann::json* m_value;
    std::string m_file;
    std::string m_path;
};

} // namespace fabricsim

#endif
