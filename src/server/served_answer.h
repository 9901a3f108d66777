#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "api/openai_chat.h"
#include "server/request_context.h"
#include "upstream/upstream_call.h"

// What every answer an upstream served carries downstream, stream or whole: the headers that say
// who served it and the usage it reported; and the writing of a whole upstream answer.
namespace switchyard::server {

// Sets the headers that say who served: model group, deployment, model, attempt count, fallback
// depth and the provider's request id.
void SetServedHeaders(const RequestContext& ctx, http::fields& fields);
// The same, as header lines (AppendHeader).
void AppendServedHeaders(const RequestContext& ctx, std::string& lines);

// Notes the usage an answer or a stream event reports (tokens in and out) in the request's record.
void NoteUsage(RequestContext& ctx, std::string_view json);

// The Unix time translated answers carry as `created`.
std::int64_t UnixNow(const RequestContext& ctx);

// Writes an upstream answer that was read whole (JSON success, or an error passed through):
// its status, content type and body — translated to the client's API when `upstream` differs
// from it (a success body is translated by the caller first, where a refusal can still fail the
// attempt) — retry-after passed through, the served headers added.
asio::awaitable<void> WriteUpstreamAnswer(RequestContext& ctx,
                                          const upstream::ResponseHeader& header, std::string& body,
                                          api::Wire upstream);

}  // namespace switchyard::server
