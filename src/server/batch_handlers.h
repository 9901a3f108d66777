#pragma once

#include "server/request_context.h"

namespace switchyard::server {

// True for the paths of the Batch APIs: /v1/files..., /v1/batches..., /v1/messages/batches....
bool IsBatchApiPath(std::string_view path);

// The Batch APIs (docs/batches.md): OpenAI's files (POST/GET /v1/files, GET/DELETE
// /v1/files/{id}, GET /v1/files/{id}/content) and batches (POST/GET /v1/batches, GET
// /v1/batches/{id}, POST /v1/batches/{id}/cancel), and Anthropic's message batches (POST/GET
// /v1/messages/batches, GET/DELETE .../{id}, GET .../{id}/results, POST .../{id}/cancel). A client
// key sees only what it made; the master key (or a gateway without keys) sees everything.
asio::awaitable<void> ServeBatchApi(RequestContext& ctx);

}  // namespace switchyard::server
