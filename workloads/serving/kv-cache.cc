#include "kv-cache.h"

#include "input-error.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace fabricsim
{

namespace
{

/// MLA down projections (q_a, kv_a and their norms) are replicated across TP ranks.
double
ReplicatedAttentionParams(const ModelSpec& m)
{
    if (m.attention != AttentionKind::Mla)
    {
        return 0;
    }
    double h = m.hiddenSize;
    double q = m.mla.qLoraRank > 0 ? h * m.mla.qLoraRank + m.mla.qLoraRank : 0;
    return q + h * (m.mla.kvLoraRank + m.mla.qkRopeHeadDim) + m.mla.kvLoraRank;
}

/// ceil(a / b) without the overflow of a + b - 1 (a request's tokens may be near 2^64).
uint64_t
CeilDiv(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0 ? 1 : 0);
}

std::string
Gb(double bytes)
{
    std::ostringstream os;
    os.precision(3);
    os << bytes / 1e9 << " GB";
    return os.str();
}

} // namespace

double
WeightBytesPerRank(const ModelSpec& m, const ParallelismSpec& par, uint32_t stage)
{
    auto layers = par.LayersPerStage(m);
    uint32_t first = par.FirstLayer(m, stage);
    double tp = par.tp;
    double params = 0;
    // What an fp8 checkpoint leaves 16-bit (ModelSpec::EdgeWeightDtype): norms, routers,
    // embedding and LM head.
    double edge = 0;
    for (uint32_t l = first; l < first + layers[stage]; ++l)
    {
        double repl = ReplicatedAttentionParams(m);
        params += repl + (double(m.AttentionParams()) - repl) / tp;
        edge += double(m.LayerNormParams());
        if (!m.IsMoeLayer(l))
        {
            params += double(m.DenseMlpParams()) / tp;
        }
        else if (par.EpExchangesTokens())
        {
            // Whole experts spread over ep ranks; shared expert and router replicated.
            params += double(m.ExpertsParams()) / par.ep + double(m.SharedExpertParams());
            edge += double(m.RouterParams());
        }
        else
        {
            // Experts split by tp, or whole over the TP group (tp-allreduce: ep = tp).
            params += (double(m.ExpertsParams()) + double(m.SharedExpertParams())) / tp;
            edge += double(m.RouterParams());
        }
    }
    if (stage == 0)
    {
        edge += double(m.EmbeddingParams()) / tp;
        if (m.encoder)
        {
            params += double(m.encoder->TotalParams()) / tp;
        }
    }
    if (stage + 1 == par.pp)
    {
        // A tied LM head on a later stage than the embedding needs its own copy.
        double head = m.tieWordEmbeddings ? (par.pp > 1 ? double(m.EmbeddingParams()) : 0.0)
                                          : double(m.LmHeadParams());
        edge += head / tp + double(m.FinalNormParams());
    }
    return params * DTypeBytes(m.weightDtype) + edge * DTypeBytes(m.EdgeWeightDtype());
}

double
ActivationBytesPerRank(const ModelSpec& m,
                       const ParallelismSpec& par,
                       uint32_t maxTokens,
                       uint32_t maxSeqs)
{
    double b = DTypeBytes(m.activationDtype);
    double tp = par.tp;
    double qkv = (double(m.numHeads) * m.QkHeadDim() + 2.0 * m.numKvHeads * m.VHeadDim()) / tp;
    double mlp = m.intermediateSize > 0 && m.NumMoeLayers() < m.numLayers
                     ? 2.0 * m.intermediateSize / tp
                     : 0.0;
    if (m.moe)
    {
        mlp = std::max(mlp, 2.0 * m.moe->topK * m.moe->expertIntermediate / tp);
    }
    double perToken = b * (2.0 * m.hiddenSize + qkv + mlp);
    double logits = double(maxSeqs) * std::ceil(double(m.vocabSize) / tp) * 4.0;
    return double(maxTokens) * perToken + logits;
}

