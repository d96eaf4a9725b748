#ifndef FABRICSIM_CLI_OPTIONS_H
#define FABRICSIM_CLI_OPTIONS_H

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace fabricsim
{

/// The "file" named by errors in command-line arguments.
inline constexpr const char* kCommandLineSource = "<command line>";

/// If args[i] is the option opt, given as "opt value" or "opt=value", stores the value, advances
/// i past what it consumed and returns true. An option with no value after it is an InputError.
bool TakeOption(const std::vector<std::string>& args,
                size_t& i,
                const std::string& opt,
                std::string& value);

/// The value \p v of option \p opt as an integer from \p min to 1,000,000; InputError naming
/// the option.
int IntOption(const std::string& v, const std::string& opt, int min);

/// The value \p v of option \p opt as an integer in [lo, hi]; InputError naming the option.
uint64_t CountOption(const std::string& v, const std::string& opt, uint64_t lo, uint64_t hi);

/// --memo's value: "on", "off", "verify" (every 10th hit) or "verify=N" (every Nth hit):
/// \p memo true for "on", \p verify N for verify and 0 otherwise. InputError for anything else.
void ParseMemoOption(const std::string& v, bool& memo, uint32_t& verify);

/// True, after saying so on \p err, when the memo's figures (CollectiveMemoStats::ToJson)
/// show verification found a hit that disagreed with simulation: the outputs are simulated
/// (verified hits are not replayed), but the memo would have changed them, a bug to report.
bool MemoDisagreed(const nlohmann::json& memo, std::ostream& err);

/// \p v with \p digits decimals ("%.*f"), as the commands' tables print figures.
std::string Fixed(double v, int digits);

/// \p pct as "+12.3%" ("+inf" / "-inf" when not finite), as the commands' tables print errors.
std::string SignedPercent(double pct);

} // namespace fabricsim

#endif
