#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/openai_chat.h"
#include "core/error.h"
#include "limits/client_keys.h"
#include "server/request_context.h"

namespace switchyard::server {

// Where the fleet's shared window counted an admission
// (docs/state.md#what-is-shared-and-how-exactly).
struct SharedSettlement {
    std::int64_t slot = 0;
    std::string month;  // "2026-12": the spend's month
};

// What `input` and `output` tokens cost at `deployment`'s configured prices (USD).
double CostOfTokens(const config::Deployment& deployment, std::int64_t input, std::int64_t output);

// Settles a client key's admission once the request is answered, on every path: the reported
// tokens replace the estimate, and what the serving deployment charges (the request record's
// cost) is added to the key's monthly spend. Lives as long as the request.
class KeySettlement final {
  public:
    explicit KeySettlement(RequestContext& ctx) : ctx_(ctx) {}
    KeySettlement(const KeySettlement&) = delete;
    KeySettlement& operator=(const KeySettlement&) = delete;
    ~KeySettlement();

    std::shared_ptr<limits::ClientKeyState> key;  // null: no key (open gateway, master key)
    limits::KeyAdmission admission;
    std::optional<SharedSettlement> shared;  // admitted by the fleet's shared window

  private:
    RequestContext& ctx_;
};

// Admission (docs/architecture.md, step 4): when client keys exist, the presented key must be
// known (else 401), may use every requested group (else 403 model_not_allowed), and its RPM, TPM
// and monthly budget must admit `tokens` (else 429 with an exact retry-after, set on `ctx`).
// Without keys (or with the master key) the lane may be chosen by x-switchyard-lane. With shared
// state the key's limits are the fleet's (one round trip), else this replica's. Fills
// `settlement` and `lane`; returns the refusal, if any.
asio::awaitable<std::optional<core::LocalError>> Admit(
    RequestContext& ctx, const api::ChatRequest& request, const std::vector<std::string>& requested,
    std::int64_t tokens, KeySettlement& settlement, std::size_t& lane);

// retry-after in whole seconds (rounded up, as clients read it) and retry-after-ms exactly, for a
// local reply.
void AddRetryAfter(RequestContext& ctx, std::chrono::milliseconds wait);

// The credential the client sent: its Authorization header, else its x-api-key; "" for none.
std::string_view ClientCredential(const Request& request);

// The headers a batch line the gateway runs itself carries (server/batch_runner.h): this
// process's random token, and the SHA-256 of the key that created the batch ("" or none: the
// master key's, or no keys). Without the token they mean nothing.
inline constexpr std::string_view kBatchTokenHeader = "x-switchyard-batch-token";
inline constexpr std::string_view kBatchOwnerHeader = "x-switchyard-batch-owner";
// The owner of the batch line `ctx` is (nullopt: not a batch line).
std::optional<std::string> BatchLineOwner(const RequestContext& ctx);
// The lane batch lines run in: batches.lane, or the last lane.
std::size_t BatchLane(const config::Config& config);

}  // namespace switchyard::server
