#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "config/config.h"
#include "core/error.h"

namespace switchyard::server {

// What a POST /admin/keys body asks for.
struct KeyRequest {
    config::ClientKey key;
    std::string plaintext;  // the generated key, to hand out once; empty when the body chose one
};

// Reads a POST /admin/keys body (a JSON object of name, key, rpm, tpm, monthly_budget, models,
// lane, fallbacks, stream_mode, slow_start_ms) against `config`. Each field's JSON type is checked
// here, its bounds by config::ValidateClientKey; the first problem is the refusal, with the field
// as its param.
std::variant<KeyRequest, core::LocalError> ParseKeyRequest(std::string_view body,
                                                           const config::Config& config);

}  // namespace switchyard::server
