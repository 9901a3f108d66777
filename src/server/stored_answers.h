#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "answers/stored_answer.h"
#include "config/config.h"
#include "core/error.h"
#include "server/request_context.h"

namespace switchyard::server {

// Sends a kept answer again — an idempotent replay or a cached answer — with `header: value`
// added to its headers (docs/answers.md).
asio::awaitable<void> WriteStoredAnswer(RequestContext& ctx, const answers::StoredAnswer& answer,
                                        std::string_view header, std::string_view value);

// Whose answers a request may see again: its client key — by the SHA-256 of its secret, not its
// name, so a key deleted and created again under the same name with another secret sees none of
// the old key's answers — else the SHA-256 of the credential it presented (empty on an open
// gateway).
std::string ClientScope(const RequestContext& ctx, const config::ClientKey* key);

// --- Idempotency keys (docs/answers.md#idempotency-keys) ---

// The key a request carries in `Idempotency-Key` or `x-idempotency-key`: nothing, the key, or
// the 400 for a malformed one (empty, over 255 bytes, not printable ASCII, sent twice).
std::variant<std::monostate, std::string, core::LocalError> ReadIdempotencyKey(
    const Request& request);

// A request's hold on its idempotency key while it runs. Finish() keeps its answer for the
// config's TTL — or, when the answer is a failure (5xx, 429, a degradation, a broken stream),
// only long enough for the duplicates waiting for it, and the key may then run again. A claim
// never finished (the request ended by an exception) frees the key.
class IdempotencyClaim final {
  public:
    IdempotencyClaim(RequestContext& ctx, std::string key, std::string tenant,
                     std::string fingerprint, bool shared);
    IdempotencyClaim(const IdempotencyClaim&) = delete;
    IdempotencyClaim& operator=(const IdempotencyClaim&) = delete;
    ~IdempotencyClaim();

    void Finish(const answers::AnswerCapture& capture);

  private:
    void Release();

    RequestContext& ctx_;
    std::string key_;
    std::string tenant_;
    std::string fingerprint_;
    bool shared_;  // held in the fleet's store (Redis)
    bool finished_ = false;
};

// Before a request with an idempotency key runs: claims the key (the request then runs, and the
// claim is returned), or answers it from what holds the key — the kept answer (replayed), 422
// for another body, 409 when it was too large to keep — after waiting, up to `deadline`, for a
// request with the same key that is still running (409 if it still runs then). Null: answered.
// Keys are `scope`'s (ClientScope) and held apart by `regions`, the residency the request is
// served under: a retry under another constraint never gets an answer served elsewhere.
asio::awaitable<std::unique_ptr<IdempotencyClaim>> ClaimIdempotencyKey(
    RequestContext& ctx, std::string_view key, std::string_view scope, std::string_view regions,
    std::string_view body, std::chrono::steady_clock::time_point deadline);

// --- The response cache (docs/answers.md#response-cache) ---

// Where a request's answer is cached: its group's cache settings and its key.
struct CacheSlot {
    const config::CacheConfig* config = nullptr;
    std::string group;
    std::string key;
};

// The request's slot, when its model group keeps answers and the body has a canonical form.
// `scope` is whose answers they are (ClientScope; left out of the key when the cache is shared),
// `regions` the residency the request was served under (never left out).
std::optional<CacheSlot> CacheSlotOf(const RequestContext& ctx, const config::ModelGroup& group,
                                     std::string_view scope, std::string_view regions,
                                     std::string_view body);

// Serves the cached answer for `slot` marked `x-switchyard-cache: <mark>` (hit or stale);
// false when there is none.
asio::awaitable<bool> ServeCached(RequestContext& ctx, const CacheSlot& slot,
                                  std::string_view mark);

// Keeps the captured answer for `slot` when it is a whole success from upstream.
void KeepInCache(RequestContext& ctx, const CacheSlot& slot, const answers::AnswerCapture& capture);

// What one request keeps of its answer: the capture (installed on the request while this lives),
// its idempotency claim and its cache slot. When it ends, however the request ended, the claim
// is finished with the answer and a whole success goes into the cache.
class AnswerKeeping final {
  public:
    explicit AnswerKeeping(RequestContext& ctx) : ctx_(ctx) {}
    AnswerKeeping(const AnswerKeeping&) = delete;
    AnswerKeeping& operator=(const AnswerKeeping&) = delete;
    ~AnswerKeeping();

    // Captures what goes downstream, if there is a claim or a slot to keep it for.
    void Start(std::unique_ptr<IdempotencyClaim> claim, std::optional<CacheSlot> cache);
    const CacheSlot* Cache() const { return cache_ ? &*cache_ : nullptr; }

  private:
    RequestContext& ctx_;
    std::optional<answers::AnswerCapture> capture_;
    std::unique_ptr<IdempotencyClaim> claim_;
    std::optional<CacheSlot> cache_;
};

}  // namespace switchyard::server
