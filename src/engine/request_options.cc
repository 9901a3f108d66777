#include "engine/request_options.h"

#include <algorithm>
#include <charconv>

#include "config/client_key.h"
#include "core/names.h"

namespace switchyard::engine {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kMaxOverride{10 * 60 * 1000};
constexpr std::string_view kStreamModeHeader = "x-switchyard-stream-mode";
constexpr std::string_view kResidencyHeader = "x-switchyard-residency";

}  // namespace

int HeaderInt(const HeaderLookup& header, std::string_view name) {
    const std::optional<std::string_view> text = header(name);
    if (!text) return -1;
    int value = -1;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    return ec == std::errc() && end == text->data() + text->size() && value >= 0 ? value : -1;
}

std::variant<RequestOptions, core::LocalError> ReadRequestOptions(const config::Config& config,
                                                                  const HeaderLookup& header,
                                                                  const config::ClientKey* key,
                                                                  bool stream,
                                                                  std::int64_t max_tokens) {
    RequestOptions o;
    o.deadline = config.retry.deadline;
    for (const char* name : {"x-switchyard-deadline-ms", "x-switchyard-timeout-total-ms"}) {
        if (const int ms = HeaderInt(header, name); ms > 0) {
            o.deadline = std::min(milliseconds(ms), kMaxOverride);
        }
    }
    o.timeouts = config.timeouts;
    if (const int ms = HeaderInt(header, "x-switchyard-timeout-step-ms"); ms > 0) {
        o.timeouts.total = std::min(milliseconds(ms), kMaxOverride);
    }
    if (const int ms = HeaderInt(header, "x-switchyard-timeout-chunk-ms"); ms > 0) {
        o.timeouts.chunk = std::min(milliseconds(ms), kMaxOverride);
        o.timeouts.first_token = std::min(o.timeouts.first_token, o.timeouts.chunk);
    }
    o.background = config.server.stream_mode == config::StreamMode::kBackground;
    if (key != nullptr && key->stream_mode) {
        o.background = *key->stream_mode == config::StreamMode::kBackground;
    }
    if (const auto text = header(kStreamModeHeader)) {
        const std::optional<config::StreamMode> mode = config::ParseStreamMode(*text);
        if (!mode) {
            return core::LocalError{core::ErrorKind::kInvalidRequest,
                                    "Unknown stream mode '" + core::Printable(*text) + "' in " +
                                        std::string(kStreamModeHeader) + ": it must be " +
                                        std::string(config::kStreamModeChoices) + ".",
                                    std::string(kStreamModeHeader)};
        }
        o.background = *mode == config::StreamMode::kBackground;
    }
    if (key != nullptr) o.residency = routing::Narrow(o.residency, key->residency);
    if (const auto text = header(kResidencyHeader)) {
        const auto regions = routing::ParseRegions(*text);
        if (!regions) {
            return core::LocalError{core::ErrorKind::kInvalidRequest,
                                    "Invalid " + std::string(kResidencyHeader) + " '" +
                                        core::Printable(*text) +
                                        "': it must list regions separated by commas (1 to 32 "
                                        "letters, digits or '-' each).",
                                    std::string(kResidencyHeader)};
        }
        o.residency = routing::Narrow(o.residency, *regions);
    }
    o.stream_upstream = !stream && (HeaderInt(header, "x-switchyard-stream-upstream") == 1 ||
                                    (o.timeouts.stream_upstream_over_max_tokens > 0 &&
                                     max_tokens > o.timeouts.stream_upstream_over_max_tokens));
    o.fallbacks =
        HeaderInt(header, "x-switchyard-no-fallbacks") != 1 && (key == nullptr || key->fallbacks);
    o.client_retry_count = std::max(0, HeaderInt(header, "x-stainless-retry-count"));

    const config::RetryConfig& retry = config.retry;
    o.policy.max_attempts = retry.max_attempts;
    o.policy.backoff = {retry.base, retry.cap};
    o.policy.class_retries = retry.class_retries;
    o.policy.stage_retries = retry.num_retries;
    o.policy.retries = o.client_retry_count == 0;
    return o;
}

}  // namespace switchyard::engine
