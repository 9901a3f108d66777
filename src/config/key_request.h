#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "config/config.h"
#include "core/error.h"

namespace switchyard::config {

// What a POST /admin/keys body asks for.
struct KeyRequest {
    config::ClientKey key;
    std::string plaintext;  // the generated key, to hand out once; empty when the body chose one
};

// Reads a POST /admin/keys body (a JSON object of name, key or key_sha256, rpm, tpm,
// monthly_budget, models, lane, fallbacks, stream_mode, slow_start_ms) against `config`. Each
// field's JSON type is checked here, its bounds by config::ValidateClientKey; the first problem is
// the refusal, with the field as its param.
std::variant<KeyRequest, core::LocalError> ParseKeyRequest(std::string_view body,
                                                           const config::Config& config);

// The body that ParseKeyRequest reads back as `key` (its hash as key_sha256): how a key added at
// runtime travels to the other replicas of a fleet (docs/state.md).
boost::json::object KeyRequestBody(const config::ClientKey& key);

}  // namespace switchyard::config
