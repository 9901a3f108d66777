#include "server/stored_answers.h"

#include <fmt/format.h>

#include "answers/request_key.h"
#include "core/sha256.h"
#include "server/durable_state.h"
#include "server/http_io.h"

namespace switchyard::server {
namespace {

using std::chrono::milliseconds;

// How often a duplicate looks whether the request it waits for has ended: in this replica's store,
// and in the fleet's (a round trip to Redis each time).
constexpr milliseconds kLocalPoll{20};
constexpr milliseconds kSharedPoll{50};
// A failed answer is kept this long: the duplicates waiting for it get it, later ones run anew.
constexpr milliseconds kFailureKept{2000};
constexpr std::size_t kMaxKeyBytes = 255;
constexpr std::size_t kFingerprintBytes = 64;  // SHA-256 in hex

// Whether `status` says the request may succeed if sent again (no answer to keep for a key).
bool IsFailure(unsigned status) { return status >= 500 || status == 429 || status == 408; }

// What the fleet's store said about a key ('' : claimed), as the local store says it.
answers::KeyLookup FromShared(std::string_view value, std::string_view fingerprint) {
    if (value.empty()) return {answers::KeyState::kClaimed, nullptr};
    const char kind = value.front();
    const std::string_view stored = value.substr(1, kFingerprintBytes);
    if (stored != fingerprint) return {answers::KeyState::kMismatch, nullptr};
    if (kind == 'P') return {answers::KeyState::kInFlight, nullptr};
    if (kind == 'D') {
        auto answer = answers::Decode(value.substr(1 + kFingerprintBytes));
        if (answer) {
            return {answers::KeyState::kDone,
                    std::make_shared<const answers::StoredAnswer>(std::move(*answer))};
        }
    }
    return {answers::KeyState::kUnavailable, nullptr};
}

// A request the key answers with `error` (`outcome` for the metrics). Pass a named error: g++ 12
// may destroy a temporary argument of a coroutine twice.
asio::awaitable<void> RefuseByKey(RequestContext& ctx, std::string_view outcome,
                                  const core::LocalError& error) {
    ctx.Context().metrics.CountIdempotency(outcome);
    co_await WriteLocalError(ctx, error);
}

asio::awaitable<void> Pause(RequestContext& ctx, milliseconds delay) {
    asio::steady_timer timer(ctx.stream.get_executor());
    timer.expires_after(delay);
    auto [ec] = co_await timer.async_wait(kTuple);
    (void)ec;
}

}  // namespace

asio::awaitable<void> WriteStoredAnswer(RequestContext& ctx, const answers::StoredAnswer& answer,
                                        std::string_view header, std::string_view value) {
    if (ctx.capture != nullptr) ctx.capture->replayed = true;
    std::string lines;
    lines.reserve(answer.headers.size() + header.size() + value.size() + 64);
    lines += answer.headers;
    AppendHeader(lines, header, value);
    const Reply reply{answer.status, &lines, answer.body};
    co_await Respond(ctx, reply);
}

std::string ClientScope(const RequestContext& ctx, const config::ClientKey* key) {
    if (key != nullptr) return "key:" + key->sha256;
    const std::string_view presented = PresentedKey(ctx.request);
    return presented.empty() ? std::string() : "credential:" + core::Sha256Hex(presented);
}

std::variant<std::monostate, std::string, core::LocalError> ReadIdempotencyKey(
    const Request& request) {
    std::optional<std::string_view> found;
    std::string_view name;
    for (const auto& field : request) {
        const std::string_view field_name = field.name_string();
        if (!beast::iequals(field_name, "idempotency-key") &&
            !beast::iequals(field_name, "x-idempotency-key")) {
            continue;
        }
        if (found) {
            return core::LocalError{core::ErrorKind::kInvalidRequest,
                                    "Send one idempotency key (Idempotency-Key or "
                                    "x-idempotency-key); this request has several.",
                                    std::string(field_name)};
        }
        found = field.value();
        name = field_name;
    }
    if (!found) return std::monostate{};
    const std::string_view key = *found;
    const bool printable =
        std::all_of(key.begin(), key.end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
    if (key.empty() || key.size() > kMaxKeyBytes || !printable) {
        return core::LocalError{
            core::ErrorKind::kInvalidRequest,
            fmt::format("The idempotency key must be 1 to {} printable ASCII characters without "
                        "spaces.",
                        kMaxKeyBytes),
            std::string(name)};
    }
    return std::string(key);
}

IdempotencyClaim::IdempotencyClaim(RequestContext& ctx, std::string key, std::string tenant,
                                   std::string fingerprint, bool shared)
    : ctx_(ctx),
      key_(std::move(key)),
      tenant_(std::move(tenant)),
      fingerprint_(std::move(fingerprint)),
      shared_(shared) {}

IdempotencyClaim::~IdempotencyClaim() {
    if (!finished_) Release();
}

void IdempotencyClaim::Release() {
    finished_ = true;
    ServerContext& context = ctx_.Context();
    if (shared_) {
        if (context.shared != nullptr) {
            context.shared->ReleaseIdempotency(ctx_.worker.index, key_, fingerprint_);
        }
    } else if (context.idempotency != nullptr) {
        context.idempotency->Release(key_);
    }
}

void IdempotencyClaim::Finish(const answers::AnswerCapture& capture) {
    if (finished_) return;
    const config::IdempotencyConfig& config = ctx_.Config().idempotency;
    const bool failure = capture.transient || IsFailure(capture.answer.status);
    if (!capture.complete && !capture.overflow) {
        Release();  // nothing was answered: the key may run again
        return;
    }
    finished_ = true;
    std::shared_ptr<const answers::StoredAnswer> answer;
    if (capture.complete && capture.answer.Bytes() <= config.max_answer_bytes) {
        answer = std::make_shared<const answers::StoredAnswer>(capture.answer);
    } else if (failure) {
        Release();  // a failure too large to keep: let the key run again
        return;
    }
    const milliseconds keep =
        failure ? kFailureKept : std::chrono::duration_cast<milliseconds>(config.ttl);
    ServerContext& context = ctx_.Context();
    if (shared_) {
        if (context.shared == nullptr) return;
        std::string value(answer != nullptr ? "D" : "U");
        value += fingerprint_;
        if (answer != nullptr) value += answers::Encode(*answer);
        context.shared->CompleteIdempotency(ctx_.worker.index, key_, std::move(value), keep);
        return;
    }
    if (context.idempotency == nullptr) return;
    // A success outlives the process (docs/state.md#the-durable-store); a failure is kept seconds.
    if (context.durable != nullptr && !failure) {
        context.durable->AnswerKept(key_, tenant_, fingerprint_, answer.get(),
                                    context.clock.WallNow() + keep);
    }
    context.idempotency->Complete(key_, std::move(answer), context.clock.Now() + keep);
}

asio::awaitable<std::unique_ptr<IdempotencyClaim>> ClaimIdempotencyKey(
    RequestContext& ctx, std::string_view key, std::string_view scope, std::string_view regions,
    std::string_view body, std::chrono::steady_clock::time_point deadline) {
    ServerContext& context = ctx.Context();
    std::string store_key =
        core::Sha256Hex(std::string(scope) + '\n' + std::string(regions) + '\0' + std::string(key));
    std::string fingerprint = answers::Fingerprint(ctx.path, body);
    bool waited = false;
    for (;;) {
        const auto now = context.clock.Now();
        const milliseconds lease =
            std::max(milliseconds(1000),
                     std::chrono::ceil<milliseconds>(deadline - now) + milliseconds(5000));
        answers::KeyLookup found;
        bool shared = false;
        if (context.shared != nullptr) {
            const std::optional<std::string> value = co_await context.shared->ClaimIdempotency(
                ctx.worker.index, store_key, fingerprint, lease);
            if (value) {
                found = FromShared(*value, fingerprint);
                shared = true;
            }
        }
        if (!shared && context.idempotency != nullptr) {
            found = context.idempotency->Claim(store_key, scope, fingerprint, now, lease);
        }
        switch (found.state) {
            case answers::KeyState::kClaimed:
                context.metrics.CountIdempotency("claimed");
                co_return std::make_unique<IdempotencyClaim>(
                    ctx, std::move(store_key), std::string(scope), std::move(fingerprint), shared);
            case answers::KeyState::kDone:
                context.metrics.CountIdempotency(waited ? "waited" : "replayed");
                ctx.error = "idempotent replay";
                co_await WriteStoredAnswer(ctx, *found.answer, "x-switchyard-idempotent-replay",
                                           "true");
                co_return nullptr;
            case answers::KeyState::kMismatch: {
                const core::LocalError reused{
                    core::ErrorKind::kIdempotencyKeyReused,
                    "This idempotency key was already used with a different request body; a "
                    "retry must send the same request, a new request needs a new key."};
                co_await RefuseByKey(ctx, "reused", reused);
                co_return nullptr;
            }
            case answers::KeyState::kUnavailable: {
                const core::LocalError unavailable{
                    core::ErrorKind::kIdempotencyUnavailable,
                    fmt::format("The request with this idempotency key already ran, and its "
                                "answer was larger than the {} bytes kept per key; it is not "
                                "run again.",
                                ctx.Config().idempotency.max_answer_bytes)};
                co_await RefuseByKey(ctx, "unavailable", unavailable);
                co_return nullptr;
            }
            case answers::KeyState::kInFlight:
                break;
        }
        const milliseconds poll = shared ? kSharedPoll : kLocalPoll;
        if (context.clock.Now() + poll > deadline) {
            const core::LocalError in_use{core::ErrorKind::kIdempotencyKeyInUse,
                                          "A request with this idempotency key is still running; "
                                          "retry it later to get its answer."};
            co_await RefuseByKey(ctx, "in_use", in_use);
            co_return nullptr;
        }
        waited = true;
        co_await Pause(ctx, poll);
    }
}

std::optional<CacheSlot> CacheSlotOf(const RequestContext& ctx, const config::ModelGroup& group,
                                     std::string_view scope, std::string_view regions,
                                     std::string_view body) {
    if (!group.cache) return std::nullopt;
    // Shared: one answer for every client, never across residency constraints.
    std::string kept_scope(group.cache->shared ? std::string_view() : scope);
    kept_scope.append(1, '\n').append(regions);
    std::optional<std::string> key = answers::CacheKey(group.name, ctx.path, kept_scope, body);
    if (!key) return std::nullopt;
    return CacheSlot{&*group.cache, group.name, std::move(*key)};
}

asio::awaitable<bool> ServeCached(RequestContext& ctx, const CacheSlot& slot,
                                  std::string_view mark) {
    ServerContext& context = ctx.Context();
    if (context.cache == nullptr) co_return false;
    const std::shared_ptr<const answers::StoredAnswer> answer =
        context.cache->Find(slot.group, slot.key, context.clock.Now(),
                            std::chrono::duration_cast<milliseconds>(slot.config->ttl));
    context.metrics.CountCache(slot.group, answer != nullptr ? mark : "miss");
    if (answer == nullptr) co_return false;
    if (mark == "stale") {
        ctx.error = "cached answer served: every target failed";
        if (ctx.capture != nullptr) ctx.capture->transient = true;  // a stand-in, not the answer
    }
    co_await WriteStoredAnswer(ctx, *answer, "x-switchyard-cache", mark);
    co_return true;
}

void KeepInCache(RequestContext& ctx, const CacheSlot& slot,
                 const answers::AnswerCapture& capture) {
    ServerContext& context = ctx.Context();
    if (context.cache == nullptr || !capture.Keepable() || capture.replayed) return;
    const unsigned status = capture.answer.status;
    if (status < 200 || status >= 300 || capture.answer.Bytes() > slot.config->max_entry_bytes) {
        return;
    }
    context.cache->Put(slot.group, slot.key,
                       std::make_shared<const answers::StoredAnswer>(capture.answer),
                       context.clock.Now(), slot.config->max_entries);
    context.metrics.CountCache(slot.group, "stored");
}

void AnswerKeeping::Start(std::unique_ptr<IdempotencyClaim> claim, std::optional<CacheSlot> cache) {
    claim_ = std::move(claim);
    cache_ = std::move(cache);
    if (claim_ == nullptr && !cache_) return;
    std::size_t limit = 0;
    if (claim_ != nullptr) limit = ctx_.Config().idempotency.max_answer_bytes;
    if (cache_) limit = std::max(limit, cache_->config->max_entry_bytes);
    ctx_.capture = &capture_.emplace(limit);
}

AnswerKeeping::~AnswerKeeping() {
    ctx_.capture = nullptr;
    if (!capture_) return;
    if (claim_ != nullptr) claim_->Finish(*capture_);
    if (cache_) KeepInCache(ctx_, *cache_, *capture_);
}

}  // namespace switchyard::server
