#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <string_view>

namespace switchyard::mock {

// Structured output (docs/mock.md#structured-output): a request that asks for a JSON Schema gets
// a reply that is one JSON document. It matches the schema — each required (or listed) property
// with a value of its type: the first `enum` or `const`, "text", 1, 1.5, true, null, one array
// element, nested objects alike — or, with the `invalid_output` fault, breaks it: an object
// without its required properties, or a value of another type.
std::string StructuredReply(const boost::json::value& schema, bool invalid);

// The schema of chat completions' `response_format` (json_schema) or Anthropic's
// `output_config.format`, as JSON text; empty when the request asks for none.
std::string OutputSchemaOf(const boost::json::object& request);

}  // namespace switchyard::mock
