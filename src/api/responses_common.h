#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <string_view>

namespace switchyard::api {

// Internal to responses_answers.cc and responses_stream.cc.

// The settings of a Responses request that its response object repeats: instructions, tools,
// tool_choice, temperature, top_p, parallel_tool_calls, max_output_tokens, text, reasoning,
// metadata, store, previous_response_id — with the API's defaults where the request is silent.
boost::json::object ResponseEcho(const boost::json::object& request);

// Responses `usage` for a chat completions `usage` object.
boost::json::object ResponsesUsageOf(const boost::json::object& chat_usage);

// An id for a response object or an output item: `prefix` and the upstream id's tail (the part
// after its last '-' or '_'), so one upstream answer always gets the same ids.
std::string ResponsesId(std::string_view prefix, std::string_view upstream_id,
                        std::string_view suffix = {});

// A message output item with one output_text part (or a refusal part).
boost::json::object MessageItem(std::string_view id, std::string_view text, bool refusal,
                                std::string_view status);

// A function_call output item.
boost::json::object FunctionCallItem(std::string_view id, std::string_view call_id,
                                     std::string_view name, std::string_view arguments,
                                     std::string_view status);

}  // namespace switchyard::api
