#include "provenance.h"

#include "sha256.h"

#include <filesystem>

namespace fabricsim
{

namespace
{

thread_local ProvenanceScope* t_current = nullptr;

} // namespace

ProvenanceScope::ProvenanceScope(std::vector<std::string> command)
    : m_command(std::move(command))
    , m_outer(t_current)
{
    t_current = this;
}

ProvenanceScope::~ProvenanceScope()
{
    t_current = m_outer;
}

ProvenanceScope*
ProvenanceScope::Current()
{
    return t_current;
}

void
ProvenanceScope::RecordInput(const std::string& path)
{
    if (t_current && t_current->m_seen.insert(path).second)
    {
        t_current->m_inputs.push_back(path);
    }
}

std::string
FabricsimVersion()
{
#ifdef FABRICSIM_VERSION
    return FABRICSIM_VERSION;
#else
    return "unknown";
#endif
}

std::string
PortablePath(const std::string& path, const std::string& sourceDir)
{
    namespace fs = std::filesystem;
    const fs::path p(path);
    if (!p.is_absolute())
    {
        return path;
    }
    const fs::path normal = p.lexically_normal();
    if (!sourceDir.empty())
    {
        const fs::path rel = normal.lexically_relative(fs::path(sourceDir).lexically_normal());
        if (!rel.empty() && *rel.begin() != "..")
        {
            return "<fabricsim>/" + rel.string();
        }
    }
    std::error_code ec;
    const fs::path cwd = fs::current_path(ec);
    return ec ? normal.filename().string() : normal.lexically_relative(cwd).string();
}

nlohmann::json
ProvenanceJson(const nlohmann::json& scenario,
               const std::vector<std::string>& attributeOverrides,
               const std::string& sourceDir)
{
    const ProvenanceScope* scope = ProvenanceScope::Current();
    nlohmann::json inputs = nlohmann::json::array();
    if (scope)
    {
        for (const std::string& path : scope->Inputs())
        {
            inputs.push_back(
                {{"path", PortablePath(path, sourceDir)}, {"sha256", Sha256OfFile(path)}});
        }
    }
    return {{"fabricsim_version", FabricsimVersion()},
            {"command", scope ? scope->Command() : std::vector<std::string>{}},
            {"scenario", scenario},
            {"attribute_overrides", attributeOverrides},
            {"inputs", inputs}};
}

} // namespace fabricsim
