#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "answers/stored_answer.h"
#include "api/openai_chat.h"
#include "core/arena_allocator.h"
#include "core/asio.h"
#include "observe/request_record.h"
#include "server/server_context.h"
#include "upstream/watchdog.h"

namespace switchyard::server {

class RequestTrace;  // server/request_trace.h: whoever starts, uses or ends a trace includes it

// A downstream request; its header fields live in the session's per-request arena.
using RequestAllocator = core::ArenaAllocator<char>;
using Request = http::request<http::string_body, http::basic_fields<RequestAllocator>>;

// One downstream request on its way through a handler: the connection it arrived on and what
// will be recorded about it when it ends. Owned by the session coroutine.
struct RequestContext {
    Worker& worker;
    beast::tcp_stream& stream;
    upstream::Watch& watch;  // the downstream socket's deadline
    Request request;
    std::string path;  // target without the query
    bool keep_alive = true;
    std::chrono::steady_clock::time_point start;
    observe::RequestRecord record;
    // Storage behind the record's views.
    std::string model_group;
    std::string deployment;
    std::string_view region;  // the deployment's (the config outlives the request)
    std::string upstream_request_id;
    std::string error;
    std::string model;                    // the model that answered (the deployment's)
    std::string key_name;                 // the client key's name
    api::Wire wire = api::Wire::kOpenAi;  // the API the client speaks: local replies use it
    api::Endpoint endpoint = api::Endpoint::kChat;
    // A chunked stream's head went downstream and its last chunk has not: a failure must end it
    // with an error event.
    bool stream_open = false;
    // The sequence_number of the next event of a Responses stream written downstream: an error
    // event that ends the stream continues the numbering.
    std::int64_t next_sequence = 0;
    // Extra headers for a local reply (Allow on a 405, retry-after on a 429).
    std::vector<std::pair<std::string, std::string>> reply_headers;
    // What goes downstream, captured for an idempotency key or the response cache (null: not
    // kept). Owned by the handler.
    answers::AnswerCapture* capture = nullptr;
    // The request runs to its end even if its client leaves (it carries an idempotency key: a
    // retry of it will want the answer).
    bool detached = false;
    // Its answer against a requested JSON schema: passed, failed, unchecked, skipped (empty: no
    // schema). Sent as x-switchyard-validation where the head is not yet sent.
    std::string_view validation;
    // Its spans, when it is traced (engine requests only).
    std::unique_ptr<RequestTrace> trace;

    // The runtime this request started on: its config, health, headroom and lanes, kept to its
    // end whatever a reload does meanwhile.
    std::shared_ptr<Runtime> runtime = worker.context.runtime.Current();

    ServerContext& Context() const { return worker.context; }
    const config::Config& Config() const { return *runtime->config; }
    routing::DeploymentHealth& Health() const { return *runtime->health; }
    limits::Headroom& Headroom() const { return *runtime->headroom; }
    limits::Lanes& Lanes() const { return *runtime->lanes; }
};

}  // namespace switchyard::server
