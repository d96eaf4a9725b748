/*
 * Writes a run's files into DIR/.partial-<pid> and moves them into DIR only when the run
 * finished, so a failed or interrupted run never leaves files that look complete.
 */
#ifndef FABRICSIM_OUTPUT_DIR_H
#define FABRICSIM_OUTPUT_DIR_H

#include <string>
#include <vector>

namespace fabricsim
{

class OutputDir
{
  public:
    /// Creates DIR (and parents) and the staging folder; throws InputError if it cannot.
    explicit OutputDir(const std::string& dir);
    /// Removes the staging folder if Commit was not called.
    ~OutputDir();

    /// Path of `name` inside the staging folder.
    std::string Path(const std::string& name) const;
    /// Move every staged file into DIR (replacing older ones) and remove the staging folder.
    void Commit();

    const std::string& Dir() const
    {
        return m_dir;
    }

  private:
    std::string m_dir;
    std::string m_stage;
    bool m_committed = false;
};

/// Write `text` to `path` via a temporary file and rename (atomic on POSIX).
void WriteFileAtomic(const std::string& path, const std::string& text);

} // namespace fabricsim

#endif
