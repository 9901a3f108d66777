#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace switchyard::config {

// The stream modes by name, as `server.stream_mode`, a key's `stream_mode`, the admin API and the
// header x-switchyard-stream-mode spell them: "interactive" and "background". Nothing else is one.
std::optional<StreamMode> ParseStreamMode(std::string_view text);
std::string_view Name(StreamMode mode);
// What a refusal of any other value lists.
inline constexpr std::string_view kStreamModeChoices = "'interactive' or 'background'";

// The bounds of a client key's fields, for the config file and the admin API alike.
inline constexpr std::int64_t kMaxKeyRpm = 1'000'000'000;
inline constexpr std::int64_t kMaxKeyTpm = 1'000'000'000'000;
inline constexpr std::int64_t kMaxKeySlowStartMs = 24LL * 3600 * 1000;
inline constexpr std::size_t kMinKeyLength = 16;  // characters of a plaintext key

// One thing wrong with a client key.
struct ClientKeyProblem {
    std::string field;    // the offending field, as the YAML config and the admin JSON name it
    std::string message;  // a sentence naming the field, without a final period
};

// A plaintext key (from the environment or an admin request) that is too short to be one.
std::optional<ClientKeyProblem> ValidateKeyText(std::string_view key);

// Every problem with the fields of `key` against `config`, in field order (name, key, rpm, tpm,
// slow_start_ms, monthly_budget, models, lane); empty when it is a valid key of `config`:
//  - name: core::IsSafeName;
//  - key: its SHA-256 is not the master key's;
//  - rpm 0..kMaxKeyRpm, tpm 0..kMaxKeyTpm, slow_start 0..kMaxKeySlowStartMs, monthly_budget >= 0;
//  - models: each names a model group of `config`;
//  - lane_name: names a lane of `config.limits` (`lane` is not read: it follows from the name).
// What needs more than one key (unique names and hashes) is the caller's.
std::vector<ClientKeyProblem> ValidateClientKey(const ClientKey& key, const Config& config);
// The same, with `has_group` telling whether a model group of that name exists: the loader passes
// an index, so that many keys naming many groups are checked in n log n rather than n².
std::vector<ClientKeyProblem> ValidateClientKey(
    const ClientKey& key, const Config& config,
    const std::function<bool(std::string_view)>& has_group);

}  // namespace switchyard::config
