#include "server/admission.h"

#include <fmt/format.h>
#include <openssl/crypto.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "policy/retry_after.h"
#include "policy/spend_cap.h"
#include "server/admin_handlers.h"
#include "server/http_io.h"

namespace switchyard::server {
namespace {

// The first requested group (model, models, fallbacks) the key may not use.
std::optional<std::string> DisallowedGroup(
    const config::ClientKey& key, const std::vector<std::string>& requested,
    const std::optional<std::vector<std::string>>& fallbacks) {
    if (key.models.empty()) return std::nullopt;
    const auto allowed = [&](const std::string& group) {
        return std::find(key.models.begin(), key.models.end(), group) != key.models.end();
    };
    for (const auto& group : requested) {
        if (!allowed(group)) return group;
    }
    if (fallbacks) {
        for (const auto& group : *fallbacks) {
            if (!allowed(group)) return group;
        }
    }
    return std::nullopt;
}

std::string_view RefusalName(limits::KeyRefusal refusal) {
    switch (refusal) {
        case limits::KeyRefusal::kRequests:
            return "requests";
        case limits::KeyRefusal::kTokens:
            return "tokens";
        case limits::KeyRefusal::kBudget:
            return "budget";
        case limits::KeyRefusal::kTooLarge:
            return "too_large";
        case limits::KeyRefusal::kNone:
            break;
    }
    return "none";
}

core::LocalError KeyRefusalError(const config::ClientKey& key,
                                 const limits::KeyAdmission& admission, std::int64_t tokens) {
    const double seconds = static_cast<double>(admission.retry_after.count()) / 1000.0;
    switch (admission.refusal) {
        case limits::KeyRefusal::kBudget:
            return {core::ErrorKind::kBudgetExceeded,
                    fmt::format("The key '{}' has spent its monthly budget of {:.2f}; it resets at "
                                "00:00 UTC on the first of next month.",
                                key.name, key.monthly_budget)};
        case limits::KeyRefusal::kTooLarge:
            return {core::ErrorKind::kRateLimited,
                    fmt::format("Request too large for the key '{}' on tokens per minute: limit "
                                "{}, this request counts {} (its input estimate and max_tokens). "
                                "Reduce the input or max_tokens; no retry can succeed.",
                                key.name, key.tpm, tokens)};
        case limits::KeyRefusal::kTokens:
            return {core::ErrorKind::kRateLimited,
                    fmt::format("Rate limit reached for the key '{}': {} tokens per minute. Retry "
                                "after {:.3f} s.",
                                key.name, key.tpm, seconds)};
        default:
            return {core::ErrorKind::kRateLimited,
                    fmt::format("Rate limit reached for the key '{}': {} requests per minute. "
                                "Retry after {:.3f} s.",
                                key.name, key.rpm, seconds)};
    }
}

// "2026-12": the calendar month (UTC) a key's spend counts in.
std::string MonthOf(std::chrono::system_clock::time_point wall) {
    const std::chrono::year_month_day day{std::chrono::floor<std::chrono::days>(wall)};
    return fmt::format("{:04}-{:02}", static_cast<int>(day.year()),
                       static_cast<unsigned>(day.month()));
}

}  // namespace

double CostOfTokens(const config::Deployment& deployment, std::int64_t input, std::int64_t output) {
    return (static_cast<double>(std::max<std::int64_t>(input, 0)) * deployment.input_price +
            static_cast<double>(std::max<std::int64_t>(output, 0)) * deployment.output_price) /
           1e6;
}

KeySettlement::~KeySettlement() {
    if (!key) return;
    const std::int64_t in = ctx_.record.input_tokens;
    const std::int64_t out = ctx_.record.output_tokens;
    const double cost = ctx_.record.cost_usd;
    const std::int64_t tokens = in >= 0 && out >= 0 ? in + out : -1;
    const core::Clock& clock = ctx_.Context().clock;
    key->Settle(admission, tokens, cost, clock.Now(), clock.WallNow());
    state::RedisState* fleet = ctx_.Context().shared;
    if (fleet == nullptr) return;
    if (shared) {
        const std::int64_t delta =
            key->Policy().tpm > 0 && tokens >= 0 ? tokens - admission.tokens : 0;
        fleet->SettleKey(ctx_.worker.index, key->Policy().sha256, shared->slot, delta, cost,
                         shared->month);
    } else if (key->Policy().monthly_budget > 0 && cost > 0) {
        // Admitted by this replica alone (Redis did not answer in time): the fleet's spend still
        // counts what it cost.
        fleet->SettleKey(ctx_.worker.index, key->Policy().sha256, 0, 0, cost,
                         MonthOf(clock.WallNow()));
    }
}

namespace {

// The key's verdict from the fleet's shared windows (docs/state.md#what-is-shared-and-how-exactly);
// nullopt when Redis did not answer in time and this replica decides alone.
asio::awaitable<std::optional<limits::KeyAdmission>> AdmitShared(RequestContext& ctx,
                                                                 KeySettlement& settlement,
                                                                 std::int64_t tokens) {
    ServerContext& context = ctx.Context();
    limits::ClientKeyState& key = *settlement.key;
    const config::ClientKey& policy = key.Policy();
    const auto now = context.clock.Now();
    const auto wall = context.clock.WallNow();
    const limits::ClientKeyState::Limits ramped = key.RampedLimits(now);
    // A key without limits has nothing to share.
    if (ramped.rpm == 0 && ramped.tpm == 0 && policy.monthly_budget <= 0) co_return std::nullopt;
    std::string month = MonthOf(wall);
    const state::KeyLimits limits{ramped.rpm, ramped.tpm, policy.monthly_budget};
    const std::optional<state::KeyVerdict> verdict =
        co_await context.shared->AdmitKey(ctx.worker.index, policy.sha256, limits, tokens, month);
    if (!verdict) co_return std::nullopt;
    limits::KeyAdmission admission;
    switch (verdict->refusal) {
        case state::KeyVerdict::Refusal::kNone:
            admission = key.Record(verdict->counted, now);
            settlement.shared = SharedSettlement{verdict->slot, std::move(month)};
            co_return admission;
        case state::KeyVerdict::Refusal::kRequests:
            admission.refusal = limits::KeyRefusal::kRequests;
            break;
        case state::KeyVerdict::Refusal::kTokens:
            admission.refusal = limits::KeyRefusal::kTokens;
            break;
        case state::KeyVerdict::Refusal::kBudget:
            admission.refusal = limits::KeyRefusal::kBudget;
            break;
    }
    admission.at = now;
    admission.retry_after =
        admission.refusal == limits::KeyRefusal::kBudget
            ? std::chrono::ceil<std::chrono::milliseconds>(policy::SpendCapResetAfter(wall) - wall)
            : verdict->retry_after;
    co_return admission;
}

}  // namespace

void AddRetryAfter(RequestContext& ctx, std::chrono::milliseconds wait) {
    const long long ms = std::max<long long>(1, wait.count());
    ctx.reply_headers.emplace_back("retry-after", std::to_string((ms + 999) / 1000));
    ctx.reply_headers.emplace_back("retry-after-ms", std::to_string(ms));
}

asio::awaitable<std::optional<core::LocalError>> Admit(
    RequestContext& ctx, const api::ChatRequest& request, const std::vector<std::string>& requested,
    std::int64_t tokens, KeySettlement& settlement, std::size_t& lane) {
    ServerContext& context = ctx.Context();
    const config::Config& config = ctx.Config();
    lane = 0;
    // A line of a batch job the gateway runs itself (server/batch_runner.h): the job's owner, on
    // the batch lane.
    const std::optional<std::string> batch_owner = BatchLineOwner(ctx);
    if (batch_owner ? !batch_owner->empty() : !context.keys.Empty() && !PresentsMasterKey(ctx)) {
        settlement.key = batch_owner ? context.keys.FindHash(*batch_owner)
                                     : context.keys.Find(PresentedKey(ctx.request));
        if (!settlement.key) {
            co_return core::LocalError{
                core::ErrorKind::kUnauthorized,
                batch_owner ? "The key that created this batch no longer exists."
                : PresentedKey(ctx.request).empty()
                    ? "Missing API key: send it as 'Authorization: Bearer KEY' or 'x-api-key: KEY'."
                    : "Incorrect API key provided."};
        }
        const config::ClientKey& policy = settlement.key->Policy();
        ctx.key_name = policy.name;
        // The key names its lane; this request's config says which index that is now.
        lane =
            batch_owner ? BatchLane(config) : config.limits.FindLane(policy.lane_name).value_or(0);
        if (const auto denied = DisallowedGroup(policy, requested, request.fallbacks)) {
            core::LocalError error{
                core::ErrorKind::kModelNotAllowed,
                "The key '" + policy.name + "' may not use the model `" + *denied + "`.", "model"};
            settlement.key.reset();  // `policy` lives in the key state: used before this
            co_return error;
        }
        std::optional<limits::KeyAdmission> shared;
        // A request over the key's whole TPM is refused by the key alone, fleet or not.
        if (context.shared != nullptr && !(policy.tpm > 0 && tokens > policy.tpm)) {
            shared = co_await AdmitShared(ctx, settlement, tokens);
        }
        settlement.admission =
            shared ? *shared
                   : settlement.key->Admit(tokens, context.clock.Now(), context.clock.WallNow());
        if (settlement.admission.refusal != limits::KeyRefusal::kNone) {
            core::LocalError error = KeyRefusalError(policy, settlement.admission, tokens);
            context.metrics.CountKeyRefusal(policy.name, RefusalName(settlement.admission.refusal));
            if (settlement.admission.refusal == limits::KeyRefusal::kTooLarge) {
                // Like a provider's "request too large": a 429 that no retry can turn around.
                ctx.reply_headers.emplace_back("x-should-retry", "false");
            } else {
                // Clients refused together must not come back together: spread after the minimum.
                const std::chrono::milliseconds minimum = settlement.admission.retry_after;
                std::uniform_real_distribution<double> uniform(0.0, 1.0);
                AddRetryAfter(ctx, policy::SpreadHint(minimum, policy::DefaultSpread(minimum),
                                                      uniform(ctx.worker.rng)));
            }
            settlement.key.reset();  // a refused request counts for nothing
            co_return error;
        }
    } else if (batch_owner) {
        lane = BatchLane(config);
    } else if (const auto it = ctx.request.find("x-switchyard-lane"); it != ctx.request.end()) {
        const auto named = config.limits.FindLane(it->value());
        if (!named) {
            co_return core::LocalError{core::ErrorKind::kInvalidRequest,
                                       "Unknown lane '" + std::string(it->value()) + "'.",
                                       "x-switchyard-lane"};
        }
        lane = *named;
    }
    ctx.record.lane = config.limits.lanes[lane].name;
    co_return std::nullopt;
}

std::size_t BatchLane(const config::Config& config) {
    return config.limits.FindLane(config.batches.lane).value_or(config.limits.lanes.size() - 1);
}

std::optional<std::string> BatchLineOwner(const RequestContext& ctx) {
    const std::string& token = ctx.Context().batch_token;
    if (token.empty()) return std::nullopt;
    const auto presented = ctx.request.find(kBatchTokenHeader);
    if (presented == ctx.request.end()) return std::nullopt;
    const std::string_view value = presented->value();
    if (value.size() != token.size() ||
        CRYPTO_memcmp(value.data(), token.data(), token.size()) != 0) {
        return std::nullopt;
    }
    const auto owner = ctx.request.find(kBatchOwnerHeader);
    return owner == ctx.request.end() ? std::string() : std::string(owner->value());
}

std::string_view ClientCredential(const Request& request) {
    if (const auto it = request.find(http::field::authorization); it != request.end()) {
        return it->value();
    }
    if (const auto it = request.find("x-api-key"); it != request.end()) return it->value();
    return {};
}

}  // namespace switchyard::server
