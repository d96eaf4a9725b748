/*
 * Reference of every fabricsim ns-3 type: attributes (name, type, default, help) and trace
 * sources (name, help, callback signature), generated from the TypeId registry so the page
 * (docs/attributes.md) cannot drift from the code.
 */
#ifndef FABRICSIM_ATTRIBUTE_DOC_H
#define FABRICSIM_ATTRIBUTE_DOC_H

#include <string>

namespace fabricsim
{

/// Markdown for all TypeIds in the fabricsim groups (Rdma, Fabric).
std::string AttributeReferenceMarkdown();

} // namespace fabricsim

#endif
