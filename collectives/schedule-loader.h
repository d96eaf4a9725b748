/*
 * Loads schedule files of either format: MSCCL XML (.xml) or the JSON IR (.json); other
 * extensions are recognised by their first non-blank character.
 */
#ifndef FABRICSIM_SCHEDULE_LOADER_H
#define FABRICSIM_SCHEDULE_LOADER_H

#include "msccl-xml.h"

#include <string>

namespace fabricsim
{

/**
 * Reads \p path. A JSON file yields one schedule; an MSCCL XML file one per <algo>.
 * Throws fabricsim::InputError (file, field, expected, found) when unreadable or malformed.
 */
MscclDocument LoadScheduleFile(const std::string& path);

} // namespace fabricsim

#endif
