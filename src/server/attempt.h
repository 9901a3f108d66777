#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "api/openai_chat.h"
#include "config/config.h"
#include "core/error.h"
#include "policy/outcome.h"
#include "routing/fallback_plan.h"
#include "server/client_watch.h"
#include "server/output_check.h"
#include "server/request_context.h"
#include "upstream/upstream_call.h"

namespace switchyard::server {

// How one request sends each attempt: what it carries to every deployment.
struct AttemptSetup {
    const api::ChatRequest& request;
    const std::string& client_body;  // the client's bytes, forwarded when nothing changes
    std::chrono::steady_clock::time_point deadline;
    config::Timeouts timeouts;           // the config's, with the request's overrides
    bool background = false;             // stream mode
    bool stream_upstream = false;        // a JSON request streamed upstream and assembled
    ClientWatch* client = nullptr;       // aborts the attempt if the client goes away
    const OutputCheck* check = nullptr;  // the JSON schema answers must match (null: none)
};

// How one attempt ended.
struct AttemptEnd {
    // A response went downstream: a success, or a stream past its commit point. A stream that
    // failed after it is answered *and* failed: `outcome` says how.
    bool answered = false;
    policy::Outcome outcome;
    unsigned status = 0;                             // 0: no HTTP answer
    std::optional<upstream::ResponseHeader> header;  // of an upstream error answer read whole
    std::string body;                                // that answer's body
    core::LocalError error;                          // what went wrong, as the client would be told
    api::Wire upstream = api::Wire::kOpenAi;         // the API the deployment speaks
    std::optional<std::chrono::milliseconds> time_to_first_byte;
    // A stream's first content event, from the attempt's start (the commit point in the
    // default stream mode).
    std::optional<std::chrono::steady_clock::duration> time_to_first_token;
    // The timeout that ended it was the request's own deadline, shorter than the deployment's
    // configured one: a fact about the request, not about the deployment's health.
    bool cut_by_deadline = false;
};

// One attempt on `deployment` as a member of `stage`: builds the request in the deployment's API,
// sends it, and either answers the client (a success, relayed or streamed) or reads the failure
// for the classifier. Rate-limit headers on the answer lower the deployment's headroom. Sets the
// served-by fields of `ctx` as it goes.
asio::awaitable<AttemptEnd> RunAttempt(RequestContext& ctx, const AttemptSetup& setup,
                                       const config::Deployment& deployment,
                                       routing::PlannedGroup stage);

}  // namespace switchyard::server
