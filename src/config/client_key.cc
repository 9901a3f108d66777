#include "config/client_key.h"

#include <fmt/format.h>

#include "core/names.h"
#include "core/sha256.h"

namespace switchyard::config {
namespace {

// A whole-number field within [0, max].
void CheckCount(std::string_view field, std::int64_t value, std::int64_t max,
                std::vector<ClientKeyProblem>& problems) {
    if (value >= 0 && value <= max) return;
    problems.push_back(
        {std::string(field), fmt::format("'{}' must be a whole number from 0 to {}", field, max)});
}

}  // namespace

std::optional<StreamMode> ParseStreamMode(std::string_view text) {
    if (text == "interactive") return StreamMode::kInteractive;
    if (text == "background") return StreamMode::kBackground;
    return std::nullopt;
}

std::string_view Name(StreamMode mode) {
    switch (mode) {
        case StreamMode::kInteractive:
            return "interactive";
        case StreamMode::kBackground:
            return "background";
    }
    return "interactive";
}

std::optional<ClientKeyProblem> ValidateKeyText(std::string_view key) {
    if (key.size() >= kMinKeyLength) return std::nullopt;
    return ClientKeyProblem{
        "key", fmt::format("'key' must be at least {} characters long", kMinKeyLength)};
}

std::vector<ClientKeyProblem> ValidateClientKey(const ClientKey& key, const Config& config) {
    return ValidateClientKey(
        key, config, [&](std::string_view name) { return config.FindGroup(name) != nullptr; });
}

std::vector<ClientKeyProblem> ValidateClientKey(
    const ClientKey& key, const Config& config,
    const std::function<bool(std::string_view)>& has_group) {
    std::vector<ClientKeyProblem> problems;
    if (!core::IsSafeName(key.name)) {
        problems.push_back({"name", fmt::format("'name' must be 1 to {} visible ASCII characters "
                                                "without spaces, quotes or backslashes",
                                                core::kMaxNameLength)});
    }
    const Secret& master = config.server.master_key;
    if (!key.sha256.empty() && !master.Empty() && key.sha256 == core::Sha256Hex(master.Reveal())) {
        // The master key is never limited: as a client key it would silently escape the key's
        // limits.
        problems.push_back(
            {"key", "'key' is the master key, which is never limited: it cannot be a client key"});
    }
    CheckCount("rpm", key.rpm, kMaxKeyRpm, problems);
    CheckCount("tpm", key.tpm, kMaxKeyTpm, problems);
    CheckCount("slow_start_ms", key.slow_start.count(), kMaxKeySlowStartMs, problems);
    if (!(key.monthly_budget >= 0)) {
        problems.push_back({"monthly_budget", "'monthly_budget' must be a number >= 0"});
    }
    for (const std::string& group : key.models) {
        if (!has_group(group)) {
            problems.push_back(
                {"models", "'models' names unknown model group '" + core::Printable(group) + "'"});
        }
    }
    if (!config.limits.FindLane(key.lane_name)) {
        std::string lanes;
        for (const Lane& lane : config.limits.lanes) {
            lanes += (lanes.empty() ? "" : ", ") + lane.name;
        }
        problems.push_back({"lane", "'lane' names unknown lane '" + core::Printable(key.lane_name) +
                                        "' (configured: " + lanes + ")"});
    }
    return problems;
}

}  // namespace switchyard::config
