#include "server/chat_handler.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <functional>
#include <limits>
#include <random>
#include <variant>

#include "api/local_reply.h"
#include "api/openai_chat.h"
#include "api/usage.h"
#include "core/names.h"
#include "core/time_format.h"
#include "engine/chain.h"
#include "engine/decide.h"
#include "engine/executor.h"
#include "engine/request_options.h"
#include "engine/world.h"
#include "limits/lanes.h"
#include "routing/fallback_plan.h"
#include "routing/residency.h"
#include "server/admission.h"
#include "server/attempt.h"
#include "server/client_watch.h"
#include "server/gateway_ports.h"
#include "server/http_io.h"
#include "server/output_check.h"
#include "server/request_trace.h"
#include "server/stored_answers.h"
#include "server/test_faults.h"
#include "server/unanswered.h"

namespace switchyard::server {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Kind = engine::Action::Kind;

// 404 for a missing or unknown model group. It names no other group: the caller may have no key,
// or a key restricted to other groups (GET /v1/models lists what a key may use).
core::LocalError UnknownModel(std::string_view model) {
    std::string message = model.empty() ? std::string("You must provide a model parameter.")
                                        : "The model `" + core::Printable(model) +
                                              "` does not exist or you do not have access to it.";
    return {core::ErrorKind::kModelNotFound,
            message + " GET /v1/models lists the models your key may use.", "model"};
}

// Validates the request's group names (model, models, fallbacks); the first unknown one.
std::optional<std::string> UnknownName(const config::Config& config,
                                       const api::ChatRequest& request) {
    if (config.FindGroup(request.model) == nullptr) return request.model;
    for (const auto& name : request.models) {
        if (config.FindGroup(name) == nullptr) return name;
    }
    if (request.fallbacks) {
        for (const auto& name : *request.fallbacks) {
            if (config.FindGroup(name) == nullptr) return name;
        }
    }
    return std::nullopt;
}

// A 400 when a requested group serves the other endpoint (chat vs embeddings).
std::optional<core::LocalError> WrongMode(const config::Config& config,
                                          const api::ChatRequest& request) {
    const config::GroupMode wanted = request.endpoint == api::Endpoint::kEmbeddings
                                         ? config::GroupMode::kEmbeddings
                                         : config::GroupMode::kChat;
    std::vector<std::string> names = request.models;
    names.push_back(request.model);
    if (request.fallbacks)
        names.insert(names.end(), request.fallbacks->begin(), request.fallbacks->end());
    for (const std::string& name : names) {
        const config::ModelGroup* group = config.FindGroup(name);
        if (group == nullptr || group->mode == wanted) continue;
        return core::LocalError{
            core::ErrorKind::kInvalidRequest,
            wanted == config::GroupMode::kEmbeddings
                ? "The model `" + name + "` is a chat model group; it serves no embeddings."
                : "The model `" + name +
                      "` is an embeddings model group; use POST /v1/embeddings for it.",
            "model"};
    }
    return std::nullopt;
}

// Both front APIs share the engine below.
asio::awaitable<void> Serve(RequestContext& ctx);

}  // namespace

// Plain functions returning Serve's coroutine: no frame of their own on the request path.
asio::awaitable<void> ServeChat(RequestContext& ctx) {
    ctx.record.route = "chat";
    return Serve(ctx);
}

asio::awaitable<void> ServeMessages(RequestContext& ctx) {
    ctx.record.route = "messages";
    ctx.wire = api::Wire::kAnthropic;
    return Serve(ctx);
}

asio::awaitable<void> ServeResponses(RequestContext& ctx) {
    ctx.record.route = "responses";
    ctx.wire = api::Wire::kResponses;
    return Serve(ctx);
}

asio::awaitable<void> ServeEmbeddings(RequestContext& ctx) {
    ctx.record.route = "embeddings";
    ctx.endpoint = api::Endpoint::kEmbeddings;
    return Serve(ctx);
}

