#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/error.h"

namespace switchyard::api {

// The API a client or a deployment speaks: OpenAI Chat Completions, Anthropic Messages, or
// OpenAI's Responses API.
enum class Wire { kOpenAi, kAnthropic, kResponses };

// What a request asks for: a chat answer (chat completions or Anthropic messages) or embeddings.
// A model group serves one of them (config::GroupMode).
enum class Endpoint { kChat, kEmbeddings };

// What routing needs from a chat request, read once from the body. `body` is the canonical form
// (OpenAI chat completions); a request that arrived in Anthropic's format keeps its original too.
struct ChatRequest {
    Wire wire = Wire::kOpenAi;  // the client's API
    Endpoint endpoint = Endpoint::kChat;
    boost::json::object original;  // Anthropic clients: their request, gateway fields removed
    // The parsed request, kept for rewriting; null when it was only scanned (see `raw`).
    boost::json::value body;
    // The client's bytes when `body` was not built: parsed on demand. Must outlive the request.
    std::string_view raw;
    std::string_view raw_model;  // the model's bytes within `raw` (a scanned request only)
    std::string model;  // the model group the client named (models[0] when `models` is used)
    bool stream = false;
    bool include_usage = false;   // stream_options.include_usage
    std::int64_t max_tokens = 0;  // max_completion_tokens or max_tokens; 0 when absent
    // Gateway fields, stripped before the request goes upstream:
    std::vector<std::string> models;  // `models`: groups in priority order (OpenRouter style)
    std::optional<std::vector<std::string>> fallbacks;  // `fallbacks`: overrides the group's
    bool has_gateway_fields = false;
    // Responses clients: why the request cannot be carried to a deployment that speaks only
    // Chat Completions or Anthropic Messages (`body` is then null); such a deployment answers it
    // with this 400, one that speaks the Responses API gets `original` as sent.
    std::optional<core::LocalError> cannot_cross;
};

// What a fallback entry changes in the request besides the model
// (docs/resilience.md#a-fallback-changes-the-product).
struct RequestOverrides {
    const std::optional<std::string>* system_prompt = nullptr;  // replaces system messages
    const std::vector<std::pair<std::string, std::string>>* params = nullptr;  // name -> JSON
    // Stream upstream (with usage) although the client asked for one JSON body.
    bool stream_upstream = false;
};

// Reads an OpenAI Responses body (POST /v1/responses): `model` (or `models`, `fallbacks` as for
// chat), `input` required, `stream`, `max_output_tokens`; `original` keeps the request (gateway
// fields removed) and `body` its chat completions form when it has one (see cannot_cross;
// api/responses.h lists what crosses).
std::variant<ChatRequest, core::LocalError> ParseOpenAiResponses(std::string_view body);

// A client's request body as a JSON object, or the 400 that says why it is not one.
std::variant<boost::json::value, core::LocalError> ParseRequestObject(std::string_view body);

// Reads an OpenAI embeddings body (POST /v1/embeddings) into the canonical request, endpoint
// kEmbeddings: `model` (or `models`, `fallbacks` as for chat), `input` a string, a non-empty array
// of strings, an array of integers (tokens) or an array of arrays of integers, `encoding_format`
// "float" or "base64", `dimensions` a positive integer. Errors in OpenAI's terms (400 with the
// offending param; kModelNotFound without a model).
std::variant<ChatRequest, core::LocalError> ParseOpenAiEmbeddings(std::string_view body);

// Scans an OpenAI chat completions body (`body` must outlive the result: a plain request is only
// scanned and keeps a view of it). Errors: kMalformedJson (not JSON / not an object),
// kModelNotFound (no string `model` and no `models`), kInvalidRequest (`stream` not a boolean,
// `models` / `fallbacks` not arrays of strings).
std::variant<ChatRequest, core::LocalError> ParseOpenAiChat(std::string_view body);

// The same from an already parsed canonical (OpenAI-format) request object.
std::variant<ChatRequest, core::LocalError> ChatRequestFromCanonical(boost::json::value body);

// Scans an Anthropic Messages request: gateway fields (`models`, `fallbacks`) are taken out, the
// rest is translated to the canonical form (a feature that cannot be carried over is a 400 naming
// it) and kept as sent for Anthropic deployments.
std::variant<ChatRequest, core::LocalError> ParseAnthropicMessages(std::string_view body);

// The body to send upstream: `model` replaced, gateway fields removed, and a fallback entry's
// system prompt and parameters applied. Callers skip this when nothing changes and forward the
// client's bytes as they came.
std::string RenderUpstreamBody(const ChatRequest& request, std::string_view model,
                               const RequestOverrides& overrides);

}  // namespace switchyard::api
