#pragma once

#include <variant>

#include "core/error.h"
#include "engine/attempt_state.h"
#include "server/gateway_ports.h"
#include "server/request_context.h"

namespace switchyard::server {

// How a request that no attempt answered ends.
using Unanswered = std::variant<core::LocalError, engine::Action>;

// The one place that writes the answer of a request no attempt answered: a refusal before any
// attempt, the provider's answer to a client error passed through, or the engine's give-up (an
// error or the static degradation).
asio::awaitable<void> WriteUnanswered(RequestContext& ctx, Walk* walk,
                                      const Unanswered& unanswered);

}  // namespace switchyard::server
