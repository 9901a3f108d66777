#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "server/request_context.h"

namespace switchyard::server {

// Throws where a test asks for it with `x-switchyard-test-fault: NAME`, so the integration tests
// can prove that a failure inside a handler still ends in exactly one answer. Compiled in only
// with SWITCHYARD_TEST_FAULTS (the dev and asan builds the tests run); a no-op in release builds.
//  - before-answer: in the chat handler, before any attempt;
//  - mid-stream: in the relay, right after a stream's first events went downstream.
inline void ThrowIfTestFault([[maybe_unused]] const RequestContext& ctx,
                             [[maybe_unused]] std::string_view name) {
#ifdef SWITCHYARD_TEST_FAULTS
    const auto it = ctx.request.find("x-switchyard-test-fault");
    if (it != ctx.request.end() && it->value() == name) {
        throw std::runtime_error("test fault '" + std::string(name) + "'");
    }
#endif
}

}  // namespace switchyard::server