KvCacheGroups
KvCacheGroups::Of(const ModelSpec& m)
{
    KvCacheGroups g;
    const uint32_t full = m.NumLayersOf(LayerKind::Full);
    const uint32_t sliding = m.NumLayersOf(LayerKind::Sliding);
    const uint32_t linear = m.NumLayersOf(LayerKind::Linear);
    g.layersPerGroup = m.numLayers;
    if (sliding == 0 && linear == 0)
    {
        return g;
    }
    for (uint32_t n : {full, sliding, linear})
    {
        g.layersPerGroup = n > 0 ? std::min(g.layersPerGroup, n) : g.layersPerGroup;
    }
    auto groups = [&](uint32_t n)
    {
        return (n + g.layersPerGroup - 1) / g.layersPerGroup;
    };
    g.full = groups(full);
    g.sliding = groups(sliding);
    g.linear = groups(linear);
    g.window = m.slidingWindow;
    return g;
}

uint64_t
KvCacheGroups::Blocks(uint64_t tokens, uint64_t computed, uint32_t blockSize) const
{
    const uint64_t all = CeilDiv(tokens, blockSize);
    uint64_t n = uint64_t(full) * all;
    if (sliding > 0)
    {
        // Tokens before computed - window + 1 are outside every later query's window.
        const uint64_t skipped = computed + 1 > window ? computed + 1 - window : 0;
        n += uint64_t(sliding) * (all - std::min(all, skipped / blockSize));
    }
    return n + (tokens > 0 ? linear : 0);
}

uint64_t
KvCacheGroups::PeakBlocks(uint64_t tokens, uint64_t chunk, uint32_t blockSize) const
{
    const uint64_t all = CeilDiv(tokens, blockSize);
    // A step computing up to chunk tokens after the window's window - 1: at most this many.
    const uint64_t windowed = sliding > 0 ? CeilDiv(window - 1 + chunk, blockSize) + 1 : 0;
    return uint64_t(full) * all + uint64_t(sliding) * std::min(all, windowed)
           + (tokens > 0 ? linear : 0);
}

KvCacheBudget
KvCacheBudget::Compute(const ModelSpec& model,
                       const HardwareSpec& hw,
                       const ParallelismSpec& par,
                       const BatchingSpec& batching,
                       const KvCacheSpec& kv,
                       const std::string& file,
                       const std::string& field)
{
    KvCacheBudget b;
    b.blockSize = kv.blockSize;
    b.usableBytes = hw.hbmCapacityBytes * kv.gpuMemoryUtilization;
    b.activationBytes
        = ActivationBytesPerRank(model, par, batching.maxNumBatchedTokens, batching.maxNumSeqs);
    auto layers = par.LayersPerStage(model);
    double perTokenAll = model.KvBytesPerTokenPerRank(par.tp);
    b.groups = KvCacheGroups::Of(model);
    if (b.groups.linear > 0)
    {
        // An attention block must hold a linear layer's state: vLLM grows the block size in
        // steps of its kernels' 16-token alignment and pads the state to the block.
        const double perLayer = model.KvBytesPerLayerPerRank(par.tp);
        const double state = model.LinearStateBytesPerLayer() / par.tp;
        if (state > b.blockSize * perLayer)
        {
            b.blockSize = uint32_t(16 * std::ceil(state / (16 * perLayer)));
        }
        perTokenAll = perLayer * model.numLayers; // as if every layer held KV: spanned below
    }
    uint64_t blocks = UINT64_MAX;
    for (uint32_t s = 0; s < par.pp; ++s)
    {
        double w = WeightBytesPerRank(model, par, s);
        b.weightBytes = std::max(b.weightBytes, w);
        double left = b.usableBytes - w - b.activationBytes;
        if (left <= 0)
        {
            throw fabricsim::InputError(
                file,
                field,
                "a layout whose weights and activations fit in " + Gb(b.usableBytes)
                    + " per rank (hbm_capacity x "
                      "gpu_memory_utilization)",
                Gb(w) + " of weights and " + Gb(b.activationBytes) + " of activations on a stage-"
                    + std::to_string(s) + " rank");
        }
        // A block spans every layer of the stage, or a group's share of them.
        const double spanned = b.groups.sliding == 0 && b.groups.linear == 0
                                   ? double(layers[s])
                                   : double(b.groups.layersPerGroup) * layers[s] / model.numLayers;
        double perToken = perTokenAll * spanned / model.numLayers;
        double capacity = kv.placement == KvPlacement::Hbm ? left : kv.tierCapacityBytes;
        // In double first: a tier of exabytes (or a stage without KV) gives more blocks than
        // 64 bits hold, and converting that is undefined; such a stage does not limit.
        const double fit = std::floor(capacity / (perToken * b.blockSize));
        uint64_t n = fit < double(blocks) ? uint64_t(fit) : blocks;
        if (n < blocks)
        {
            blocks = n;
            b.kvBytesPerRank = capacity;
            b.kvBytesPerToken = perToken;
        }
    }
    b.numBlocks = kv.numBlocksOverride > 0 ? kv.numBlocksOverride : blocks;
    return b;
}

