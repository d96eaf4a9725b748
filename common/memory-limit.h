/*
 * The memory a run may use. fabricsim caps its own address space (RLIMIT_AS) at start, so that an
 * out-of-memory that estimates did not foresee ends in std::bad_alloc, reported as exit 2 naming
 * the limit, rather than in the kernel's OOM killer taking the machine down with it.
 */
#ifndef FABRICSIM_COMMON_MEMORY_LIMIT_H
#define FABRICSIM_COMMON_MEMORY_LIMIT_H

#include <cstdint>
#include <string>

namespace fabricsim
{

/// This machine's physical memory in bytes (0 when unknown).
uint64_t PhysicalMemoryBytes();

/// 80% of the physical memory: below it, so that the machine stays usable.
uint64_t DefaultMemoryLimitBytes();

/// Caps this process's address space at \p bytes (never raising a tighter cap already set) and
/// remembers it for MemoryLimitBytes. Under ASan only remembers it (ASan's shadow memory is
/// terabytes of address space).
void SetMemoryLimit(uint64_t bytes);

/// The limit SetMemoryLimit set, else DefaultMemoryLimitBytes().
uint64_t MemoryLimitBytes();

/// "19.2 GB" for error messages.
std::string DescribeBytes(double bytes);

/**
 * \brief Turns a crash from memory exhaustion into the out-of-memory exit.
 *
 * Some allocations do not throw when memory runs out (ns-3's Object takes its aggregate table
 * from malloc unchecked): they crash with SIGSEGV instead. On SIGSEGV or SIGBUS with the address
 * space within 5% of the limit, this prints \p message, runs \p cleanup (best effort) and exits
 * with code 2; any other crash stays a crash. Under ASan nothing is installed (ASan reports).
 */
void ReportOutOfMemoryCrashes(const std::string& message, void (*cleanup)() noexcept);

} // namespace fabricsim

#endif