namespace {

// The request's options: the config's, the key's and its headers' (x-switchyard-*); a client's
// own retry is recognised, and served without retries of the gateway's.
std::variant<engine::RequestOptions, core::LocalError> OptionsOf(RequestContext& ctx,
                                                                 const api::ChatRequest& request,
                                                                 const KeySettlement& settlement,
                                                                 std::string_view client_body) {
    ServerContext& context = ctx.Context();
    const engine::HeaderLookup header =
        [&ctx](std::string_view name) -> std::optional<std::string_view> {
        const auto it = ctx.request.find(name);
        if (it == ctx.request.end()) return std::nullopt;
        return std::string_view(it->value());
    };
    if (const auto [first, last] = ctx.request.equal_range("x-switchyard-residency");
        first != last && std::next(first) != last) {
        // Two constraints where one is read would let the looser win: refused.
        return core::LocalError{
            core::ErrorKind::kInvalidRequest,
            "Send one x-switchyard-residency header (regions separated by commas); this request "
            "has several.",
            "x-switchyard-residency"};
    }
    auto read = engine::ReadRequestOptions(ctx.Config(), header,
                                           settlement.key ? &settlement.key->Policy() : nullptr,
                                           request.stream, request.max_tokens);
    auto* options = std::get_if<engine::RequestOptions>(&read);
    if (options == nullptr) return read;
    if (options->client_retry_count == 0 && context.give_ups != nullptr &&
        !context.give_ups->Empty() &&
        context.give_ups->Recent(limits::RecentGiveUps::Fingerprint(ClientCredential(ctx.request),
                                                                    ctx.path, client_body),
                                 context.clock.Now())) {
        // The same request as one just given up on, from the same client: its retry, though it
        // says nothing (the Vercel AI SDK's). Served as one, so retries above never multiply.
        options->policy.retries = false;
        ctx.record.client_repeat = true;
        context.metrics.CountClientRepeat();
    }
    if (options->client_retry_count > 0) {
        // A client SDK retrying on top of the gateway: retries in two layers multiply load.
        ctx.record.client_retry_count = options->client_retry_count;
        context.metrics.CountClientRetry();
    }
    return read;
}

// The request's fallback chain, within the regions it may be served in: the header's and the
// key's, narrowed by each requested group's. A refusal when no deployment of it is allowed.
std::variant<std::vector<engine::Stage>, core::LocalError> PlanChain(
    RequestContext& ctx, const api::ChatRequest& request, const std::vector<std::string>& requested,
    const engine::RequestOptions& options, engine::RequestFacts& facts) {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const std::function<double()> draw = [&] { return uniform(ctx.worker.rng); };
    std::vector<engine::Stage> chain = engine::PlanChain(ctx.Config(), requested, request.fallbacks,
                                                         options, ctx.Health(), draw, facts);
    if (engine::NoDeploymentAllowed(chain, facts)) {
        return core::LocalError{
            core::ErrorKind::kResidencyNotSatisfied,
            fmt::format("No deployment of '{}' or its fallbacks may serve this request: it must "
                        "be served in {} (x-switchyard-residency, the client key's or the model "
                        "group's residency), and all {} deployment(s) of its chain are elsewhere.",
                        core::Printable(request.model), routing::Describe(*facts.residency),
                        facts.outside),
            ctx.request.find("x-switchyard-residency") != ctx.request.end()
                ? std::string("x-switchyard-residency")
                : std::string()};
    }
    return chain;
}

// A request its key admitted, as far as the rest of its way needs to know.
struct Admitted {
    const api::ChatRequest& request;
    const std::string& client_body;      // the client's bytes, owned by Serve
    std::vector<std::string> requested;  // the groups asked for: `models`, else `model`
    KeySettlement& settlement;
    std::size_t lane = 0;
    std::int64_t input_estimate = 0;
};

// After admission: the options, the kept answers, the chain, and the engine. Returns how the
// request ends when no attempt answered it (nullopt: it was answered).
asio::awaitable<std::optional<Unanswered>> ServeAdmitted(RequestContext& ctx,
                                                         const Admitted& admitted) {
    ServerContext& context = ctx.Context();
    const config::Config& config = ctx.Config();
    const api::ChatRequest& request = admitted.request;
    ThrowIfTestFault(ctx, "before-answer");
    auto read = OptionsOf(ctx, request, admitted.settlement, admitted.client_body);
    if (auto* invalid = std::get_if<core::LocalError>(&read)) co_return std::move(*invalid);
    const engine::RequestOptions& options = std::get<engine::RequestOptions>(read);
    const Clock::time_point deadline = ctx.start + options.deadline;  // from the request's arrival

    // Kept answers (docs/answers.md): an idempotency key runs its request at most once; a model
    // group's cache answers exact repeats (serve: always) or a failed chain (serve: on_error).
    auto idempotency_key = ReadIdempotencyKey(ctx.request);
    if (auto* invalid = std::get_if<core::LocalError>(&idempotency_key)) {
        co_return std::move(*invalid);
    }
    const std::string* key = std::get_if<std::string>(&idempotency_key);
    const config::ModelGroup* first_group = config.FindGroup(admitted.requested.front());
    const config::ClientKey* client_key =
        admitted.settlement.key ? &admitted.settlement.key->Policy() : nullptr;
    // Whose answers these are: only worked out (a SHA-256 of the credential) when something is
    // kept — not on the path of every request.
    const std::string scope = key != nullptr || (first_group != nullptr && first_group->cache)
                                  ? ClientScope(ctx, client_key)
                                  : std::string();
    // A kept answer was served within the regions its request allowed: only a request with the
    // same constraint may get it, whoever asks.
    const std::string regions =
        options.residency ? routing::Describe(*options.residency) : std::string();
    std::unique_ptr<IdempotencyClaim> claim;
    if (key != nullptr) {
        claim =
            co_await ClaimIdempotencyKey(ctx, *key, scope, regions, admitted.client_body, deadline);
        if (claim == nullptr) co_return std::nullopt;  // answered from the key
        ctx.detached = true;  // its retry will want the answer even if this client leaves
    }
    AnswerKeeping keeping(ctx);
    keeping.Start(std::move(claim),
                  first_group != nullptr
                      ? CacheSlotOf(ctx, *first_group, scope, regions, admitted.client_body)
                      : std::nullopt);
    if (const CacheSlot* cache = keeping.Cache();
        cache != nullptr && cache->config->serve == config::CacheConfig::Serve::kAlways) {
        const bool hit = co_await ServeCached(ctx, *cache, "hit");
        if (hit) co_return std::nullopt;
    }

    // Structured output is checked whichever deployment answers (docs/answers.md).
    const std::optional<OutputCheck> check =
        OutputCheckOf(ctx, request, admitted.client_body, first_group);
    const ClientWatchScope client(ClientWatch::Start(ctx));
    // A long Responses request is not assembled from a stream: its answer has its own shape.
    const bool stream_upstream = options.stream_upstream && request.wire != api::Wire::kResponses;
    const AttemptSetup setup{request,          admitted.client_body,     deadline,
                             options.timeouts, options.background,       stream_upstream,
                             &*client,         check ? &*check : nullptr};
    engine::RequestFacts facts;
    facts.lane = admitted.lane;
    facts.input_estimate = admitted.input_estimate;
    facts.max_tokens = request.max_tokens;
    facts.fallbacks = options.fallbacks;
    facts.client_budget = &context.client_budgets.For(ClientCredential(ctx.request));
    facts.shape = {options.timeouts, request.stream || stream_upstream, request.max_tokens};
    auto chain = PlanChain(ctx, request, admitted.requested, options, facts);
    if (auto* refused = std::get_if<core::LocalError>(&chain)) {
        // Written while the answer is kept: an idempotency key's retry gets the same refusal.
        const Unanswered refusal = std::move(*refused);
        co_await WriteUnanswered(ctx, nullptr, refusal);
        co_return std::nullopt;
    }
    Walk walk{setup, std::move(facts), admitted.settlement, *client};
    walk.cache = keeping.Cache();
    engine::AttemptState state(options.policy, std::get<std::vector<engine::Stage>>(chain),
                               deadline);
    context.metrics.CountEngineRequest();
    ctx.trace = RequestTrace::Start(ctx, request.model);
    const engine::Action end = co_await RunEngine(ctx, walk, state);
    if (end.kind == Kind::kDone) co_return std::nullopt;
    const Unanswered unanswered = end;
    co_await WriteUnanswered(ctx, &walk, unanswered);
    co_return std::nullopt;
}

// One request of any front API: parsed, checked against the config, admitted by its key, then
// served (ServeAdmitted). Every refusal before an attempt is written in one place
// (WriteUnanswered).
asio::awaitable<void> Serve(RequestContext& ctx) {
    const config::Config& config = ctx.Config();
    ctx.record.bytes_in = ctx.request.body().size();
    // Owned here for the whole request: the parsed request may keep a view of it.
    const std::string client_body = std::move(ctx.request.body());
    auto parsed = ctx.wire == api::Wire::kAnthropic   ? api::ParseAnthropicMessages(client_body)
                  : ctx.wire == api::Wire::kResponses ? api::ParseOpenAiResponses(client_body)
                  : ctx.endpoint == api::Endpoint::kEmbeddings
                      ? api::ParseOpenAiEmbeddings(client_body)
                      : api::ParseOpenAiChat(client_body);
    std::optional<Unanswered> refusal;
    if (auto* error = std::get_if<core::LocalError>(&parsed)) {
        refusal = error->kind == core::ErrorKind::kModelNotFound ? UnknownModel("") : *error;
        co_await WriteUnanswered(ctx, nullptr, *refusal);
        co_return;
    }
    const api::ChatRequest& request = std::get<api::ChatRequest>(parsed);
    ctx.record.stream = request.stream;
    if (const auto unknown = UnknownName(config, request)) {
        refusal = UnknownModel(*unknown);
    } else if (auto other = WrongMode(config, request)) {
        refusal = std::move(*other);
    }
    if (refusal) {
        co_await WriteUnanswered(ctx, nullptr, *refusal);
        co_return;
    }

    // Who is asking, which groups it may use, its RPM, TPM and monthly budget.
    KeySettlement settlement(ctx);
    Admitted admitted{
        request, client_body,
        request.models.empty() ? std::vector<std::string>{request.model} : request.models,
        settlement};
    admitted.input_estimate = api::EstimateInputTokens(client_body);
    // Saturating: a max_tokens near 2^63 must not wrap the estimate into a negative count.
    const std::int64_t tokens =
        request.max_tokens > std::numeric_limits<std::int64_t>::max() - admitted.input_estimate
            ? std::numeric_limits<std::int64_t>::max()
            : admitted.input_estimate + request.max_tokens;
    if (auto refused =
            co_await Admit(ctx, request, admitted.requested, tokens, settlement, admitted.lane)) {
        refusal = std::move(*refused);
    } else {
        refusal = co_await ServeAdmitted(ctx, admitted);
    }
    if (refusal) co_await WriteUnanswered(ctx, nullptr, *refusal);
}

}  // namespace

}  // namespace switchyard::server