uint64_t
KvCacheBudget::TokensIn(uint64_t blocks) const
{
    return blocks > UINT64_MAX / blockSize ? UINT64_MAX : blocks * blockSize;
}

bool
KvCacheBudget::Holds(uint64_t tokens, uint64_t chunk, uint64_t blocks) const
{
    return groups.PeakBlocks(tokens, chunk, blockSize) <= blocks;
}

BlockAllocator::BlockAllocator(uint64_t numBlocks,
                               uint32_t blockSize,
                               const KvCacheGroups& groups,
                               bool prefixCaching)
    : m_total(numBlocks)
    , m_blockSize(blockSize)
    , m_groups(groups)
{
    if (prefixCaching)
    {
        if (groups.sliding > 0 || groups.linear > 0)
        {
            throw std::invalid_argument("prefix caching with sliding or linear layers");
        }
        m_prefix = std::make_unique<PrefixBlockPool>(numBlocks, blockSize);
    }
}

void
BlockAllocator::Attach(uint64_t seq, BlockHashList hashes)
{
    if (m_prefix)
    {
        m_prefix->Attach(seq, std::move(hashes));
    }
}

uint64_t
BlockAllocator::CachedTokens(uint64_t seq, uint64_t known) const
{
    return m_prefix ? m_prefix->CachedTokens(seq, known) : 0;
}

uint64_t
BlockAllocator::CachedTokensOf(const BlockHashList& hashes, uint64_t known) const
{
    return m_prefix && hashes ? m_prefix->CachedTokensOf(*hashes, known) : 0;
}

bool
BlockAllocator::CanAdmit(uint64_t seq,
                         const BlockHashList& hashes,
                         uint64_t tokens,
                         uint64_t computed) const
{
    if (m_prefix && hashes)
    {
        return m_prefix->CanAdmit(*hashes, tokens, computed);
    }
    return CanGrow(seq, tokens, computed);
}

uint64_t
BlockAllocator::FreeBlocks() const
{
    return m_prefix ? m_prefix->FreeBlocks() : m_total - m_used;
}

uint64_t
BlockAllocator::BlocksFor(uint64_t tokens, uint64_t computed) const
{
    return m_groups.Blocks(tokens, computed, m_blockSize);
}

uint64_t
BlockAllocator::Held(uint64_t seq) const
{
    if (m_prefix)
    {
        return m_prefix->Held(seq);
    }
    auto it = m_held.find(seq);
    return it == m_held.end() ? 0 : it->second;
}

bool
BlockAllocator::CanGrow(uint64_t seq, uint64_t tokens, uint64_t computed) const
{
    if (m_prefix)
    {
        return m_prefix->CanGrow(seq, tokens, computed);
    }
    uint64_t need = BlocksFor(tokens, computed);
    uint64_t have = Held(seq);
    return need <= have || need - have <= FreeBlocks();
}

bool
BlockAllocator::Grow(uint64_t seq, uint64_t tokens, uint64_t computed, bool scheduled)
{
    if (m_prefix)
    {
        return m_prefix->Grow(seq, tokens, computed, scheduled);
    }
    if (!CanGrow(seq, tokens, computed))
    {
        return false;
    }
    uint64_t need = BlocksFor(tokens, computed);
    uint64_t& have = m_held[seq];
    if (need > have)
    {
        m_used += need - have;
        have = need;
    }
    else if (m_groups.sliding > 0)
    {
        m_used -= have - need; // blocks the window left behind go back to the pool
        have = need;
    }
    return true;
}

void
BlockAllocator::Free(uint64_t seq)
{
    if (m_prefix)
    {
        m_prefix->Free(seq);
        return;
    }
    auto it = m_held.find(seq);
    if (it != m_held.end())
    {
        m_used -= it->second;
        m_held.erase(it);
    }
}

} // namespace fabricsim
