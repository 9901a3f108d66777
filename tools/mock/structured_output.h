#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>

namespace switchyard::mock {

// What a value generated from a JSON Schema holds where the schema leaves the choice open. One
// generator serves structured output and tool calls; they differ only here.
enum class SchemaFill {
    // Structured output (docs/mock.md#structured-output): every property of an object, strings
    // "text", numbers 1.5.
    kStructuredOutput,
    // Tool arguments: the `required` properties of an object (every property when it lists none),
    // strings "value", numbers 1.
    kToolArguments,
};

// A value that matches `schema`, so that a client that validates it against the schema accepts
// it. In order: `const`; the first `enum` value; the first choice of `anyOf`/`oneOf` that is not
// `{"type":"null"}`; the first of `allOf`; a local `$ref` (`#`, `#/$defs/...`) resolved within
// `schema`; otherwise a value of its type (the first non-null one of a list; `object` if there is
// none but `properties`, else `string`):
//   string   the fill's text, or a sample of a known `format` (date-time, date, time, email, uri,
//            uuid, ipv4, ipv6, hostname), repeated up to `minLength` and cut to `maxLength`;
//   integer, number  `minimum` (rounded up for integers), just above `exclusiveMinimum`, else the
//            fill's number lowered below `maximum`/`exclusiveMaximum` when those are smaller;
//   boolean  true;  null  null;
//   array    one value per `prefixItems` entry, else `minItems` (at least one) values of `items`;
//   object   the properties the fill asks for, each generated alike.
// Deterministic. Bounded for schemas that refer to themselves or multiply: deeper than 16 levels
// a value is null, and after 10,000 values every further one is null.
boost::json::value SchemaExample(const boost::json::value& schema, SchemaFill fill);

// Structured output (docs/mock.md#structured-output): a request that asks for a JSON Schema gets
// a reply that is one JSON document: SchemaExample with kStructuredOutput — or, with the
// `invalid_output` fault, one that breaks the schema: an object without its required properties,
// or a value of another type.
std::string StructuredReply(const boost::json::value& schema, bool invalid);

// The arguments of a call to a tool whose parameter schema is `schema` (null: the tool has none),
// as JSON text: SchemaExample with kToolArguments, or `{}` when that is not an object (arguments
// are always an object).
std::string ToolArguments(const boost::json::value* schema);

// The schema of chat completions' `response_format` (json_schema) or Anthropic's
// `output_config.format`, as JSON text; empty when the request asks for none.
std::string OutputSchemaOf(const boost::json::object& request);

}  // namespace switchyard::mock
