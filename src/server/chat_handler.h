#pragma once

#include "server/request_context.h"

namespace switchyard::server {

// POST /v1/chat/completions: parse the request, admit it (client key, lane), read its options,
// plan its fallback chain and hand it to the attempt engine (engine/decide.h), the one layer that
// retries (docs/resilience.md#one-layer-retries): this coroutine executes the engine's actions —
// sends, waits, semantic fallbacks — records each outcome in health, headroom and budgets, and
// ends with the answer, the client's own error, or an honest error that lists every attempt and
// says when a deployment can serve again (or a static degradation, when configured).
asio::awaitable<void> ServeChat(RequestContext& ctx);

// POST /v1/messages: the same for clients of Anthropic's Messages API; requests and answers are
// translated when the serving deployment speaks the other API.
asio::awaitable<void> ServeMessages(RequestContext& ctx);

// POST /v1/embeddings: OpenAI's embeddings API through the same engine, for model groups with
// `mode: embeddings` (OpenAI-compatible deployments; answers pass through as they come).
asio::awaitable<void> ServeEmbeddings(RequestContext& ctx);

// POST /v1/responses: OpenAI's Responses API through the same engine. Deployments that speak it
// get the request as sent; others get it translated to chat completions (and on to Anthropic
// Messages), answers and streams translated back (api/responses.h).
asio::awaitable<void> ServeResponses(RequestContext& ctx);

}  // namespace switchyard::server
