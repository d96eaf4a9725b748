/*
 * fabricsim's own recorded traces (the JSON-lines step programs a serving run records with
 * --record) as an imported trace, so they replay like any other and export to Chakra for
 * ASTRA-sim. Each rank's steps follow one another in launch order; within a step, items keep
 * their streams, async communication is waited where the program waits for it, and a
 * collective's key matches it across ranks.
 */
#ifndef FABRICSIM_TRACES_PROGRAM_TRACE_IMPORT_H
#define FABRICSIM_TRACES_PROGRAM_TRACE_IMPORT_H

#include "trace-ir.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fabricsim
{

/**
 * Import the records of a program trace ("step" and "transfer" objects).
 * \throws fabricsim::InputError naming \p file and "line N" on a malformed record
 */
ImportedTrace ImportProgramRecords(const std::vector<nlohmann::json>& records,
                                   const std::string& file);

/// Read a JSON-lines program trace and import it.
ImportedTrace ImportProgramTrace(const std::string& path);

/**
 * True when \p head, the first bytes of a file, begins a program trace: its first line is a
 * program-trace record ({"type": "step" | "transfer", ...}), or, where that line runs past the
 * head (a step of many ranks is megabytes), it opens as `fabricsim run --record` writes every
 * record, with the key "deps" (keys sorted), which no profiler trace starts with.
 */
bool LooksLikeProgramTrace(const std::string& head);

} // namespace fabricsim

#endif
