#include "output-dir.h"

#include "input-error.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace fabricsim
{

OutputDir::OutputDir(const std::string& dir)
    : m_dir(dir)
{
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
    {
        throw fabricsim::InputError(
            dir, "--out", "a directory that can be created", ec ? ec.message() : "not a directory");
    }
    m_stage = dir + "/.partial-" + std::to_string(getpid());
    fs::remove_all(m_stage, ec);
    fs::create_directories(m_stage, ec);
    if (ec)
    {
        throw fabricsim::InputError(dir, "--out", "a writable directory", ec.message());
    }
}

OutputDir::~OutputDir()
{
    if (!m_committed)
    {
        std::error_code ec;
        fs::remove_all(m_stage, ec);
    }
}

std::string
OutputDir::Path(const std::string& name) const
{
    return m_stage + "/" + name;
}

void
OutputDir::Commit()
{
    for (auto& e : fs::directory_iterator(m_stage))
    {
        fs::path target = fs::path(m_dir) / e.path().filename();
        std::error_code ec;
        fs::remove_all(target, ec);
        fs::rename(e.path(), target);
    }
    fs::remove_all(m_stage);
    m_committed = true;
}

void
WriteFileAtomic(const std::string& path, const std::string& text)
{
    std::string tmp = path + ".tmp";
    {
        std::ofstream o(tmp, std::ios::binary);
        o << text;
        if (!o)
        {
            throw fabricsim::InputError(path, "", "a writable output file", "write failed");
        }
    }
    fs::rename(tmp, path);
}

} // namespace fabricsim
