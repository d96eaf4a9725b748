// Hugging Face dtype names and their sizes.
#include "dtype.h"

#include <gtest/gtest.h>

using namespace fabricsim;

TEST(DTypes, HfNames)
{
    EXPECT_EQ(*ParseDType("bfloat16"), DType::Bf16);
    EXPECT_EQ(*ParseDType("torch.float16"), DType::Fp16);
    EXPECT_EQ(*ParseDType("float8_e4m3fn"), DType::Fp8);
    EXPECT_EQ(*ParseDType("float32"), DType::Fp32);
    EXPECT_FALSE(ParseDType("int4"));
    EXPECT_EQ(DTypeBytes(DType::Bf16), 2.0);
    EXPECT_EQ(DTypeBytes(DType::Fp8), 1.0);
    EXPECT_EQ(DTypeBytes(DType::Fp32), 4.0);
}
