#include "contribution-set.h"

#include <algorithm>
#include <iterator>

namespace fabricsim
{

ContributionSet
ContributionSet::Single(int rank, int chunk)
{
    ContributionSet s;
    s.m_items.push_back(Key(rank, chunk));
    return s;
}

void
ContributionSet::Add(int rank, int chunk)
{
    const uint64_t k = Key(rank, chunk);
    m_items.insert(std::upper_bound(m_items.begin(), m_items.end(), k), k);
}

void
ContributionSet::Merge(const ContributionSet& other)
{
    if (other.m_items.empty())
    {
        return;
    }
    if (m_items.empty())
    {
        m_items = other.m_items;
        return;
    }
    std::vector<uint64_t> merged;
    merged.reserve(m_items.size() + other.m_items.size());
    std::merge(m_items.begin(),
               m_items.end(),
               other.m_items.begin(),
               other.m_items.end(),
               std::back_inserter(merged));
    m_items.swap(merged);
}

std::string
ContributionSet::ToString(size_t maxItems) const
{
    std::string out = "{";
    size_t distinct = 0;
    for (size_t i = 0; i < m_items.size();)
    {
        size_t j = i;
        while (j < m_items.size() && m_items[j] == m_items[i])
        {
            ++j;
        }
        if (distinct == maxItems)
        {
            out += ", ...";
            break;
        }
        if (distinct)
        {
            out += ", ";
        }
        const int rank = static_cast<int>(static_cast<uint32_t>(m_items[i] >> 32));
        const int chunk = static_cast<int>(static_cast<uint32_t>(m_items[i]));
        out += "r" + std::to_string(rank) + ".c" + std::to_string(chunk);
        if (j - i > 1)
        {
            out += " x" + std::to_string(j - i);
        }
        ++distinct;
        i = j;
    }
    return out + "}";
}

ContributionDiff
ContributionSet::Compare(const ContributionSet& expected, const ContributionSet& found)
{
    ContributionDiff d;
    size_t i = 0;
    size_t j = 0;
    const auto& e = expected.m_items;
    const auto& f = found.m_items;
    while (i < e.size() || j < f.size())
    {
        if (j == f.size() || (i < e.size() && e[i] < f[j]))
        {
            d.m_missing.m_items.push_back(e[i++]);
        }
        else if (i == e.size() || f[j] < e[i])
        {
            // Found but not expected here: a duplicate if the key was expected at all.
            const bool known = std::binary_search(e.begin(), e.end(), f[j]);
            (known ? d.m_duplicated : d.m_unexpected).m_items.push_back(f[j++]);
        }
        else
        {
            ++i;
            ++j;
        }
    }
    return d;
}

} // namespace fabricsim
