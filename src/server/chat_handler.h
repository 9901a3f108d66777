#pragma once

#include "server/request_context.h"

namespace switchyard::server {

// POST /v1/chat/completions: scan the request, pick a deployment of the named model group, send
// the request upstream and relay the answer — whole for JSON, event by event for SSE.
asio::awaitable<void> ServeChat(RequestContext& ctx);

}  // namespace switchyard::server
