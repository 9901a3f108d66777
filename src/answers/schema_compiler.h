#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <variant>

#include "answers/schema_tree.h"

namespace switchyard::answers {

// Compiles `schema` into a tree (json_schema.h says what is accepted), or says why it cannot,
// naming the place in the schema (`#/properties/age: minimum is not a number`).
std::variant<SchemaTree, std::string> CompileSchemaTree(const boost::json::value& schema);

}  // namespace switchyard::answers
