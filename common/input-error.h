/*
 * Error raised for bad user input anywhere in fabricsim: it names the file, the field, what was
 * expected and what was found. The CLI turns it into exit code 2.
 */
#ifndef FABRICSIM_COMMON_INPUT_ERROR_H
#define FABRICSIM_COMMON_INPUT_ERROR_H

#include <stdexcept>
#include <string>

namespace fabricsim
{

/**
 * \brief Bad user input: file, field (JSON-pointer-like path), expected and found.
 */
class InputError : public std::runtime_error
{
  public:
    InputError(const std::string& file,
               const std::string& field,
               const std::string& expected,
               const std::string& found)
        : std::runtime_error(Format(file, field, expected, found))
        , m_file(file)
        , m_field(field)
        , m_expected(expected)
        , m_found(found)
    {
    }

    // Out of line so that the vtable and type_info live once, in fabricsim-common: a catch in
    // one shared library matches a throw from another.
    ~InputError() override;

    const std::string& File() const
    {
        return m_file;
    }

    const std::string& Field() const
    {
        return m_field;
    }

    const std::string& Expected() const
    {
        return m_expected;
    }

    const std::string& Found() const
    {
        return m_found;
    }

  private:
    /// The one-line message: "file: field 'f': expected E, found F".
    static std::string Format(const std::string& file,
                              const std::string& field,
                              const std::string& expected,
                              const std::string& found);

    std::string m_file;
    std::string m_field;
    std::string m_expected;
    std::string m_found;
};

} // namespace fabricsim

namespace ns3
{
// Temporary: call sites inside namespace ns3 still name it unqualified.
using fabricsim::InputError;
} // namespace ns3

#endif
