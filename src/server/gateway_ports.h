#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "core/error.h"
#include "engine/attempt_state.h"
#include "engine/executor.h"
#include "server/admission.h"
#include "server/attempt.h"
#include "server/client_watch.h"
#include "server/request_context.h"
#include "server/stored_answers.h"

// The engine's executor (src/engine/executor.h) acting over sockets: its ports for the gateway
// (docs/architecture.md#the-executor).
namespace switchyard::server {

// What the engine's walk carries between its steps, besides the engine's own state.
struct Walk {
    const AttemptSetup& setup;
    engine::RequestFacts facts;
    KeySettlement& settlement;
    ClientWatch& client;
    std::vector<core::AttemptNote> notes;
    std::chrono::milliseconds waited{0};  // since the last attempt, for the next attempt's note
    AttemptEnd last;                      // the last failed attempt
    const CacheSlot* cache = nullptr;     // where its answer is cached (docs/answers.md)
    // The deployment it last found without headroom, and how far apart that one can take
    // requests like it (0: unknown).
    std::size_t waited_for = 0;
    std::chrono::milliseconds spacing{0};
    AttemptRace race;  // a hedged attempt's and its hedge's (docs/resilience.md#hedged-attempts)
};

// Executes the engine's actions until the request is answered or the engine stops: returns the
// last action (kDone, kPassThrough or kGiveUp).
asio::awaitable<engine::Action> RunEngine(RequestContext& ctx, Walk& walk,
                                          engine::AttemptState& state);

}  // namespace switchyard::server
