/*
 * Whole-file text I/O for schedule formats: reading reports unreadable files as
 * fabricsim::InputError; writing goes through a temporary file and a rename so that no partial file
 * is ever left behind under the final name.
 */
#ifndef FABRICSIM_TEXT_FILE_H
#define FABRICSIM_TEXT_FILE_H

#include <string>

namespace fabricsim
{

/// Contents of \p path. Throws fabricsim::InputError(path, "", "a readable file", reason).
std::string ReadTextFile(const std::string& path);

/// Writes \p content to \p path atomically. Throws std::runtime_error on I/O failure.
void WriteTextFileAtomic(const std::string& path, const std::string& content);

} // namespace fabricsim

#endif
