/*
 * Whole-file output for schedule formats: writing goes through a temporary file and a rename so
 * that no partial file is ever left behind under the final name. (Reading is common/file-reader.)
 */
#ifndef FABRICSIM_TEXT_FILE_H
#define FABRICSIM_TEXT_FILE_H

#include <string>

namespace fabricsim
{

/// Writes \p content to \p path atomically. Throws std::runtime_error on I/O failure.
void WriteTextFileAtomic(const std::string& path, const std::string& content);

} // namespace fabricsim

#endif
