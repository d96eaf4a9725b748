/*
 * What an expert-parallel exchange puts on the wire, per EP backend: how many copies of a token
 * go to each EP rank and how many bytes a copy takes. The one model of it: the serving loop's
 * step communication (step-comm.h) and `fabricsim calibrate`'s DeepEP points both use it.
 */
#ifndef FABRICSIM_WORKLOADS_EP_EXCHANGE_H
#define FABRICSIM_WORKLOADS_EP_EXCHANGE_H

#include "parallelism-spec.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace fabricsim
{

/// Bytes of one token's hidden state of \p hidden elements in DeepEP's fp8 dispatch: one byte
/// per element and a float32 scale per 128 elements.
double Fp8ScaledTokenBytes(uint32_t hidden);

/**
 * \brief Group-limited routing (DeepSeek-V2/V3's n_group / topk_group; DeepEP's internode test
 * with one group per server): the experts form \p groups equal groups of consecutive experts
 * and a token's k experts lie in \p topkGroups of them, chosen uniformly. A group is chosen for
 * its best experts, so each chosen group holds at least one: the model is one expert uniformly
 * in each chosen group and the other k - topkGroups uniformly among the chosen groups' other
 * experts (each expert is still chosen with probability k / E). Off (0 / 0) or where it cannot
 * hold (groups not dividing E, topkGroups >= groups, k < topkGroups): no limit.
 */
struct ExpertGroups
{
    uint32_t groups = 0;     //!< n_group
    uint32_t topkGroups = 0; //!< topk_group
};

/// True when \p limit restricts routing over \p experts experts with top-\p topk.
bool GroupLimitActive(const ExpertGroups& limit, uint32_t experts, uint32_t topk);

/**
 * \brief Probability that a token's experts include one of a set of experts, under uniform
 * group-limited routing (active \p limit): \p perGroup[i] is how many of the set's experts lie
 * in group i (experts [i E / groups, (i + 1) E / groups)).
 */
double GroupLimitedReach(const std::vector<uint32_t>& perGroup,
                         uint32_t experts,
                         uint32_t topk,
                         const ExpertGroups& limit);

/**
 * \brief Expected copies of one token an EP rank sends to each EP rank (rank r holds experts
 * [r E/ep, (r+1) E/ep)), given per-expert selection probabilities \p pi (summing to top-k
 * \p topk). With \p perRank false: one copy per chosen expert, sum of pi over r's experts.
 * With \p perRank true: one copy per rank holding any of the token's experts,
 * 1 - prod_{i<k} (1 - q_r E / (E - i)) with q_r = (sum of pi over r's experts) / k, which under
 * uniform routing is the exact 1 - C(E - E/ep, k) / C(E, k), and at most the per-expert
 * count. Under uniform routing an active \p limit applies (GroupLimitedReach); skewed routing
 * ignores it. The sender's own entry is what stays local.
 */
std::vector<double> EpCopiesPerDestination(const std::vector<double>& pi,
                                           uint32_t ep,
                                           uint32_t topk,
                                           bool perRank,
                                           const ExpertGroups& limit = {});

/**
 * \brief Copies EP rank \p me sends to each EP rank in one dispatch (\p dispatch) or combine,
 * given every EP rank's \p tokens (its own entry stays local). One copy per chosen expert
 * (\p perRank false) or per rank holding any of them (true, DeepEP's normal kernels); the
 * combine returns each source the outputs of its tokens on our experts. DeepEP's normal
 * kernels across nodes (\p nodeOfRank, one entry per EP rank, every node with as many): a
 * token goes over RDMA once to each other node holding any of its experts, to the rank of the
 * sender's local index there (its position among its node's EP ranks), which forwards it over
 * NVLink to its node's ranks holding its experts; inside the sender's node it goes directly. The
 * combine comes back the same way, NVLink to the relaying rank and one reduced copy per node
 * over RDMA. Each rank's row carries what it relays. Without nodes (or one, or an uneven split):
 * straight to each rank. \p limit as for EpCopiesPerDestination, for ranks and nodes alike.
 */
std::vector<double> EpRowCopies(const std::vector<double>& pi,
                                uint32_t ep,
                                uint32_t topk,
                                bool perRank,
                                const std::vector<uint32_t>& nodeOfRank,
                                const std::vector<double>& tokens,
                                uint32_t me,
                                bool dispatch,
                                const ExpertGroups& limit = {});

/// Per-token wire bytes of an EP backend's dispatch and combine.
struct EpTokenWire
{
    double dispatchBytes = 0; //!< one copy in the dispatch
    double combineBytes = 0;  //!< one copy in the combine
    bool perRank = false;     //!< copies de-duplicated per destination rank
};

/**
 * \brief The wire form of \p backend for tokens of \p hidden elements in activations of
 * \p activationBytes bytes: all-to-all and allgather-reducescatter send the activations both
 * ways (per expert copy / every token); deepep-normal fp8 with scales one per rank, combine in
 * bf16 one per rank; deepep-low-latency fp8 with scales per expert copy, bf16 combine per copy.
 */
EpTokenWire EpWireOf(EpBackend backend, uint32_t hidden, double activationBytes);

/**
 * \brief What DeepEP's own kernels cost besides the wire (scripts/fit-deepep-kernels fits them
 * on 8 x H200, docs/validation.md): a fixed cost per call (launch; the normal kernels' notify
 * and layout), and copying: each copy a rank sends takes perCopyNs of bookkeeping plus its bytes
 * at bytesPerSecond, spread over the SMs it runs on (normal mode: the SM budget; low latency:
 * every SM, so the rate is the GPU's and sms 1; the dispatch's a share of the GPU's scale-up
 * bandwidth, scaleUpShare, where the GPU is known). Each of a rank's tokens costs tokenUs plus its
 * bytes (a copy's) at tokenBytesPerSecond too: in the normal kernels on the SM budget beside
 * the copies (the dispatch reads and routes every token, the combine reduces its experts'
 * outputs into it, whatever its copies), in the low-latency kernels one token after another
 * on each of their SMs (DeepEpLowLatencySms: the dispatch casts and sends it, the combine
 * reduces it). The low-latency kernels' fixed part grows by
 * fixedPerGroupUs for each warp group an SM holds (ceil(experts / SMs): more experts an SM,
 * fewer warps each). The combines' start-up grows with one token: the copies it gathers (normal:
 * one from each rank holding its experts, its own rank's too; low latency: one per chosen expert)
 * at startCopyBytesPerSecond and, normal, its result at startBytesPerSecond, before the copies
 * stream (one token per rank measures 30 us at hidden 2048, top-8, and 45-48 at 7168).
 * The normal kernels pipeline their copying with the wire only past a depth: the shorter of the
 * two adds itself, up to one token's copies at fillBytesPerSecond (EpKernelFillPs). Both of
 * these terms are empirical: they count a token's copies up to copiesPerTokenCap, the widest
 * fan-out of the rows they were fitted on, and are not carried past it.
 */
struct EpKernelCost
{
    double fixedUs = 0;                 //!< per call
    double perCopyNs = 0;               //!< per copy sent, on one SM
    double bytesPerSecond = 0;          //!< per SM (normal) or per GPU (low latency)
    bool smBudget = false;              //!< rate and per-copy work scale with the SM budget
    double tokenUs = 0;                 //!< per token on one SM (0: none)
    double tokenBytesPerSecond = 0;     //!< a token's bytes on one SM (0: none)
    double fixedPerGroupUs = 0;         //!< per warp group an SM holds (low latency)
    double startCopyBytesPerSecond = 0; //!< one token's gathered copies at start-up (0: none)
    double startBytesPerSecond = 0;     //!< one token's bytes at start-up (0: none)
    double fillBytesPerSecond = 0;      //!< pipeline depth: a token's copies at this (0: none)
    /// Low latency: a token's sends are warp copies bound by their latency (a copy's bytes at
    /// tokenBytesPerSecond, the top-k warps side by side), and they add to the larger of the
    /// copying and the tokens' other work instead of overlapping it.
    bool warpCopiesSerial = false;
    /// The copies a token moves that the start-up and fill count, at most (0: all of them).
    double copiesPerTokenCap = 0;
    /// Low latency: the copying runs at this share of the GPU's scale-up bandwidth where it is
    /// known, on the copies inside the server (0: at bytesPerSecond everywhere, on every copy).
    /// The dispatch's stores are the links': fitted at 97 % of the simulated NVLink on H200,
    /// and the SMs do not bind them (H20's 72 reach it).
    double scaleUpShare = 0;
};

/// What one rank's call of DeepEP's kernels handles.
struct EpKernelWork
{
    double copies = 0;         //!< copies the rank sends (to other ranks)
    double bytesPerCopy = 0;   //!< bytes of each
    uint32_t smBudget = 1;     //!< SMs the normal kernels get (ep_sms)
    double tokens = 0;         //!< the rank's tokens
    uint32_t experts = 0;      //!< routed experts (the low-latency kernels' warp groups)
    uint32_t gpuSms = 0;       //!< the GPU's SMs (0: unknown: one warp group an SM, no token term)
    double copiesPerToken = 0; //!< copies a token moves, its own rank's included (start-up)
    double scaleUpBytesPerSecond = 0; //!< the GPU's scale-up bandwidth a direction (0: unknown)
    /// Of the copies, those to ranks inside the server (over the scale-up links; negative: all
    /// of them). Where the copying is the links' (scaleUpShare), only these take its bytes:
    /// the NIC reads the others itself (DeepEP posts them as RDMA writes).
    double scaleUpCopies = -1;
};

/// The kernels' costs of \p backend's dispatch (\p dispatch) or combine; nullopt for the
/// backends NCCL runs (all-to-all, allgather-reducescatter).
std::optional<EpKernelCost> EpKernelCostOf(EpBackend backend, bool dispatch);

/**
 * \brief Time from a call's start to a rank's earliest result in ps: the fixed cost and the
 * start-up (a token's bytes, known at launch) plus the kernels' own work: with an SM budget (normal
 * mode) the copies and the tokens spread over the budget; without (low latency) the larger of the
 * copies at the GPU's rate and the tokens one after another on each of DeepEpLowLatencySms SMs.
 * Work with no copies and no tokens gives the fixed part alone (the launch). Checked: a time past
 * the ps clock throws UnitOverflow.
 */
int64_t EpKernelMinPs(const EpKernelCost& cost, const EpKernelWork& work);

/**
 * \brief The pipeline's fill in ps (CollectiveRequest::kernelFillPs): the copies a token moves
 * (copiesPerToken, at most copiesPerTokenCap, x bytesPerCopy) at fillBytesPerSecond; 0 when the
 * kernels have none. Checked
 * as EpKernelMinPs.
 */
int64_t EpKernelFillPs(const EpKernelCost& cost, const EpKernelWork& work);

/**
 * \brief SMs DeepEP's low-latency kernels launch for \p experts experts on a GPU of
 * \p gpuSms SMs: one warp group per expert, ceil(experts / gpuSms) groups to an SM, on as few
 * SMs as hold them (8 experts: 8 SMs; 256 on 132: 128). 0 when \p gpuSms is 0 (unknown).
 */
uint32_t DeepEpLowLatencySms(uint32_t experts, uint32_t gpuSms);

} // namespace fabricsim

#endif
