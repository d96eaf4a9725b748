/*
 * MSCCL XML import and export for the schedule IR.
 *
 *   <algo name proto nchannels nchunksperloop ngpus coll inplace [outofplace minBytes ...]>
 *     <gpu id i_chunks o_chunks s_chunks>
 *       <copy i_off o_off/>                       (TE-CCL extension, optional)
 *       <tb id send recv chan>
 *         <step s type srcbuf srcoff dstbuf dstoff cnt depid deps hasdep/>
 *
 * depid/deps may hold comma-separated lists for several dependencies. Unknown algo attributes
 * are kept verbatim in Schedule::m_attributes and written back on export.
 */
#ifndef FABRICSIM_MSCCL_XML_H
#define FABRICSIM_MSCCL_XML_H

#include "schedule-ir.h"

#include <string>
#include <vector>

namespace fabricsim
{

/// Every <algo> of one MSCCL file, plus warnings about content that was skipped.
struct MscclDocument
{
    std::vector<Schedule> m_schedules;   ///< one per <algo>, in file order (at least one)
    std::vector<std::string> m_warnings; ///< e.g. trailing text, unknown elements
};

/**
 * Parses MSCCL XML text. Throws fabricsim::InputError naming \p fileName, the line and the field on
 * malformed XML, missing or non-numeric attributes, or unknown step types / buffers.
 */
MscclDocument ParseMscclXml(const std::string& text, const std::string& fileName);

/// Reads and parses an MSCCL XML file (throws fabricsim::InputError, also when unreadable).
MscclDocument ReadMscclXmlFile(const std::string& path);

/// Reads an MSCCL XML file and returns its first <algo>.
Schedule ReadMscclXml(const std::string& path);

/// Serialises any schedule as MSCCL XML (msccl-tools layout, 2-space indent).
std::string WriteMscclXml(const Schedule& schedule);

/// Writes WriteMscclXml(schedule) to \p path atomically (temp file + rename).
void WriteMscclXmlFile(const Schedule& schedule, const std::string& path);

} // namespace fabricsim

#endif
