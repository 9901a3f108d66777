#pragma once

// Runs one request through the executor (src/engine/executor.h) for its tests.

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <exception>
#include <functional>

#include "engine/executor.h"
#include "engine/request_options.h"
#include "engine/world.h"
#include "routing/fallback_plan.h"

namespace switchyard::engine::testing {

// One request for the group `chat` of `around.config`, with the policy the gateway derives for a
// request without headers, executed to its end on an io_context of its own.
inline Executed RunChatRequest(const Surroundings& around, RequestFacts& facts, Ports& ports,
                               std::chrono::milliseconds deadline) {
    int outside = 0;
    const std::function<double()> draw = [] { return 0.5; };
    const std::vector<Stage> chain =
        PlanStages(routing::PlanGroups(around.config, {"chat"}, std::nullopt, true), around.health,
                   draw, std::nullopt, outside);
    const auto options = ReadRequestOptions(
        around.config, [](std::string_view) { return std::nullopt; }, nullptr, false, 0);
    AttemptState state(std::get<RequestOptions>(options).policy, chain,
                       around.clock.Now() + deadline);
    boost::asio::io_context io;
    Executed executed;
    boost::asio::co_spawn(io, Execute(state, around, facts, ports),
                          [&](std::exception_ptr error, Executed e) {
                              if (error) std::rethrow_exception(error);
                              executed = e;
                          });
    io.run();
    return executed;
}

}  // namespace switchyard::engine::testing
