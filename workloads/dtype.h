/*
 * Numeric element types of weights, activations and the KV cache.
 */
#ifndef FABRICSIM_WORKLOADS_DTYPE_H
#define FABRICSIM_WORKLOADS_DTYPE_H

#include <optional>
#include <string>

namespace fabricsim
{

/**
 * \brief Element type of a tensor; decides bytes per element and which peak FLOP rate applies.
 */
enum class DType
{
    Fp32,
    Fp16,
    Bf16,
    Fp8
};

/**
 * \brief Bytes per element: fp32 4, fp16/bf16 2, fp8 1.
 */
double DTypeBytes(DType t);

/**
 * \brief Canonical short name: "fp32", "fp16", "bf16", "fp8" (the keys of HardwareSpec peaks).
 */
std::string DTypeName(DType t);

/**
 * \brief Parse a dtype name as HF and users write it: "bfloat16"/"bf16", "float16"/"fp16"/"half",
 * "float32"/"fp32"/"float", "float8_e4m3fn"/"float8_e5m2"/"fp8"/"e4m3"/"e5m2" (case-insensitive).
 * \return the type, or nothing when the name is unknown.
 */
std::optional<DType> ParseDType(const std::string& name);

} // namespace fabricsim

#endif
