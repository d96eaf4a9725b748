/*
 * JSON form of the schedule IR (format described in docs/schedule-ir.md).
 */
#ifndef FABRICSIM_SCHEDULE_JSON_H
#define FABRICSIM_SCHEDULE_JSON_H

#include "schedule-ir.h"

#include <string>

namespace fabricsim
{

/// Value of the "format" member every schedule JSON document carries.
extern const char* const kScheduleJsonFormat;

/**
 * Parses a schedule from JSON text. Throws fabricsim::InputError naming \p fileName, the JSON path
 * of the offending field (e.g. "ranks[2].threadblocks[0].steps[3].type"), what was expected and
 * what was found.
 */
Schedule ParseScheduleJson(const std::string& text, const std::string& fileName);

/// Reads and parses a schedule JSON file (throws fabricsim::InputError, also when unreadable).
Schedule ReadScheduleJsonFile(const std::string& path);

/// Serialises a schedule as JSON (\p indent spaces per level; -1 = one line).
std::string WriteScheduleJson(const Schedule& schedule, int indent = 1);

/// Writes WriteScheduleJson(schedule) to \p path atomically.
void WriteScheduleJsonFile(const Schedule& schedule, const std::string& path);

} // namespace fabricsim

#endif
