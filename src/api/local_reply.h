#pragma once

#include <string>

#include "core/error.h"

namespace switchyard::api {

// A response the gateway makes itself: status plus a body in the client's wire format.
struct LocalReply {
    unsigned status = 500;
    std::string body;  // application/json
};

// OpenAI's error envelope: {"error":{"message","type","param","code"}} (WIRE.md A.2.1).
LocalReply RenderOpenAiError(const core::LocalError& error);

}  // namespace switchyard::api
