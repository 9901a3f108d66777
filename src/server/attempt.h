#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "api/openai_chat.h"
#include "config/config.h"
#include "core/error.h"
#include "engine/attempt_limits.h"
#include "policy/outcome.h"
#include "routing/fallback_plan.h"
#include "server/attempt_race.h"
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

// How an attempt failed, as one value: the engine's reading of it (its class, what may follow,
// the provider's minimum wait), what the client is told if it is the last failure, and — when
// the upstream's error answer was read whole — that answer, which a request the provider refused
// as wrong gets unchanged.
struct AttemptFailure {
    policy::Outcome outcome;
    core::LocalError error;
    std::optional<upstream::ResponseHeader> header;
    std::string body;
};

// How one attempt ended.
struct AttemptEnd {
    // A response went downstream: a success, or a stream past its commit point. A stream that
    // failed after it is answered *and* failed.
    bool answered = false;
    // The upstream's HTTP status as read: of its answer, or of the error event that ended its
    // stream; 0 when there was no usable answer (a transport or protocol failure).
    unsigned status = 0;
    std::optional<AttemptFailure> failure;    // none: the attempt succeeded
    api::Wire upstream = api::Wire::kOpenAi;  // the API the deployment speaks
    std::optional<std::chrono::milliseconds> time_to_first_byte;
    // A stream's first content event, from the attempt's start (the commit point in the
    // default stream mode).
    std::optional<std::chrono::steady_clock::duration> time_to_first_token;
    bool streamed = false;                                 // the upstream answered with a stream
    std::optional<std::chrono::milliseconds> longest_gap;  // a stream's, between content events
    // The timeout that ended it was the request's own deadline (the attempt was its last
    // resort), shorter than the deployment's limits: a fact about the request, not about the
    // deployment's health.
    bool cut_by_deadline = false;
    // Racing (a hedged attempt or its hedge): another attempt of the race answered first, and
    // this one was aborted or never sent (docs/resilience.md#hedged-attempts).
    bool lost = false;

    // Marks the attempt failed, the only way it becomes so; `status` as above.
    void Fail(core::LocalError error, policy::Outcome outcome, unsigned status_read = 0) {
        status = status_read;
        failure = AttemptFailure{outcome, std::move(error), std::nullopt, {}};
    }
    // The engine's reading: the failure's, else a success.
    policy::Outcome Outcome() const { return failure ? failure->outcome : policy::Outcome{}; }
};

// One attempt on `deployment` as a member of `stage`, within `limits`: builds the request in the
// deployment's API, sends it, and either answers the client (a success, relayed or streamed) or
// reads the failure for the classifier. Rate-limit headers on the answer lower the deployment's
// headroom. Sets the served-by fields of `ctx` as it goes. `race` (null: it runs alone): the
// race it runs in, for the client with the other attempt in it.
asio::awaitable<AttemptEnd> RunAttempt(RequestContext& ctx, const AttemptSetup& setup,
                                       const config::Deployment& deployment,
                                       routing::PlannedGroup stage,
                                       const engine::AttemptLimits& limits, AttemptRace* race);

}  // namespace switchyard::server
