#include "unit-conversions.h"

namespace fabricsim
{

UnitOverflow::UnitOverflow(const std::string& what)
    : std::overflow_error(what)
{
}

UnitOverflow::~UnitOverflow() = default;

namespace units
{

void
ThrowOverflow(const char* what, const std::string& detail)
{
    throw UnitOverflow(std::string(what) + " does not fit 64 bits: " + detail);
}

} // namespace units
} // namespace fabricsim
