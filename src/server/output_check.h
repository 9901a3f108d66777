#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "answers/output_schema.h"
#include "api/openai_chat.h"
#include "config/config.h"
#include "server/request_context.h"

namespace switchyard::server {

// How a request's answers are checked against a JSON Schema (docs/answers.md#output-validation).
struct OutputCheck {
    std::shared_ptr<const answers::OutputSchema> schema;
    bool fall_back = true;  // a failing answer fails its attempt (else: returned, marked)
};

// The check for `request`: the schema it asks for (response_format, output_config.format,
// text.format), else its model group's. nullopt: none. A schema that cannot be compiled is not
// checked: `ctx.validation` says "skipped".
std::optional<OutputCheck> OutputCheckOf(RequestContext& ctx, const api::ChatRequest& request,
                                         std::string_view body, const config::ModelGroup* group);

// Checks an answer's text (nullopt: it has none to check, e.g. a refusal or a tool call) made by
// `deployment`: counts it, sets `ctx.validation` (passed, failed, skipped, unchecked) and returns
// what is wrong when it failed. A small check runs in place within a slice of work; one that needs
// more runs on the context's check pool, so the worker's other requests never wait for it. A
// check over its bound (answers::SchemaLimits) is "skipped": served as it is, never failed.
asio::awaitable<std::optional<std::string>> CheckOutput(RequestContext& ctx,
                                                        const OutputCheck& check,
                                                        std::optional<std::string> text,
                                                        std::string deployment);

}  // namespace switchyard::server
