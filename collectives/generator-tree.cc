/*
 * Tree algorithms: NCCL's double binary tree allreduce (each tree carries half the data,
 * reduce up then broadcast down, pipelined), and single-tree broadcast and reduce.
 *
 * Threadblocks per rank and tree: the up direction and the down direction have their own, so
 * pieces keep flowing up while earlier pieces come back down. Up: (send parent, recv last
 * child) reduces and forwards in one step, (recv other child) reduces into the output. Down:
 * (send first child, recv parent) stores and forwards, (send other child) sends the output.
 */
#include "generator-algorithms.h"

#include <stdexcept>

namespace fabricsim
{

namespace
{

/// Tree 0: rank 0 roots it with one child; a rank x whose lowest set bit is 2h (h >= 1) has
/// children x - h and x + h, halving the right offset until it falls inside the rank range.
RankTree
LowestBitTree(int n)
{
    RankTree t;
    t.m_parent.assign(n, -1);
    t.m_children.assign(n, {});
    if (n > 1)
    {
        int top = 1;
        while (top * 2 < n)
        {
            top *= 2;
        }
        t.m_children[0].push_back(top);
    }
    for (int x = 1; x < n; ++x)
    {
        const int half = (x & -x) / 2;
        if (half == 0)
        {
            continue; // odd ranks are leaves
        }
        t.m_children[x].push_back(x - half);
        int step = half;
        while (step > 0 && x + step >= n)
        {
            step /= 2;
        }
        if (step > 0)
        {
            t.m_children[x].push_back(x + step);
        }
    }
    return t;
}

/// Relabels every rank of \p t through \p f (a permutation).
template <typename F>
RankTree
Relabel(const RankTree& t, F f)
{
    const int n = static_cast<int>(t.m_children.size());
    RankTree out;
    out.m_root = f(t.m_root);
    out.m_parent.assign(n, -1);
    out.m_children.assign(n, {});
    for (int x = 0; x < n; ++x)
    {
        for (int c : t.m_children[x])
        {
            out.m_children[f(x)].push_back(f(c));
        }
    }
    return out;
}

/// Fills m_parent from m_children and checks the result is a spanning tree.
void
LinkParents(RankTree& t)
{
    const int n = static_cast<int>(t.m_children.size());
    std::vector<int> parents(n, 0);
    for (int x = 0; x < n; ++x)
    {
        for (int c : t.m_children[x])
        {
            t.m_parent[c] = x;
            ++parents[c];
        }
    }
    for (int x = 0; x < n; ++x)
    {
        if (parents[x] != (x == t.m_root ? 0 : 1))
        {
            throw std::logic_error("double binary tree: rank " + std::to_string(x) + " has "
                                   + std::to_string(parents[x]) + " parents");
        }
    }
}

/// Ranks in breadth-first order from the root (parents before children).
std::vector<int>
TopDown(const RankTree& t)
{
    std::vector<int> order{t.m_root};
    for (size_t i = 0; i < order.size(); ++i)
    {
        for (int c : t.m_children[order[i]])
        {
            order.push_back(c);
        }
    }
    return order;
}

} // namespace

RankTree
DoubleBinaryTree(int n, int which)
{
    if (n < 1 || which < 0 || which > 1)
    {
        throw std::invalid_argument("DoubleBinaryTree: needs ranks >= 1 and tree 0 or 1");
    }
    RankTree t = LowestBitTree(n);
    if (which == 1)
    {
        t = n % 2 == 0 ? Relabel(t, [n](int x) { return n - 1 - x; })
                       : Relabel(t, [n](int x) { return (x + 1) % n; });
    }
    LinkParents(t);
    return t;
}

namespace gen
{

namespace
{

/// Reduces chunk \p chunk up the tree; the root ends with the sum in its output.
void
TreeUp(ScheduleBuilder& b, const RankTree& t, const std::vector<int>& order, int chan, int chunk)
{
    for (auto it = order.rbegin(); it != order.rend(); ++it)
    {
        const int x = *it;
        const int parent = t.m_parent[x];
        const auto& children = t.m_children[x];
        Loc acc = In(chunk);
        for (size_t k = 0; k < children.size(); ++k)
        {
            const int c = children[k];
            if (k + 1 == children.size() && parent >= 0)
            {
                b.Add(x, b.Tb(x, parent, c, chan), StepOp::kRecvReduceSend, acc, Loc{}, 1);
            }
            else
            {
                b.Add(x, b.Tb(x, -1, c, chan), StepOp::kRecvReduceCopy, acc, Out(chunk), 1);
                acc = Out(chunk);
            }
        }
        if (children.empty() && parent >= 0)
        {
            b.Send(x, b.Tb(x, parent, -1, chan), acc);
        }
    }
}

/// Broadcasts chunk \p chunk down the tree from \p rootSrc on the root into every output.
void
TreeDown(ScheduleBuilder& b,
         const RankTree& t,
         const std::vector<int>& order,
         int chan,
         int chunk,
         Loc rootSrc)
{
    for (int x : order)
    {
        const int parent = t.m_parent[x];
        const auto& children = t.m_children[x];
        if (parent < 0)
        {
            for (int c : children)
            {
                b.Send(x, b.Tb(x, c, -1, chan), rootSrc);
            }
        }
        else if (children.empty())
        {
            b.Recv(x, b.Tb(x, -1, parent, chan), Out(chunk));
        }
        else
        {
            b.Add(
                x, b.Tb(x, children[0], parent, chan), StepOp::kRecvCopySend, Loc{}, Out(chunk), 1);
            for (size_t k = 1; k < children.size(); ++k)
            {
                b.Send(x, b.Tb(x, children[k], -1, chan), Out(chunk));
            }
        }
    }
}

} // namespace

Schedule
GenerateTree(CollectiveKind kind, int n, const GeneratorOptions& opt)
{
    const Split split = SplitOf(opt);
    const int units = split.Units();
    if (kind == CollectiveKind::kAllReduce)
    {
        // Tree t carries chunks [t * units, (t + 1) * units) on channels t * C + c.
        ScheduleBuilder b(
            kind, n, 2 * units, 2 * split.m_channels, opt, ScheduleName("tree", kind));
        for (int which = 0; which < 2; ++which)
        {
            const RankTree t = DoubleBinaryTree(n, which);
            const std::vector<int> order = TopDown(t);
            for (int u = 0; u < units; ++u)
            {
                const int chan = which * split.m_channels + split.Channel(u);
                const int chunk = which * units + u;
                TreeUp(b, t, order, chan, chunk);
                TreeDown(b, t, order, chan, chunk, Out(chunk));
            }
        }
        return b.Finish();
    }
    const int root = static_cast<int>(opt.root);
    // Tree 0 turned so that its root is the collective's root.
    RankTree tree = Relabel(DoubleBinaryTree(n, 0), [n, root](int x) { return (x + root) % n; });
    LinkParents(tree);
    const std::vector<int> order = TopDown(tree);
    ScheduleBuilder b(kind, n, units, split.m_channels, opt, ScheduleName("tree", kind));
    for (int u = 0; u < units; ++u)
    {
        const int chan = split.Channel(u);
        if (kind == CollectiveKind::kBroadcast)
        {
            b.Copy(root, b.Tb(root, -1, -1, chan), In(u), Out(u));
            TreeDown(b, tree, order, chan, u, In(u));
        }
        else if (kind == CollectiveKind::kReduce)
        {
            TreeUp(b, tree, order, chan, u);
        }
        else
        {
            throw std::logic_error("tree: unsupported collective " + ToString(kind));
        }
    }
    return b.Finish();
}

} // namespace gen
} // namespace fabricsim
