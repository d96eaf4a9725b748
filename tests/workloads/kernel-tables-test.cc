// Measured kernel tables (data/compute): every table of the corpus reads with its
// rows, and bad tables are refused naming file, line and column.
#include "error-of.h"
#include "kernel-tables.h"
#include "shared-corpus.h"

#include <gtest/gtest.h>

#include <fstream>

namespace fabricsim
{
namespace
{

using test::ErrorOf;

const char* const kGemmHeader
    = "framework,version,device,op_name,kernel_source,gemm_dtype,m,n,k,latency\n";
const char* const kMoeHeader
    = "framework,version,device,op_name,kernel_source,moe_dtype,num_tokens,"
      "hidden_size,inter_size,topk,num_experts,moe_tp_size,moe_ep_size,"
      "distribution,latency\n";

const char* const kElementwiseHeader
    = "framework,version,device,op_name,kernel,dtype,num_tokens,bytes,latency\n";

std::string
Write(const std::string& name, const std::string& text)
{
    const std::string path = ::testing::TempDir() + "/" + name;
    std::ofstream(path) << text;
    return path;
}

TEST(KernelTables, ConstructedGemmAndMoeTables)
{
    const KernelTable g = ReadKernelTable(
        Write("kt-gemm.csv",
              std::string(kGemmHeader)
                  + "VLLM,0.24.0,NVIDIA H100 80GB HBM3,gemm,cublas,bfloat16,8192,8192,8192,1.54\n"
                    "VLLM,0.24.0,NVIDIA H100 80GB HBM3,gemm,cutlass,fp8,1,8192,8192,0.03\n"));
    EXPECT_EQ(g.op, KernelOp::Gemm);
    EXPECT_EQ(g.device, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(g.version, "0.24.0");
    ASSERT_EQ(g.gemm.size(), 2u);
    EXPECT_EQ(g.gemm[1].dtype, "fp8");
    EXPECT_EQ(g.gemm[1].m, 1u);
    EXPECT_DOUBLE_EQ(g.gemm[0].ms, 1.54);

    const KernelTable m = ReadKernelTable(Write(
        "kt-moe.csv",
        std::string(kMoeHeader)
            + "VLLM,0.24.0,NVIDIA H200,moe,triton,bfloat16,64,2048,768,8,128,1,4,balanced,0.1\n"));
    ASSERT_EQ(m.moe.size(), 1u);
    EXPECT_EQ(m.moe[0].experts, 128u);
    EXPECT_EQ(m.moe[0].ep, 4u);
    EXPECT_EQ(m.moe[0].inter, 768u);

    const KernelTable e = ReadKernelTable(
        Write("kt-ew.csv",
              std::string(kElementwiseHeader)
                  + "VLLM,0.19.0,RTX,elementwise,rms_norm,bfloat16,128,5242880,0.00332\n"));
    EXPECT_EQ(e.op, KernelOp::Elementwise);
    ASSERT_EQ(e.elementwise.size(), 1u);
    EXPECT_EQ(e.elementwise[0].kernel, "rms_norm");
    EXPECT_EQ(e.elementwise[0].tokens, 128u);
    EXPECT_DOUBLE_EQ(e.elementwise[0].bytes, 5242880);
    EXPECT_EQ(e.Size(), 1u);
}

TEST(KernelTables, BadTablesNameLineAndColumn)
{
    const std::string row = "VLLM,0.24.0,NVIDIA H100 80GB HBM3,gemm,cublas,bfloat16,";
    struct Case
    {
        std::string text;
        std::string field;
    };
    const Case cases[] = {
        {kGemmHeader, "line 2"},                                    // no rows
        {std::string(kGemmHeader) + row + "0,8,8,1\n", "line 2 m"}, // zero size
        {std::string(kGemmHeader) + row + "8,8,8,0\n", "line 2 latency"},
        {std::string(kGemmHeader) + row + "8,8,8,-3\n", "line 2 latency"},
        {std::string(kGemmHeader) + row + "8,8,8,1\n"
             + "VLLM,0.24.0,NVIDIA H200,gemm,cublas,bfloat16,8,8,8,1\n",
         "line 3 device"}, // two devices in one table
        {std::string(kGemmHeader) + "VLLM,0.24.0,dev,conv,x,bf16,8,8,8,1\n", "line 2 op_name"},
        {"framework,version,device,op_name,gemm_dtype,m,n,latency\nVLLM,1,d,gemm,bf16,1,1,1\n",
         "line 1"}, // no k column
        {std::string(kMoeHeader) + "VLLM,0.24.0,d,moe,t,bf16,1,2048,768,9,8,1,1,balanced,1\n",
         "line 2 topk"}, // top-9 of 8 experts
        {std::string(kMoeHeader) + "VLLM,0.24.0,d,moe,t,bf16,1,2048,768,8,128,2,2,balanced,1\n",
         "line 2 moe_ep_size"}, // TP and EP at once
        {std::string(kElementwiseHeader) + "VLLM,1,d,elementwise,rms_norm,bf16,8,0,1\n",
         "line 2 bytes"}, // moves nothing
        {"framework,version,device,op_name,kernel,dtype,num_tokens,latency\n"
         "VLLM,1,d,elementwise,rms_norm,bf16,8,1\n",
         "line 1"}, // no bytes column
    };
    int i = 0;
    for (const Case& c : cases)
    {
        const std::string path = Write("kt-bad-" + std::to_string(i++) + ".csv", c.text);
        const InputError e = ErrorOf([&] { ReadKernelTable(path); });
        EXPECT_EQ(e.File(), path) << c.text;
        EXPECT_EQ(e.Field(), c.field) << c.text;
    }
}

TEST(KernelTables, CorpusTablesReadWhole)
{
    struct Expect
    {
        const char* file;
        KernelOp op;
        size_t rows;
        const char* device;
    };
    const Expect tables[] = {
        {"h100_sxm/h100_sxm-vllm-0.24.0-gemm.csv.gz",
         KernelOp::Gemm,
         15456,
         "NVIDIA H100 80GB HBM3"},
        {"h100_sxm/h100_sxm-vllm-0.24.0-context_attention.csv.gz",
         KernelOp::ContextAttention,
         13736,
         "NVIDIA H100 80GB HBM3"},
        {"h100_sxm/h100_sxm-vllm-0.24.0-generation_attention.csv.gz",
         KernelOp::GenerationAttention,
         16929,
         "NVIDIA H100 80GB HBM3"},
        {"h100_sxm/h100_sxm-vllm-0.24.0-moe.csv.gz", KernelOp::Moe, 15282, "NVIDIA H100 80GB HBM3"},
        {"h200_sxm/h200_sxm-vllm-0.24.0-gemm.csv.gz", KernelOp::Gemm, 15456, "NVIDIA H200"},
        {"h200_sxm/h200_sxm-vllm-0.24.0-context_attention.csv.gz",
         KernelOp::ContextAttention,
         13736,
         "NVIDIA H200"},
        {"h200_sxm/h200_sxm-vllm-0.24.0-generation_attention.csv.gz",
         KernelOp::GenerationAttention,
         16929,
         "NVIDIA H200"},
        {"h200_sxm/h200_sxm-vllm-0.24.0-moe.csv.gz", KernelOp::Moe, 14931, "NVIDIA H200"},
    };
    for (const Expect& x : tables)
    {
        REQUIRE_SHARED_CORPUS(path, std::string("compute/") + x.file);
        const KernelTable t = ReadKernelTable(path);
        EXPECT_EQ(t.op, x.op) << x.file;
        EXPECT_EQ(t.Size(), x.rows) << x.file;
        EXPECT_EQ(t.device, x.device) << x.file;
        EXPECT_EQ(t.version, "0.24.0") << x.file;
        if (x.op == KernelOp::Gemm && t.device == "NVIDIA H100 80GB HBM3")
        {
            // The README's sanity point: bf16 8192^3 in 1.54 ms (713 TFLOP/s).
            bool found = false;
            for (const GemmTime& g : t.gemm)
            {
                if (g.dtype == "bfloat16" && g.m == 8192 && g.n == 8192 && g.k == 8192)
                {
                    EXPECT_NEAR(2.0 * 8192 * 8192 * 8192 / (g.ms * 1e-3) / 1e12, 713, 2);
                    found = true;
                }
            }
            EXPECT_TRUE(found);
        }
    }
}

} // namespace
} // namespace fabricsim
