/*
 * The one way outputs are written. A run's files are staged in DIR/.partial-<pid> and moved into
 * DIR only when the run has finished and every file was written in full, so a failed, interrupted
 * or disk-full run never leaves files that look complete. DIR/.fabricsim-outputs lists what the
 * last run wrote, so that a new run into the same DIR removes the older run's files it did not
 * write again (and nothing else). A single file is written to a temporary name beside it and
 * renamed into place.
 */
#ifndef FABRICSIM_COMMON_OUTPUT_WRITER_H
#define FABRICSIM_COMMON_OUTPUT_WRITER_H

#include <fstream>
#include <map>
#include <memory>
#include <string>

namespace fabricsim
{

/**
 * \brief \p text into \p path, whole or not at all: written to a temporary file in the same
 * directory and renamed over \p path. \throws InputError naming \p path when it cannot be.
 */
void WriteFileAtomic(const std::string& path, const std::string& text);

/**
 * \brief From now on SIGINT and SIGTERM remove the staging folder of every OutputDir not yet
 * committed (and a DIR it created, left empty) and end the process with 128 + the signal (130,
 * 143), as shells report it. Call once, first thing in main, before any thread starts: it blocks
 * the two signals and waits for them in a thread of its own.
 */
void RemovePartialOutputOnSignals();

/// Removes every staging folder not yet committed (and the DIRs their runs created), now: for a
/// process about to end abnormally. Best effort, never throws; skips when another thread holds
/// the list.
void RemovePartialOutputNow() noexcept;

/**
 * \brief An output directory whose files appear together when the run commits.
 */
class OutputDir
{
  public:
    /// Creates \p dir (and parents) and the staging folder; InputError naming \p field (the
    /// option that gave the directory) when it cannot.
    explicit OutputDir(const std::string& dir, const std::string& field = "--out");
    /// Removes the staging folder (and what was staged) unless Commit succeeded, and DIR when this
    /// created it and it is empty.
    ~OutputDir();
    OutputDir(const OutputDir&) = delete;
    OutputDir& operator=(const OutputDir&) = delete;

    /// Path of \p name inside the staging folder.
    std::string Path(const std::string& name) const;

    /// Stages \p name with \p text. \throws InputError when it cannot be written.
    void Write(const std::string& name, const std::string& text);

    /// A stream that stages \p name, for output written as the run goes; its errors are found
    /// at Commit. The same name gives the same stream.
    std::ostream& Stream(const std::string& name);

    /// Closes the streams, checks that every staged file was written in full, moves them into
    /// the directory (replacing older files of the same names) and removes the files of the
    /// previous run into it that this one did not write.
    /// \throws InputError naming the file that failed; nothing is moved then
    void Commit();

    const std::string& Dir() const
    {
        return m_dir;
    }

  private:
    std::string m_dir;
    std::string m_field;
    std::string m_stage;
    bool m_createdDir = false; ///< DIR did not exist before
    std::map<std::string, std::unique_ptr<std::ofstream>> m_streams;
    bool m_committed = false;
};

} // namespace fabricsim

#endif
