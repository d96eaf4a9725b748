/**
 * \file
 * \brief An EP exchange's all-to-all rows from drawn routing rather than its expectation: the
 * routing DeepEP's own tests draw (scores |N(0, 1)| + 1, top-k, group-limited across servers),
 * so that a simulated call meets the most loaded rank as the test does (the slowest NIC of an
 * internode call carries about 7 % more than the mean at 128 tokens a rank).
 */
#ifndef FABRICSIM_WORKLOADS_EP_DRAWN_ROWS_H
#define FABRICSIM_WORKLOADS_EP_DRAWN_ROWS_H

#include "ep-exchange.h"

#include <cstdint>
#include <vector>

namespace fabricsim
{

/// Each token's chosen experts (ids below the expert count; -1: a masked slot), one rank's.
using TokenChoices = std::vector<std::vector<int32_t>>;

/**
 * \brief DeepEP's test routing, drawn for \p ranks ranks of \p tokens tokens each: every token
 * scores each of \p experts experts |N(0, 1)| + 1 and takes the \p topk best, only inside the
 * \p limit.topkGroups groups (of \p limit.groups equal groups of consecutive experts) whose best
 * expert scores highest when \p limit is active (tests/test_internode.py: a group per server,
 * min(servers, 4) of them); then \p masked random slots of each rank are set to -1
 * (tests/test_low_latency.py masks 10). Seeded by \p seed, identical on every platform.
 * Throws std::invalid_argument when topk exceeds the experts the groups leave.
 */
std::vector<TokenChoices> DrawDeepEpTestRouting(uint32_t ranks,
                                                uint32_t tokens,
                                                uint32_t experts,
                                                uint32_t topk,
                                                const ExpertGroups& limit,
                                                uint32_t masked,
                                                uint64_t seed);

/**
 * \brief The copies each rank sends each rank (row i, column j; the diagonal its own) for
 * \p choices (one TokenChoices per rank, experts spread evenly over the ranks in order), counted
 * as EpRowCopies counts them in expectation: \p perRank false (low latency) one copy per chosen
 * expert; true (normal) one per rank holding any; and with \p nodeOfRank splitting the ranks into
 * even nodes, normal mode crosses to another node once per token, to the rank of the sender's
 * local index, which forwards inside it (dispatch), or comes back that way, reduced (combine:
 * \p dispatch false, the rows of the returning copies).
 */
std::vector<std::vector<double>> EpDrawnRows(const std::vector<TokenChoices>& choices,
                                             uint32_t experts,
                                             bool perRank,
                                             const std::vector<uint32_t>& nodeOfRank,
                                             bool dispatch);

/**
 * \brief How much more the most loaded NIC carries under \p drawn rows than under \p expected
 * ones: the largest cross-node egress or ingress of any rank (copies to or from ranks of another
 * node, \p nodeOfRank) under each, divided. 1 when the expected rows cross no node.
 */
double EpCrossNodeLoadFactor(const std::vector<std::vector<double>>& drawn,
                             const std::vector<std::vector<double>>& expected,
                             const std::vector<uint32_t>& nodeOfRank);

} // namespace fabricsim

#endif
