#pragma once

#include "server/request_context.h"

namespace switchyard::server {

// POST /v1/chat/completions: scan the request, plan its fallback chain, and run the attempt loop —
// the one layer that retries (DESIGN 1.2-1.6). Each attempt's outcome is judged by
// policy::Classify; the loop moves to another healthy deployment at once when one can serve,
// waits (full-jitter backoff, retry-after as a minimum) only when none can, spends retries from
// the client's and the deployment's retry budgets, never starts a wait that would overrun the
// request's deadline, and ends with the answer, the client's own error, or an honest error that
// lists every attempt (or a static degradation, when configured).
asio::awaitable<void> ServeChat(RequestContext& ctx);

// POST /v1/messages: the same for clients of Anthropic's Messages API; requests and answers are
// translated when the serving deployment speaks the other API.
asio::awaitable<void> ServeMessages(RequestContext& ctx);

}  // namespace switchyard::server
