/*
 * Import of the HPCC ns-3 simulator's topology.txt:
 *   N S L              nodes, switches, links
 *   id id ...          the S switch node ids
 *   src dst rate delay error_rate   (L lines)
 * Nodes not listed as switches are hosts, numbered in ascending node id.
 */
#include "input-error.h"
#include "topology-json.h"
#include "units.h"

#include <sstream>
#include <tuple>
#include <vector>

namespace fabricsim
{

namespace
{

/// Reads non-blank lines and remembers their 1-based line numbers for error messages.
class TokenLines
{
  public:
    explicit TokenLines(std::istream& in)
        : m_in(in)
    {
    }

    /// Next non-blank line split into tokens; false at end of input.
    bool Next(std::vector<std::string>& tokens)
    {
        std::string line;
        while (std::getline(m_in, line))
        {
            ++m_line;
            if (!line.empty() && line.back() == '\r')
            {
                line.pop_back(); // files written on Windows
            }
            std::istringstream ss(line);
            tokens.clear();
            std::string tok;
            while (ss >> tok)
            {
                tokens.push_back(tok);
            }
            if (!tokens.empty())
            {
                m_text = line;
                return true;
            }
        }
        return false;
    }

    std::string Field() const
    {
        return "line " + std::to_string(m_line);
    }

    std::string Found() const
    {
        return "\"" + (m_text.size() > 60 ? m_text.substr(0, 57) + "..." : m_text) + "\"";
    }

  private:
    std::istream& m_in;
    uint64_t m_line = 0;
    std::string m_text;
};

/// Strict non-negative integer below `limit`; false on anything else.
bool
ParseIndex(const std::string& tok, uint64_t limit, uint32_t& out)
{
    if (tok.empty() || tok.size() > 10 || tok.find_first_not_of("0123456789") != std::string::npos)
    {
        return false;
    }
    const uint64_t v = std::stoull(tok);
    if (v >= limit)
    {
        return false;
    }
    out = static_cast<uint32_t>(v);
    return true;
}

} // namespace

Topology
ParseHpccTopology(std::istream& in, const std::string& file)
{
    TokenLines r(in);
    std::vector<std::string> tok;
    if (!r.Next(tok))
    {
        throw fabricsim::InputError(file, "line 1", "\"nodes switches links\"", "an empty file");
    }
    uint32_t numNodes = 0;
    uint32_t numSwitches = 0;
    uint32_t numLinks = 0;
    if (tok.size() != 3 || !ParseIndex(tok[0], 10000001, numNodes)
        || !ParseIndex(tok[1], uint64_t(numNodes) + 1, numSwitches)
        || !ParseIndex(tok[2], 100000001, numLinks) || numNodes == 0)
    {
        throw fabricsim::InputError(
            file, r.Field(), "\"nodes switches links\" (3 integers, switches <= nodes)", r.Found());
    }
    // A connected fabric of n nodes has at least n - 1 links. Checked before anything is built,
    // so that a declared node count is backed by the file's own lines (a 2.4-million-node header
    // over four links once took seconds to build and tear down).
    if (uint64_t(numLinks) + 1 < numNodes)
    {
        throw fabricsim::InputError(file,
                                    "line 1",
                                    "at least nodes - 1 = " + std::to_string(numNodes - 1)
                                        + " links (a connected fabric)",
                                    std::to_string(numLinks) + " links");
    }
    std::vector<bool> isSwitch(numNodes, false);
    if (numSwitches > 0)
    {
        if (!r.Next(tok))
        {
            throw fabricsim::InputError(file, "line 2", "the switch node ids", "end of file");
        }
        if (tok.size() != numSwitches)
        {
            throw fabricsim::InputError(file,
                                        r.Field(),
                                        std::to_string(numSwitches) + " switch node ids",
                                        std::to_string(tok.size()) + " fields: " + r.Found());
        }
        for (const auto& s : tok)
        {
            uint32_t id = 0;
            if (!ParseIndex(s, numNodes, id) || isSwitch[id])
            {
                throw fabricsim::InputError(file,
                                            r.Field(),
                                            "distinct switch node ids in [0, "
                                                + std::to_string(numNodes - 1) + "]",
                                            "\"" + s + "\"");
            }
            isSwitch[id] = true;
        }
    }
    const std::string linkFormat = "\"src dst rate delay error_rate\"";
    // The links are read before the nodes are made: the node count is held to the lines read.
    std::vector<std::tuple<uint32_t, uint32_t, LinkSpec>> links;
    for (uint32_t i = 0; i < numLinks; ++i)
    {
        if (!r.Next(tok))
        {
            throw fabricsim::InputError(file,
                                        "line 1",
                                        std::to_string(numLinks) + " link lines",
                                        "only " + std::to_string(i));
        }
        uint32_t a = 0;
        uint32_t b = 0;
        if (tok.size() != 5)
        {
            throw fabricsim::InputError(file, r.Field(), linkFormat + " (5 fields)", r.Found());
        }
        if (!ParseIndex(tok[0], numNodes, a) || !ParseIndex(tok[1], numNodes, b) || a == b)
        {
            throw fabricsim::InputError(file,
                                        r.Field(),
                                        "two distinct node ids in [0, "
                                            + std::to_string(numNodes - 1) + "]",
                                        r.Found());
        }
        LinkSpec spec;
        spec.rateBps = ParseRate(nlohmann::json(tok[2]), file, r.Field());
        spec.delayPs = ParseDelay(nlohmann::json(tok[3]), file, r.Field());
        char* end = nullptr;
        spec.lossRate = std::strtod(tok[4].c_str(), &end);
        if (*end != '\0' || !(spec.lossRate >= 0 && spec.lossRate <= 1))
        {
            throw fabricsim::InputError(
                file, r.Field(), "an error_rate in [0, 1]", "\"" + tok[4] + "\"");
        }
        links.emplace_back(a, b, spec);
    }
    if (r.Next(tok))
    {
        throw fabricsim::InputError(file,
                                    r.Field(),
                                    "end of file after the " + std::to_string(numLinks)
                                        + " links declared on line 1",
                                    r.Found());
    }
    Topology t;
    t.type = "hpcc-file";
    for (uint32_t id = 0; id < numNodes; ++id)
    {
        if (isSwitch[id])
        {
            t.AddSwitch("sw" + std::to_string(id), 0);
        }
        else
        {
            t.AddHost("host" + std::to_string(id), t.NumHosts());
        }
    }
    for (const auto& [a, b, spec] : links)
    {
        t.AddLink(a, b, spec);
    }
    return t;
}

} // namespace fabricsim
