#pragma once

#include <string>

#include "server/request_context.h"
#include "upstream/upstream_call.h"

namespace switchyard::server {

// Sets the headers that say who served: model group, deployment, model, attempt count, fallback
// depth and the provider's request id.
void SetServedHeaders(const RequestContext& ctx, http::fields& fields);

// Writes an upstream answer that was read whole (JSON success, or an error passed through):
// its status, content type and body, retry-after passed through, the served headers added.
asio::awaitable<void> WriteUpstreamAnswer(RequestContext& ctx,
                                          const http::response_header<>& header, std::string& body);

// Forwards an SSE stream downstream one complete event at a time (see chat_handler.cc). The first
// byte written is the commit point: a failure after it ends the stream with an OpenAI-format error
// event and a clean chunked terminator, never a silent truncation.
asio::awaitable<void> RelayStream(RequestContext& ctx, upstream::UpstreamCall& call);

}  // namespace switchyard::server
