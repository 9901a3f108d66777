#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "api/openai_chat.h"

namespace switchyard::api {

// Structured output in each API (docs/answers.md#output-validation).

// The JSON Schema a request asks its answer to follow: chat completions'
// `response_format: {type: json_schema, json_schema: {schema}}`, Anthropic's
// `output_config: {format: {type: json_schema, schema}}`, the Responses API's
// `text: {format: {type: json_schema, schema}}`. nullopt: none asked.
std::optional<boost::json::value> RequestedSchema(const boost::json::object& request, Wire wire);

// The text of a whole answer in `wire` that a schema applies to (the assistant's text); nullopt
// when there is none to check: a refusal, a tool call, no text at all.
std::optional<std::string> AnswerText(std::string_view body, Wire wire);

// The same for a stream in `wire`, fed event by event.
class StreamText final {
  public:
    explicit StreamText(Wire wire) : wire_(wire) {}
    void Feed(std::string_view name, std::string_view data);
    // nullopt as for AnswerText.
    std::optional<std::string> Text() const;

  private:
    Wire wire_;
    std::string text_;
    bool other_ = false;  // a refusal or a tool call: nothing to check
};

}  // namespace switchyard::api
