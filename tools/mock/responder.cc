#include "responder.h"

#include <fmt/format.h>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <memory>
#include <tuple>
#include <utility>
#include <variant>

#include "http_head.h"

namespace switchyard::mock {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using std::chrono::milliseconds;

namespace {

std::string_view PathOf(std::string_view target) { return target.substr(0, target.find('?')); }

double MillisSinceEpoch(std::chrono::system_clock::time_point time) {
    return std::chrono::duration<double, std::milli>(time.time_since_epoch()).count();
}

std::optional<std::string_view> HeaderValue(const Request& request, std::string_view name) {
    const auto it = request.find(name);
    if (it == request.end()) return std::nullopt;
    return it->value();
}

// A path of the Batch APIs: OpenAI's /v1/files and /v1/batches, Anthropic's /v1/messages/batches,
// and anything below them.
bool IsBatchPath(std::string_view path) {
    for (const std::string_view prefix : {"/v1/files", "/v1/batches", "/v1/messages/batches"}) {
        if (path.starts_with(prefix) &&
            (path.size() == prefix.size() || path[prefix.size()] == '/')) {
            return true;
        }
    }
    return false;
}

std::optional<Api> ApiOf(std::string_view path) {
    if (path == "/v1/chat/completions" || path == "/chat/completions") return Api::kChat;
    if (path == "/v1/messages") return Api::kMessages;
    if (path == "/v1/embeddings" || path == "/embeddings") return Api::kEmbeddings;
    if (path == "/v1/responses" || path == "/responses") return Api::kResponses;
    return std::nullopt;
}

std::string MockError(std::string_view message) {
    return openai::ErrorEnvelope(message, "mock_error");
}

// A request body parsed by the wire module of its API: the request, or the status and error body
// to answer with (status 0: none), and what the rate limiter charges for it.
struct ParsedBody final {
    ProviderRequest request;
    int status = 0;
    std::string error;
    RateLimitCost cost;
    // What the exchange keeps of it: the model, the usage's input tokens, the schema asked for.
    std::string model;
    int prompt_tokens = 1;
    std::string output_schema;
};

ParsedBody ParseBody(Api api, std::string_view body, std::string_view request_id) {
    ParsedBody parsed;
    switch (api) {
        case Api::kMessages: {
            auto message = anthropic::ParseMessagesRequest(body, request_id);
            parsed.model = message.request.model;
            parsed.prompt_tokens = message.request.input_tokens;
            parsed.output_schema = message.request.output_schema;
            parsed.cost.input_tokens = message.request.input_tokens;
            parsed.status = message.status;
            parsed.error = std::move(message.error_body);
            parsed.request = std::move(message.request);
            break;
        }
        case Api::kEmbeddings: {
            auto embedding = embeddings::ParseEmbeddingsRequest(body);
            parsed.model = embedding.request.model;
            parsed.prompt_tokens = embedding.request.prompt_tokens;
            parsed.cost.input_tokens =
                EstimateInputTokens(embedding.request.text_chars) + embedding.request.token_count;
            parsed.status = embedding.status;
            parsed.error = std::move(embedding.error_body);
            parsed.request = std::move(embedding.request);
            break;
        }
        case Api::kResponses: {
            auto response = responses::ParseResponsesRequest(body);
            parsed.model = response.request.model;
            parsed.prompt_tokens = response.request.input_tokens;
            parsed.cost.input_tokens = EstimateInputTokens(response.request.input_chars);
            parsed.cost.max_tokens = response.request.max_output_tokens;
            parsed.status = response.status;
            parsed.error = std::move(response.error_body);
            parsed.request = std::move(response.request);
            break;
        }
        case Api::kChat: {
            auto chat = openai::ParseChatRequest(body);
            parsed.model = chat.request.model;
            parsed.prompt_tokens = chat.request.prompt_tokens;
            parsed.output_schema = chat.request.output_schema;
            parsed.cost.input_tokens = EstimateInputTokens(chat.request.content_chars);
            parsed.cost.max_tokens = chat.request.max_tokens;
            parsed.status = chat.status;
            parsed.error = std::move(chat.error_body);
            parsed.request = std::move(chat.request);
            break;
        }
    }
    return parsed;
}

}  // namespace

Responder::Responder(Shared& shared, Worker& worker, Downstream& downstream,
                     asio::any_io_executor executor)
    : shared_(shared), worker_(worker), downstream_(downstream), timer_(std::move(executor)) {
    out_.reserve(4096);
}

asio::awaitable<After> Responder::Dispatch(const Request& request) {
    request_ = &request;
    const std::string_view path = PathOf(request.target());
    After after = After::kClose;
    if (path.starts_with("/mock/")) {
        after = co_await HandleAdmin();
    } else if (IsBatchPath(path)) {
        after = co_await HandleBatch();
    } else if (ApiOf(path) && request.method() == http::verb::post) {
        after = co_await HandleProvider();
    } else {
        BeginExchange();
        std::string body;
        int status = 404;
        if (exchange_.anthropic) {
            status = 405;
            body =
                anthropic::InvalidMethodBody(request.method_string(), path, exchange_.request_id);
        } else if (ApiOf(path)) {
            status = 405;
            body = openai::InvalidMethodBody(request.method_string(), path);
        } else {
            body = openai::InvalidUrlBody(request.method_string(), path);
        }
        Record(status, {});
        after = co_await ReplyProvider(status, std::move(body), nullptr);
    }
    ReleaseLargeBuffers();
    request_ = nullptr;
    co_return after;
}

asio::awaitable<void> Responder::ReplyBodyTooLarge(const Request& request) {
    request_ = &request;
    const std::string_view path = PathOf(request.target());
    if (ApiOf(path) == Api::kMessages || path.starts_with("/v1/messages/batches")) {
        BeginExchange();
        exchange_.anthropic = true;
        exchange_.keep_alive = false;
        co_await ReplyProvider(413, ProviderErrorBody(413, std::nullopt), nullptr);
    } else {
        co_await ReplyPlain(413, openai::ErrorBody(413, std::nullopt, {}), false);
    }
    request_ = nullptr;
}

asio::awaitable<After> Responder::HandleAdmin() {
    const Request& request = *request_;
    const std::string_view path = PathOf(request.target());
    const http::verb method = request.method();
    const bool keep_alive = request.keep_alive();
    const std::string ok = R"({"ok":true})";
    std::string_view allow;
    if (path == "/mock/stats") {
        if (method == http::verb::get) {
            co_return co_await ReplyPlain(200, shared_.stats.ToJson(), keep_alive);
        }
        allow = "GET";
    } else if (path == "/mock/reset") {
        if (method == http::verb::post) {
            shared_.stats.Reset();
            co_return co_await ReplyPlain(200, ok, keep_alive);
        }
        allow = "POST";
    } else if (path == "/mock/limits") {
        if (method == http::verb::get) {
            co_return co_await ReplyPlain(
                200, shared_.rate_limits.ToJson(std::chrono::steady_clock::now()), keep_alive);
        }
        if (method == http::verb::post) {
            const ParsedRateLimits parsed = ParseRateLimitJson(request.body());
            if (!parsed.ok()) {
                co_return co_await ReplyPlain(
                    400, MockError(fmt::format("limits: {}", parsed.error)), keep_alive);
            }
            shared_.rate_limits.Configure(parsed.config, std::chrono::steady_clock::now());
            co_return co_await ReplyPlain(200, ok, keep_alive);
        }
        if (method == http::verb::delete_) {
            shared_.rate_limits.Configure({}, std::chrono::steady_clock::now());
            co_return co_await ReplyPlain(200, ok, keep_alive);
        }
        allow = "GET, POST, DELETE";
    } else if (path == "/mock/scenario") {
        if (method == http::verb::post) {
            ParsedScenario parsed = ParseScenario(request.body());
            if (!parsed.ok()) {
                co_return co_await ReplyPlain(400, MockError(parsed.error), keep_alive);
            }
            shared_.scenarios.Set(std::move(parsed.scenario));
            co_return co_await ReplyPlain(200, ok, keep_alive);
        }
        if (method == http::verb::delete_) {
            shared_.scenarios.Set(nullptr);
            co_return co_await ReplyPlain(200, ok, keep_alive);
        }
        allow = "POST, DELETE";
    } else {
        co_return co_await ReplyPlain(404, MockError(fmt::format("unknown mock endpoint {}", path)),
                                      keep_alive);
    }
    co_return co_await ReplyPlain(
        405, MockError(fmt::format("{} is not allowed on {}", request.method_string(), path)),
        keep_alive, allow);
}

// The provider API of a request, as exchange_.api says: OpenAI's chat completions, embeddings or
// responses, or Anthropic's messages. Order of checks: the fault header's syntax (a test bug, so
// it is reported first), the API key, the body, the rate limits, then the fault itself. Faults
// therefore only hit requests a provider would accept.
asio::awaitable<After> Responder::HandleProvider() {
    const Request& request = *request_;
    BeginExchange();
    const bool anthropic = exchange_.anthropic;

    const auto fault_header = HeaderValue(request, "x-mock-fault");
    ParsedFaultSpec header_fault;
    if (fault_header) {
        header_fault = ParseFaultSpec(*fault_header);
        if (header_fault.ok()) header_fault.error = UnavailableError(header_fault.spec);
        if (!header_fault.ok()) {
            Record(400, *fault_header);
            co_return co_await ReplyProvider(
                400, ProviderMockError(fmt::format("x-mock-fault: {}", header_fault.error)),
                nullptr);
        }
    }

    // Parsed before the key check only so that stats name the model of rejected requests too.
    ParsedBody parsed = ParseBody(exchange_.api, request.body(), exchange_.request_id);
    exchange_.model = std::move(parsed.model);
    exchange_.prompt_tokens = parsed.prompt_tokens;
    exchange_.output_schema = std::move(parsed.output_schema);

    if (!KeyAccepted()) {
        Record(401, {});
        // A named variable: GCC destroys conditional-operator temporaries in a co_await argument
        // twice.
        std::string body = anthropic ? anthropic::InvalidApiKeyBody(exchange_.request_id)
                                     : openai::InvalidApiKeyBody();
        co_return co_await ReplyProvider(401, std::move(body), nullptr);
    }
    if (parsed.status != 0) {
        Record(parsed.status, {});
        co_return co_await ReplyProvider(parsed.status, std::move(parsed.error), nullptr);
    }

    // Rate limits apply to every request a provider would accept, before any fault. The OpenAI
    // APIs share OpenAI's buckets.
    const RateLimitApi api = anthropic ? RateLimitApi::kAnthropic : RateLimitApi::kOpenAi;
    const RateLimitDecision decision = shared_.rate_limits.Admit(api, parsed.cost, exchange_.start);
    if (decision.reason) {
        exchange_.rate_limit_retry_after = decision.retry_after;
        Record(429, {}, RateLimitReasonName(*decision.reason));
        std::string body = anthropic ? anthropic::RateLimitBody(*decision.reason, decision.limit,
                                                                exchange_.request_id)
                                     : openai::RateLimitBody(*decision.reason, decision.limit);
        co_return co_await ReplyProvider(429, std::move(body), nullptr);
    }

    // The header overrides the scenario, even when empty. The scenario snapshot keeps the rule
    // alive until this request is answered.
    if (fault_header) co_return co_await Serve(parsed.request, &header_fault.spec, *fault_header);
    const std::shared_ptr<const Scenario> scenario = shared_.scenarios.Get();
    const ScenarioRule* rule =
        scenario ? scenario->Match(exchange_.model, exchange_.path) : nullptr;
    if (rule == nullptr) co_return co_await Serve(parsed.request, nullptr, {});
    if (std::string unavailable = UnavailableError(rule->fault); !unavailable.empty()) {
        Record(400, rule->fault_text);
        co_return co_await ReplyProvider(
            400, ProviderMockError(fmt::format("scenario fault: {}", unavailable)), nullptr);
    }
    co_return co_await Serve(parsed.request, &rule->fault, rule->fault_text);
}

// With --require-key: whether the request carries the key (Anthropic's clients send x-api-key; a
// bearer token is accepted there too).
bool Responder::KeyAccepted() const {
    const auto& key = shared_.options.require_key;
    if (!key) return true;
    const auto authorization = HeaderValue(*request_, "authorization");
    if (authorization && authorization->starts_with("Bearer ") &&
        authorization->substr(7) == *key) {
        return true;
    }
    const auto api_key = exchange_.anthropic ? HeaderValue(*request_, "x-api-key") : std::nullopt;
    return api_key && *api_key == *key;
}

// A batch line answered as `line.body` POSTed to `line.url` would be, less what only a connection
// has: no rate limits, no log entry, no delays, no stream and no stream faults. The scenario's
// request rules apply, matched by the line's model and url; `status`, `error` and `body` act as
// on a request. Runs within the answer to the request that found the line's batch ended, whose
// exchange it sets aside meanwhile.
batches::Answer Responder::AnswerBatchLine(const batches::Line& line) {
    Exchange outer = std::move(exchange_);
    exchange_ = Exchange{};
    exchange_.arrival = std::chrono::system_clock::now();
    exchange_.start = std::chrono::steady_clock::now();
    exchange_.request_id.assign("req_");
    worker_.AppendId(exchange_.request_id);
    exchange_.path = line.url;
    exchange_.api = ApiOf(line.url).value_or(Api::kChat);
    exchange_.anthropic = exchange_.api == Api::kMessages;
    exchange_.batch_line = true;

    batches::Answer answer;
    answer.request_id = exchange_.request_id;
    ParsedBody parsed = ParseBody(exchange_.api, line.body, ErrorRequestId());
    exchange_.model = std::move(parsed.model);
    exchange_.prompt_tokens = parsed.prompt_tokens;
    exchange_.output_schema = std::move(parsed.output_schema);
    if (parsed.status != 0) {
        answer.status = parsed.status;
        answer.body = std::move(parsed.error);
    } else {
        const std::shared_ptr<const Scenario> scenario = shared_.scenarios.Get();
        const ScenarioRule* rule =
            scenario ? scenario->Match(exchange_.model, exchange_.path) : nullptr;
        const FaultSpec* fault = rule != nullptr ? &rule->fault : nullptr;
        if (fault != nullptr && fault->probability < 1.0 && !worker_.Roll(fault->probability)) {
            fault = nullptr;
        }
        if (std::string unavailable = fault ? UnavailableError(*fault) : std::string();
            !unavailable.empty()) {
            answer.status = 400;
            answer.body = ProviderMockError(fmt::format("scenario fault: {}", unavailable));
        } else {
            std::tie(answer.status, answer.body) = WholeAnswer(parsed.request, fault);
        }
    }
    exchange_ = std::move(outer);
    return answer;
}

// An admitted request under `fault` (nullptr: none), the spec written as `fault_text`: the draw of
// `probability`, the log entry, what comes before the response head (delay, reset, stall, interim
// responses), the answer, and a late response after it.
asio::awaitable<After> Responder::Serve(const ProviderRequest& request, const FaultSpec* fault,
                                        std::string_view fault_text) {
    if (fault != nullptr && fault->probability < 1.0 && !worker_.Roll(fault->probability)) {
        fault = nullptr;
        fault_text = {};
    }
    const std::optional<int> error_status = fault ? fault->ErrorStatus() : std::nullopt;
    const bool silent = fault != nullptr && (fault->stall || fault->reset);
    Record(silent ? 0 : error_status.value_or(200), fault_text);

    if (fault != nullptr) {
        if (fault->delay_headers.count() > 0 && !co_await DelayUnlessClosed(fault->delay_headers)) {
            co_return After::kGone;
        }
        if (fault->reset) {
            downstream_.Reset();
            co_return After::kGone;
        }
        if (fault->stall) {
            co_await downstream_.WaitForPeerClose();
            co_return After::kGone;
        }
        if (fault->close) exchange_.keep_alive = false;
        if (!fault->interim.empty()) {
            const bool sent = co_await SendInterim(*fault);
            if (!sent) co_return After::kGone;
        }
    }
    After after = co_await Answer(request, fault);
    if (after != After::kGone && fault != nullptr && fault->late_response) {
        after = co_await SendLateResponse(*fault->late_response, after);
    }
    co_return after;
}

// Why `spec` cannot be served on this request's API: it names an error the API does not have.
std::string Responder::UnavailableError(const FaultSpec& spec) const {
    if (spec.batch) {
        return "batch_ms, batch_expire and batch_refuse apply to batch creations only (POST "
               "/v1/batches, POST /v1/messages/batches)";
    }
    if (!spec.error) return {};
    const bool available = exchange_.anthropic ? anthropic::HasNamedError(*spec.error)
                                               : openai::HasNamedError(*spec.error);
    if (available) return {};
    return fmt::format("error={} is not available on {}", NamedErrorName(*spec.error),
                       exchange_.anthropic ? "the Anthropic API" : "the OpenAI API");
}

asio::awaitable<After> Responder::ReplyProvider(int status, std::string body,
                                                const FaultSpec* fault) {
    if (fault != nullptr && fault->truncate_body &&
        body.size() > static_cast<std::size_t>(*fault->truncate_body)) {
        body.resize(static_cast<std::size_t>(*fault->truncate_body));
    }
    out_.clear();
    AppendProviderHead(status, kJson, body.size(), fault);
    out_ += body;
    const bool ok = co_await Write();
    if (!ok) co_return After::kGone;
    co_return Continue();
}

asio::awaitable<After> Responder::ReplyPlain(int status, std::string body, bool keep_alive,
                                             std::string_view allow) {
    out_.clear();
    AppendHeadStart(out_, status, kJson, body.size(), keep_alive);
    if (!allow.empty()) fmt::format_to(std::back_inserter(out_), "Allow: {}\r\n", allow);
    out_ += "\r\n";
    out_ += body;
    const bool ok = co_await Write();
    if (!ok) co_return After::kGone;
    co_return keep_alive ? After::kKeepAlive : After::kClose;
}

void Responder::AppendProviderHead(int status, std::string_view content_type,
                                   std::optional<std::size_t> content_length,
                                   const FaultSpec* fault, std::string_view allow) {
    AppendHeadStart(out_, status, content_type, content_length, exchange_.keep_alive);
    // RFC 9110 15.5.6: the methods the path takes (the provider APIs: POST only).
    if (status == 405) fmt::format_to(std::back_inserter(out_), "Allow: {}\r\n", allow);
    // Rate-limit headers describe the buckets as this head leaves, after this request's charge.
    const auto now = std::chrono::steady_clock::now();
    if (exchange_.anthropic) {
        fmt::format_to(std::back_inserter(out_), "request-id: {}\r\n", exchange_.request_id);
        AppendAnthropicRateLimitHeaders(
            out_, shared_.rate_limits.AnthropicSnapshot(exchange_.prompt_tokens, now,
                                                        std::chrono::system_clock::now()));
        if (exchange_.rate_limit_retry_after) {
            AppendRetryAfterHeaders(out_, RateLimitApi::kAnthropic,
                                    *exchange_.rate_limit_retry_after);
        }
        if (fault != nullptr) {
            if (anthropic::SuppressesRetryAfter(*fault)) {
                FaultSpec headers = *fault;
                headers.retry_after_s.reset();
                headers.retry_after_date_s.reset();
                headers.retry_after_ms.reset();
                AppendFaultHeaders(out_, headers, exchange_.arrival);
            } else {
                AppendFaultHeaders(out_, *fault, exchange_.arrival);
            }
        }
        out_ += "\r\n";
        return;
    }
    const auto elapsed = std::chrono::duration_cast<milliseconds>(now - exchange_.start);
    fmt::format_to(std::back_inserter(out_), "x-request-id: {}\r\nopenai-processing-ms: {}\r\n",
                   exchange_.request_id, elapsed.count());
    AppendRateLimitHeaders(out_, shared_.rate_limits.Snapshot(exchange_.prompt_tokens, now));
    if (exchange_.rate_limit_retry_after) {
        AppendRetryAfterHeaders(out_, RateLimitApi::kOpenAi, *exchange_.rate_limit_retry_after);
    }
    if (fault != nullptr) AppendFaultHeaders(out_, *fault, exchange_.arrival);
    out_ += "\r\n";
}

void Responder::BeginExchange() {
    Exchange& exchange = exchange_;
    exchange.arrival = std::chrono::system_clock::now();
    exchange.start = std::chrono::steady_clock::now();
    exchange.request_id.assign("req_");
    worker_.AppendId(exchange.request_id);
    exchange.path = PathOf(request_->target());
    exchange.keep_alive = request_->keep_alive();
    exchange.api = ApiOf(exchange.path).value_or(Api::kChat);
    exchange.anthropic = exchange.api == Api::kMessages;
    exchange.model.clear();
    exchange.output_schema.clear();
    exchange.prompt_tokens = 1;
    exchange.output_tokens = 0;
    exchange.rate_limit_retry_after.reset();
    exchange.batch_line = false;
}

void Responder::Record(int status, std::string_view fault_text, std::string_view rate_limit) {
    const Exchange& exchange = exchange_;
    const Request& request = *request_;
    RequestObservation observation;
    observation.path = exchange.path;
    observation.model = exchange.model;
    observation.t_ms = MillisSinceEpoch(exchange.arrival);
    observation.status = status;
    observation.fault = fault_text;
    observation.rate_limit = rate_limit;
    observation.authorization = HeaderValue(request, "authorization");
    observation.retry_count = HeaderValue(request, "x-stainless-retry-count");
    observation.user_agent = HeaderValue(request, "user-agent");
    observation.content_type = HeaderValue(request, "content-type");
    observation.traceparent = HeaderValue(request, "traceparent");
    observation.body = request.body();
    shared_.stats.Record(observation);
}

std::string Responder::ProviderMockError(std::string_view message) const {
    if (exchange_.anthropic) {
        return anthropic::ErrorEnvelope("mock_error", message, ErrorRequestId());
    }
    return MockError(message);
}

std::string Responder::ProviderErrorBody(int status, std::optional<NamedError> error) const {
    if (exchange_.anthropic) {
        return anthropic::ErrorBody(status, error, exchange_.model, ErrorRequestId());
    }
    return openai::ErrorBody(status, error, exchange_.model);
}

// The request_id of Anthropic's error bodies: none for a batch line, whose result has none.
std::string_view Responder::ErrorRequestId() const {
    return exchange_.batch_line ? std::string_view() : std::string_view(exchange_.request_id);
}

asio::awaitable<bool> Responder::Write() { co_return co_await downstream_.Write(out_); }

asio::awaitable<void> Responder::Sleep(milliseconds duration) {
    timer_.expires_after(duration);
    co_await timer_.async_wait(kAsTuple);
}

asio::awaitable<bool> Responder::DelayUnlessClosed(milliseconds duration) {
    using namespace asio::experimental::awaitable_operators;
    const std::variant<std::monostate, std::monostate> first =
        co_await (Sleep(duration) || downstream_.WaitForPeerClose());
    if (first.index() == 0) co_return true;
    shared_.stats.CountClientClosed(exchange_.model);
    co_return false;
}

// A response padded by event_bytes leaves buffers of its size behind; a connection that goes on
// with small answers should not hold on to them.
void Responder::ReleaseLargeBuffers() {
    constexpr std::size_t kKeep = 1 << 20;
    for (std::string* buffer : {&out_, &held_, &event_}) {
        if (buffer->capacity() > kKeep) std::string().swap(*buffer);
    }
}

}  // namespace switchyard::mock
