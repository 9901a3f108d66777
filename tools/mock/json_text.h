#pragma once

#include <boost/json/kind.hpp>
#include <boost/json/parse_options.hpp>
#include <string>
#include <string_view>

namespace switchyard::mock {

// Appends `text` to `out` as a quoted, escaped JSON string. Used where a body is assembled from a
// fixed template directly into a reused buffer instead of through a boost::json::value.
void AppendJsonString(std::string& out, std::string_view text);

// Appends `text` escaped as inside a JSON string, without the quotes, so that a string can be
// written in pieces.
void AppendJsonStringContent(std::string& out, std::string_view text);

// "null", "a boolean", "an integer", "a number", "a string", "an array", "an object": the words
// OpenAI's type errors use for what a request sent.
std::string_view JsonKindName(boost::json::kind kind);

// Parse options for request bodies: the providers accept documents far deeper than Boost.JSON's
// default limit of 32 (deep tool schemas); so does the mock, well past what a gateway forwards.
boost::json::parse_options DeepJsonDocuments();

}  // namespace switchyard::mock
