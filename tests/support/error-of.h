/*
 * ErrorOf: the InputError a call throws, for tests that check its file, field, expected and
 * found; a test failure when it throws none.
 */
#ifndef FABRICSIM_TESTS_ERROR_OF_H
#define FABRICSIM_TESTS_ERROR_OF_H

#include "input-error.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace test
{

template <typename F>
InputError
ErrorOf(F f)
{
    try
    {
        f();
    }
    catch (const InputError& e)
    {
        return e;
    }
    ADD_FAILURE() << "no InputError";
    return InputError("", "", "", "");
}

} // namespace test
} // namespace fabricsim

#endif
